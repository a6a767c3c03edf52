#pragma once
// QualitySuite: every quality metric of core/eval on one set of generated images against
// training images, as one QualityEvaluation (the figures named by quality_figure::):
//  - sliced Wasserstein distance on Laplacian-pyramid patches (SlicedWasserstein);
//  - MS-SSIM diversity of the samples, beside the same figure for training images (MsSsim);
//  - NDB and JSD over k-means bins of the training images (NdbJsd);
//  - FID, KID and precision/recall/density/coverage in a feature space: a TorchScript network's
//    (NetworkFeatures) when given, else PixelPcaFeatures fitted on the training images;
//  - the memorisation check: copy rate and nearest-neighbour ratios (MemorisationCheck).
// Images are (N, 3, S, S) float32 in [-1, 1] on the CPU, not kept. Each metric's seconds are
// recorded. A metric that needs more images than given is an Error naming it and the counts, as
// is any bad input; `progress` is told each stage before it starts and may cancel (an Error
// "cancelled"), so nothing is half-computed.
#include "core/config/train_config.h"
#include "core/eval/feature_distances.h"
#include "core/eval/manifold_metrics.h"
#include "core/eval/memorisation.h"
#include "core/eval/ms_ssim.h"
#include "core/eval/ndb_jsd.h"
#include "core/eval/pixel_pca_features.h"
#include "core/runs/quality_evaluation_file.h"
#include "core/eval/sliced_wasserstein.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

namespace streetgan {

class NetworkFeatures;

struct QualitySuiteOptions {
  /// The metrics to compute, by the names of kMetricNames; all by default.
  std::set<std::string> metrics = {kMetricNames.begin(), kMetricNames.end()};
  std::uint64_t seed = 0;  ///< every random part (patches, projections, pairs, bins, subsets) derives from it
  SlicedWassersteinOptions sliced_wasserstein;
  MsSsimDiversityOptions diversity;
  NdbJsdOptions ndb;
  PixelPcaOptions pixel_features;
  KernelDistanceOptions kernel;
  ManifoldMetricsOptions manifold;
  MemorisationOptions memorisation;
  const NetworkFeatures* network = nullptr;  ///< the feature space; nullptr: pixel PCA (not owned)
  /// Told each stage by name before it starts, with its index and the number of stages; false
  /// cancels.
  std::function<bool(const std::string& stage, int done, int total)> progress;
  /// Asked often, also inside the sliced Wasserstein distance and between the features
  /// network's batches; true cancels.
  std::function<bool()> should_stop;
  /// A metric whose needs the images do not meet (NDB's bins, PRDC's k, a feature space's size)
  /// is left out with a note instead of failing the whole evaluation (training's live metrics).
  bool skip_unmet = false;

  static constexpr std::array<const char*, 7> kMetricNames = {"swd", "msssim", "ndb", "fid", "kid", "prdc",
                                                               "memorisation"};
  /// "swd,fid" → {"swd", "fid"}; an Error names an unknown item.
  static Result<std::set<std::string>> parseMetricList(const std::string& text);
  /// The options of training's live metrics (`metrics.*` keys): its metrics, its seed, and what a
  /// small data set cannot give left out; an Error names the key.
  static Result<QualitySuiteOptions> forTraining(const TrainConfig& config);
};

class QualitySuite {
public:
  /// The most bytes the images of one evaluation may take (samples and training images, float32):
  /// more is refused before anything is generated or loaded.
  static constexpr std::int64_t kMaxImageBytes = std::int64_t{8} << 30;

  /// Why `n_samples` samples and `n_train` training images of `size` px cannot give the metrics
  /// of `options` (too few for one of them, too many bytes), or nothing: checked before any work.
  static std::optional<std::string> unmet(std::int64_t n_samples, std::int64_t n_train, std::int64_t size,
                                          const QualitySuiteOptions& options);

  static Result<QualityEvaluation> evaluate(const torch::Tensor& samples, const torch::Tensor& train,
                                            const QualitySuiteOptions& options);
};

}  // namespace streetgan
