#pragma once
// Bilinear resampling of images through per-image 3×3 inverse transforms, with reflection at the
// borders: what torch::grid_sample(mode bilinear, padding reflection, align_corners false) does
// with affine_grid(S·G_inv·S⁻¹), written with gathers so that it can be differentiated twice (ADA's
// geometric transforms under R1 need the gradient of a gradient, which LibTorch's grid sampler
// lacks). Coordinates are pixels measured from the image's centre.
#include <torch/types.h>

namespace streetgan {

/// `x` (B, C, H, W) resampled: output pixel p takes the input at G_inv[b] · p, both in centred
/// pixel coordinates (x right, y down), reflected into the image; `inverse` is (B, 3, 3).
torch::Tensor reflectedBilinear(const torch::Tensor& x, const torch::Tensor& inverse);

}  // namespace streetgan
