#pragma once
// GaussianWindow: MS-SSIM's 11-tap Gaussian window (σ 1.5, normalised), applied separably and
// valid (no padding) to every plane of a (B, K, H, W) tensor: (B, K, H − 10, W − 10).
//  - Rows first, then columns; each tap's product is rounded on its own before it is added, in tap
//    order, so that equal planes filter to equal bits wherever they lie (identical image pairs give
//    an MS-SSIM of exactly 1).
//  - On the CPU in float32 and float64 one fused pass per plane, forward and backward (a LibTorch
//    autograd function: MS-SSIM as a loss keeps its gradient); elsewhere (a GPU, other types) the
//    same sums as LibTorch tensor operations. Both give the same bits on the CPU.
// The caller checks the shape (4-D, H and W ≥ 11); LibTorch's c10::Error otherwise.
#include <torch/types.h>

#include <array>

namespace streetgan {

class GaussianWindow {
public:
  static constexpr int kTaps = 11;
  static constexpr double kSigma = 1.5;

  /// The normalised taps.
  static const std::array<double, kTaps>& taps();
  /// The valid filtering of every plane of x (B, K, H, W); differentiable.
  static torch::Tensor filterValid(const torch::Tensor& x);
  /// The same sums as filterValid by LibTorch tensor operations (any device): the reference.
  static torch::Tensor filterValidByTensorOps(const torch::Tensor& x);
};

}  // namespace streetgan
