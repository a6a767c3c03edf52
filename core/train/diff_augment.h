#pragma once
// DiffAugment (Zhao et al. 2020, "Differentiable Augmentation for Data-Efficient GAN Training"):
// the same random transform applied to every image D sees, real and generated, so D cannot
// memorise the training photographs and G still learns through it (every operation is
// differentiable in the image). The three policies, as the authors' PyTorch code defines them on
// images in [-1, 1]:
//   color: brightness + (u − 0.5), saturation ×2u about the pixel's channel mean, contrast
//          ×(u + 0.5) about the image's mean (u uniform in [0, 1), one per image each);
//   translation: a shift of up to ⌊size/8 + 0.5⌋ pixels each way, zeros shifted in;
//   cutout: a square of ⌊size/2 + 0.5⌋ pixels set to 0, centred anywhere in the image.
// The draws are made apart from the transform (DiffAugmentDraws), so tests pass the same draws to
// a reference, and several ranks draw the whole job's batch and each take their own rows.
#include <torch/types.h>

#include <ATen/core/Generator.h>

#include <string>
#include <vector>

namespace streetgan {

enum class DiffAugmentPolicy { Color, Translation, Cutout };

/// augment.diff's text ("color,translation") as policies, in order; the config checked it.
std::vector<DiffAugmentPolicy> diffAugmentPoliciesOf(const std::string& text);

/// One call's random draws for `rows` images. Unused policies' tensors stay undefined.
struct DiffAugmentDraws {
  torch::Tensor brightness, saturation, contrast;  ///< (rows, 1, 1, 1) float32, uniform in [0, 1)
  torch::Tensor translation_x, translation_y;      ///< (rows, 1, 1) int64 shifts along H and W
  torch::Tensor cutout_x, cutout_y;                ///< (rows, 1, 1) int64 centres along H and W

  /// Rows rank, rank + world, ... (as BatchLoader::setShard places a rank's images), the first n.
  DiffAugmentDraws rowsOf(std::int64_t rank, std::int64_t world, std::int64_t n) const;
};

/// Draws for `rows` images of `height`×`width`, in the policies' order, from `generator` on `device`.
DiffAugmentDraws drawDiffAugment(const std::vector<DiffAugmentPolicy>& policies, std::int64_t rows, std::int64_t height,
                                 std::int64_t width, at::Generator& generator, const c10::Device& device);

/// `x` (B, C, H, W) transformed by each policy in order with `draws` (B rows).
torch::Tensor applyDiffAugment(const torch::Tensor& x, const std::vector<DiffAugmentPolicy>& policies,
                               const DiffAugmentDraws& draws);

}  // namespace streetgan
