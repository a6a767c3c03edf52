#pragma once
// ADA's augmentation pipeline (Karras et al. 2020, "Training Generative Adversarial Networks with
// Limited Data"; StyleGAN2-ADA's AugmentPipe): each operation applied to each image with
// probability p, differentiably, on the device. In the order the paper applies them:
//   blit:  x-flip, 90° rotations, integer translation (up to 1/8 of the side);
//   geom:  isotropic scaling (lognormal, σ 0.2 octaves), rotation before and after anisotropic
//          scaling (each with probability 1 − √(1 − p), uniform in ±180°), anisotropic scaling
//          (σ 0.2), fractional translation (normal, σ 1/8 of the side);
//   color: brightness (normal, σ 0.2), contrast (lognormal, σ 0.5 octaves), luma flip, hue
//          rotation (uniform in ±180°), saturation (lognormal, σ 1 octave).
// The geometric operations compose into one inverse matrix per image, executed as one bilinear
// resampling with reflection at the borders (reflected_bilinear.h); StyleGAN2-ADA's 2× wavelet
// up- and down-sampling around that resampling (against aliasing) is not done here. The colour
// operations compose into one 4×4 matrix per image. The random draws come apart from the
// transform (AdaDraws) so tests can hand the same draws to a reference.
#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <string>

namespace streetgan {

/// Which operations run (strength 1) and which never do.
struct AdaOps {
  bool xflip = false, rotate90 = false, xint = false;                        // blit
  bool scale = false, rotate = false, aniso = false, xfrac = false;         // geom
  bool brightness = false, contrast = false, lumaflip = false, hue = false, saturation = false;  // color
  bool anyGeometric() const { return xflip || rotate90 || xint || scale || rotate || aniso || xfrac; }
  bool anyColor() const { return brightness || contrast || lumaflip || hue || saturation; }
};

/// augment.ada_ops's pipelines: blit, geom, color, bg, bgc (StyleGAN2-ADA's names); the config
/// checked the name.
AdaOps adaOpsNamed(const std::string& name);

/// One call's draws for `rows` images: uniform in [0, 1) and standard normal, a column each.
struct AdaDraws {
  enum Uniform {
    kXflip, kXflipGate, kRotate90, kRotate90Gate, kXintX, kXintY, kXintGate, kScaleGate, kPreRotate, kPreRotateGate,
    kAnisoGate, kPostRotate, kPostRotateGate, kXfracGate, kBrightnessGate, kContrastGate, kLumaflip, kLumaflipGate,
    kHue, kHueGate, kSaturationGate, kUniformColumns
  };
  enum Normal { kScale, kAniso, kXfracX, kXfracY, kBrightness, kContrast, kSaturation, kNormalColumns };
  torch::Tensor uniform;  ///< (rows, kUniformColumns) float32
  torch::Tensor normal;   ///< (rows, kNormalColumns) float32

  /// Rows rank, rank + world, ... (a rank's images in the job), the first n.
  AdaDraws rowsOf(std::int64_t rank, std::int64_t world, std::int64_t n) const;
};

AdaDraws drawAda(std::int64_t rows, at::Generator& generator, const c10::Device& device);

/// `x` (B, C, H, W) in [-1, 1] through the operations of `ops`, each image's with probability `p`
/// (a 0-dim float32 tensor on x's device: no host copy) and `draws` (B rows).
torch::Tensor applyAda(const torch::Tensor& x, const AdaOps& ops, const AdaDraws& draws, const torch::Tensor& p);

}  // namespace streetgan
