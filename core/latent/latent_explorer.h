#pragma once
// LatentExplorer: a generator restored from a checkpoint, for interactive exploration (the
// studio's Explore tab): samples from seeds or latents, walks between keyframes (preview frames
// and export through WalkExporter), latent arithmetic and the walk file. Its header has no
// LibTorch types, so GUI code includes it cheaply: latents are plain float vectors and images
// 8-bit interleaved pixels.
//
// One explorer is shared by worker threads; every call that runs the generator holds an internal
// lock, so calls are safe from any thread and run one at a time. Bad files, sizes and settings
// come back as an Error naming the file or value; nothing here throws.
#include "core/data/image_pixels.h"
#include "core/latent/direction_file.h"
#include "core/train/generator_choice.h"
#include "core/util/result.h"
#include "core/video/video_export_options.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

using Latent = std::vector<float>;

/// A walk as the explorer edits it. With rows × columns > 1 every tile walks through
/// `keys.size()` seeds of its own from `grid_seed` (GridWalk::fromSeedBase) instead of `keys`.
struct WalkPlan {
  std::vector<Latent> keys;
  std::vector<std::optional<std::uint64_t>> seeds;  ///< per key, when it came from a seed
  int frames_per_key = 30;
  std::string mode = "slerp";        ///< slerp | lerp
  std::string easing = "ease-in-out";  ///< linear | ease-in-out | ease-in | ease-out
  bool loop = false;
  int rows = 1, columns = 1;
  std::uint64_t grid_seed = 0;
};

struct ExplorerExportProgress {
  std::int64_t rendered = 0, encoded = 0, total = 0;
};

/// How a photograph is projected (LatentProjectorOptions, docs/explore.md).
struct ProjectionSettings {
  int steps = 500;              ///< Adam steps
  int restarts = 8;             ///< random starts, the best kept
  std::uint64_t seed = 0;       ///< start r is the latent of seed + r
  double learning_rate = 0.05;
  double ms_ssim_weight = 1.0;  ///< weight of (1 − MS-SSIM) beside the pixel error
  double prior_weight = 0.01;   ///< weight of the latent-norm prior
};

struct ProjectionUpdate {
  int step = 0, steps = 0;
  double loss = 0;             ///< the best start's loss at this step
  RgbImage reconstruction;     ///< that start's image
};

struct PhotoProjection {
  Latent latent;
  RgbImage photo;              ///< the photograph as the model sees it (its training crop, its size)
  RgbImage reconstruction;     ///< the image of `latent`
  double loss = 0;
  double pixel_rmse = 0;       ///< root mean squared error in 0..255 units
  double ms_ssim = 0;          ///< 1 is identical
  int restart = 0, steps = 0;
  bool batch_statistics = false;  ///< the BatchNorm mode it was projected (and is to be rendered) in
};

/// One block of G for one sample ("Inside the generator", docs/explore.md).
struct GeneratorLayerView {
  int block = 0;                       ///< 0 is the 4×4 block; the last block makes the image
  int channels = 0, height = 0, width = 0;
  std::vector<float> activations;      ///< channels·height·width: the sample's output after ReLU (tanh: the image)
  std::vector<float> channel_means;    ///< each channel's mean activation for the sample
  std::vector<double> running_mean, running_var;  ///< BatchNorm's running statistics (empty: the last block)
  std::vector<double> batch_mean, batch_var;      ///< the same over the batch rendered (before BatchNorm)
};

struct ChannelAblation {
  int block = 0, channel = 0;  ///< a hidden block's channel, set to zero in the sample
};

struct GeneratorInside {
  RgbImage image;                             ///< the sample, with the ablations
  std::vector<GeneratorLayerView> layers;     ///< every block, the first first
  std::optional<double> discriminator_score;  ///< σ(D(image)): D's probability that it is real; none without D
  bool batch_statistics = false;              ///< the BatchNorm mode it was rendered in
};

class LatentExplorer {
public:
  /// Restores the generator of `checkpoint` on `device` ("cpu", "cuda", "cuda:N").
  static Result<std::shared_ptr<LatentExplorer>> open(const std::string& checkpoint, const std::string& device = "cpu",
                                                      GeneratorChoice generator = GeneratorChoice::Default);
  ~LatentExplorer();
  LatentExplorer(const LatentExplorer&) = delete;
  LatentExplorer& operator=(const LatentExplorer&) = delete;

  const std::string& checkpointPath() const;
  /// "ema" or "raw": which of the checkpoint's generators renders (generator_choice.h).
  const char* generatorName() const;
  /// Whether it renders G's moving average.
  bool rendersAverage() const;
  int nz() const;
  int imageSize() const;
  int channels() const;
  std::int64_t step() const;
  std::int64_t epoch() const;

