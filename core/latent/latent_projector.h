#pragma once
// LatentProjector: places a photograph in a generator's latent space (GAN inversion by
// optimisation): the latent z whose image G(z) is nearest the photograph. From `restarts` starts
// (start r is latentFromSeed(seed + r)), optimised together with Adam on, per start,
//     ‖G(z) − x‖² / (C·H·W)  +  ms_ssim_weight · (1 − MS-SSIM(G(z), x))  +  prior_weight · (‖z‖/√nz − 1)²
// (the pixel error in [-1, 1]; MS-SSIM as MsSsim::differentiable; the prior keeps z near the shell
// where N(0, I) latents lie, so the latent stays one the model was trained on). The learning rate
// ramps up over the first 5% of the steps and down (cosine) over the last 25%. The start with the
// lowest final loss wins.
//  - BatchNorm: with batch_statistics each start is rendered as its own batch of one (the running
//    statistics are put back afterwards), as LatentExplorer renders a single latent in that mode;
//    otherwise G uses its running statistics and the starts run as one batch.
//  - G's parameters take no gradient during the call (restored after); the model never changes.
// The generator is the caller's and is used on its own device; the caller makes sure nothing else
// uses it during the call. Bad options or images come back as an Error; LibTorch's errors (out of
// memory) are translated; nothing throws.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <functional>

namespace streetgan {

class GeneratorImpl;

struct LatentProjectorProgress {
  int step = 0;            ///< steps done
  int steps = 0;           ///< steps in all
  double best_loss = 0;    ///< the lowest loss among the starts at this step
  torch::Tensor best_image;  ///< (C, H, W) float32 on the CPU in [-1, 1]: that start's image
};

struct LatentProjectorOptions {
  int steps = 500;              ///< Adam steps (1..100000)
  int restarts = 8;             ///< random starts (1..256)
  double learning_rate = 0.05;  ///< Adam's peak learning rate
  double ms_ssim_weight = 1.0;  ///< weight of (1 − MS-SSIM); 0 leaves the pixel error alone
  double prior_weight = 0.01;   ///< weight of the latent-norm prior
  std::uint64_t seed = 0;       ///< start r is latentFromSeed(seed + r)
  bool batch_statistics = false;  ///< BatchNorm with batch statistics (each start its own batch)
  int report_every = 10;        ///< steps between progress calls (and after the last step)
  /// Told the progress; returning false cancels ("projection: cancelled").
  std::function<bool(const LatentProjectorProgress&)> progress;
  /// Asked before every step (a step of many starts takes seconds); true cancels, as above.
  std::function<bool()> should_stop;
};

struct LatentProjection {
  torch::Tensor latent;   ///< (nz) float32 on the CPU
  torch::Tensor image;    ///< (C, H, W) float32 on the CPU, G(latent) in [-1, 1]
  double loss = 0;        ///< the objective above at the latent
  double pixel_rmse = 0;  ///< root mean squared pixel error in [0, 255] units
  double ms_ssim = 0;     ///< MsSsim::pairwise of the image and the photograph (1 is identical)
  int restart = 0;        ///< the start it came from
  int steps = 0;
};

class LatentProjector {
public:
  /// Projects `target` ((C, H, W) or (1, C, H, W), finite, in [-1, 1], G's channels and size).
  static Result<LatentProjection> project(GeneratorImpl& generator, const torch::Tensor& target,
                                          const LatentProjectorOptions& options = {});
  /// The objective per start for latents (R, nz) and their images (R, C, H, W) against `target`
  /// (1, C, H, W): (R). Used by project() and by tests that score random latents the same way.
  static torch::Tensor objective(const torch::Tensor& latents, const torch::Tensor& images, const torch::Tensor& target,
                                 const LatentProjectorOptions& options);
};

}  // namespace streetgan