  /// The latent `streetgan sample --seeds` draws for `seed`.
  Latent latentOfSeed(std::uint64_t seed) const;
  /// `center` plus `spread` × standard normal noise drawn from `seed` (neighbours of a latent).
  Latent neighbour(const Latent& center, double spread, std::uint64_t seed) const;
  /// mean(a) − mean(b) + mean(c).
  Result<Latent> arithmetic(const std::vector<Latent>& a, const std::vector<Latent>& b, const std::vector<Latent>& c) const;

  /// One image per latent (G in eval mode unless batchStatistics()).
  Result<std::vector<RgbImage>> render(const std::vector<Latent>& latents) const;

  /// BatchNorm with each call's batch statistics instead of the running ones (off by default).
  /// Early models often look flat with their running statistics; with batch statistics an image
  /// depends on the others rendered with it (a page of seeds, a batch of walk frames). The model
  /// itself never changes: the running statistics are restored after every call.
  void setBatchStatistics(bool on);
  bool batchStatistics() const;

  /// Checks a walk can be rendered (≥ 2 keys of this model's size, frames_per_key ≥ 1, names).
  Status validate(const WalkPlan& plan) const;
  Result<std::int64_t> frameCount(const WalkPlan& plan) const;
  /// Frames [begin, begin + count) of the walk (grid walks tiled with 2 px padding).
  Result<std::vector<RgbImage>> renderFrames(const WalkPlan& plan, std::int64_t begin, std::int64_t count) const;
  /// Renders and encodes the walk to `path` (a folder for PNG frames); `progress` returning false
  /// cancels, leaving nothing at `path`.
  Status exportWalk(const WalkPlan& plan, const std::string& path, const VideoExportOptions& options,
                    const std::function<bool(const ExplorerExportProgress&)>& progress = {}) const;

  /// The `top` strongest semantic directions of this generator (docs/explore.md): "sefa" (closed
  /// form, instant) or "pca" (principal components of the first block over `samples` latents
  /// drawn from `seed`; `progress` told the share done, false cancels). Kind, rank, strength,
  /// checkpoint and step are filled in; the name is left empty.
  Result<std::vector<LatentDirection>> findDirections(const std::string& method, int top, std::int64_t samples = 10000,
                                                      std::uint64_t seed = 0,
                                                      const std::function<bool(double)>& progress = {}) const;
  /// A labelled direction (InterFaceGAN) from latents marked "has" and "lacks" (at least 10 of
  /// each, this model's size), with its held-out accuracy; the marks are kept in it.
  Result<LatentDirection> labelledDirection(const std::vector<Latent>& has, const std::vector<Latent>& lacks) const;
  /// `direction` less its parts along `others` (conditional editing), unit length.
  static Result<Latent> conditional(const Latent& direction, const std::vector<Latent>& others);

  /// The photograph at `path` as the model saw its training images: the checkpoint's centre crop
  /// (crop_scale × the model's size, black beyond the photograph) at the model's size, with no
  /// shift, flip or noise. An Error names the file and the reason.
  Result<RgbImage> photoAtModelSize(const std::string& path) const;
  /// Places the photograph at `path` in latent space (LatentProjector) in the explorer's current
  /// BatchNorm mode; `progress` is told the best start's loss and image every 10 steps, false
  /// cancels ("projection: cancelled"), and so does `should_stop`, asked before every step.
  /// Holds the explorer for the whole projection.
  Result<PhotoProjection> projectPhoto(const std::string& path, const ProjectionSettings& settings = {},
                                       const std::function<bool(const ProjectionUpdate&)>& progress = {},
                                       const std::function<bool()>& should_stop = {}) const;

  /// G's blocks for `latent`, rendered as the first of a batch with `page` after it (the batch
  /// whose statistics are compared with the running ones, and used in the batch-statistics mode),
  /// with the `ablated` channels of hidden blocks set to zero in the sample (GAN Dissection's
  /// ablation); D's score of the resulting image when the checkpoint has a discriminator.
  Result<GeneratorInside> inside(const Latent& latent, const std::vector<Latent>& page = {},
                                 const std::vector<ChannelAblation>& ablated = {}) const;
  /// Whether the checkpoint has a discriminator (for inside()'s score).
  bool hasDiscriminator() const;

  /// The walk file of `streetgan walk --save-walk` (keys, seeds and settings; not the grid).
  static Status saveWalk(const WalkPlan& plan, const std::string& path);
  static Result<WalkPlan> loadWalk(const std::string& path);

private:
  LatentExplorer();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace streetgan
