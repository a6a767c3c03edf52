#pragma once
// MsSsim: the multi-scale structural similarity of Wang, Simoncelli and Bovik 2003, as
// tf.image.ssim_multiscale computes it, and the MS-SSIM diversity of an image set (Odena et al.
// 2017: the mean MS-SSIM of random pairs of distinct images; lower is more diverse; the same
// figure for pairs of training images is the level to compare with).
//  - Images in [-1, 1] are mapped to [0, 1] and compared with data range L = 1 (the same as
//    [0, 2] with L = 2; the luminance term is not shift-invariant, so [-1, 1] with L = 2 would
//    not be: tf expects non-negative images).
//  - An 11-tap Gaussian window (σ 1.5, normalised; separable, as tf's 2-D softmax kernel), valid
//    filtering (no padding), K1 = 0.01, K2 = 0.03. Per channel and scale: the mean over the map of
//    the contrast-structure term cs, and at the last scale the mean of luminance·cs (tf's ssim).
//  - Between scales a 2×2 average; an odd side first repeats its last row or column (tf's
//    SYMMETRIC padding by 1), so a side s becomes ⌈s/2⌉.
//  - Negative cs and ssim are clamped to 0 before the power (tf's relu). The weights at 5 scales
//    are the standard [0.0448, 0.2856, 0.3001, 0.2363, 0.1333] as they are (they sum to 1.0001,
//    as in tf); with fewer scales the first `scales` of them are renormalised to sum 1. The scale
//    count by default is the most (≤ 5) whose smallest scale is still ≥ 11 px: 2 at 32 px, 3 at
//    64 px, 4 at 128 px, 5 from 161 px (a side s becomes ⌈s/2⌉ at the next scale).
//  - Per image pair the weighted product over scales is taken per channel, then averaged over the
//    channels (as tf).
// In float64, in blocks of pairs. Bad input comes back as an Error; nothing throws. CPU only.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace streetgan {

struct MsSsimDiversityOptions {
  std::int64_t pairs = 1000;  ///< random pairs of distinct images (drawn with replacement)
  std::uint64_t seed = 0;     ///< the draw of the pairs
  /// Asked between blocks of 64 pairs; true stops with an Error "MS-SSIM: cancelled".
  std::function<bool()> should_stop;
};

struct MsSsimDiversity {
  double mean = 0;         ///< mean MS-SSIM over the pairs: lower is more diverse
  double stderr_mean = 0;  ///< its standard error: sample std (n − 1 in the variance) / √n
  std::int64_t pairs = 0;  ///< pairs scored
  int scales = 0;          ///< scales used ("3 scales at 64 px")
  std::int64_t size = 0;   ///< the image side (the smaller of height and width)
};

/// A fixed image prepared once for MsSsim::differentiable(images, target) (a loss against one
/// photograph): per scale the image mapped to [0, 1], the window's means of it and of its square.
struct MsSsimTarget {
  int scales = 0;
  std::vector<torch::Tensor> image;            ///< (1, C, h, w) per scale
  std::vector<torch::Tensor> mean;             ///< the window's mean of the image, per scale
  std::vector<torch::Tensor> mean_of_squares;  ///< the window's mean of its square, per scale
};

class MsSsim {
public:
  static constexpr int kMaxScales = 5;
  static constexpr int kWindow = 11;  ///< taps of the Gaussian window, and the smallest scale

  /// The most scales (≤ 5) for images of this size whose smallest scale is ≥ 11 px; 0 when the
  /// images are below 11 px.
  static int scalesFor(std::int64_t height, std::int64_t width);
  /// The smallest side that `scales` scales need: 11, 21, 41, 81, 161.
  static std::int64_t minimumSize(int scales);
  /// The weights of `scales` scales (1..5): the standard five at 5, else the first `scales` of
  /// them renormalised to sum 1.
  static std::vector<double> weights(int scales);

  /// MS-SSIM of each pair (a[i], b[i]) of images (N, C, H, W) in [-1, 1]: an (N) float64 tensor.
  /// `scales` 0 chooses scalesFor(H, W).
  static Result<torch::Tensor> pairwise(const torch::Tensor& a, const torch::Tensor& b, int scales = 0);

  /// The smallest value a term of differentiable() counts as: the gradient of x^w is infinite at 0.
  static constexpr double kLossFloor = 1e-6;
  /// MS-SSIM of each pair as a loss term: (N) in a's floating-point type and on its device, with
  /// autograd kept, so that (1 − MS-SSIM) can be minimised. The same formula as pairwise(), except
  /// that terms below kLossFloor count as kLossFloor instead of 0. The caller checks the inputs
  /// (finite, one shape, ≥ minimumSize(scales) px); LibTorch's c10::Error otherwise.
  static torch::Tensor differentiable(const torch::Tensor& a, const torch::Tensor& b, int scales = 0);
  /// One image b (1, C, H, W) prepared as the fixed side of differentiable(); `scales` as there.
  static MsSsimTarget prepareTarget(const torch::Tensor& b, int scales = 0);
  /// differentiable(a, b expanded to a's batch), with b's side computed once (the same sums but
  /// for x² + y², whose two window means are added after filtering: equal to rounding).
  static torch::Tensor differentiable(const torch::Tensor& a, const MsSsimTarget& target);

  /// The pairs the diversity scores: (pairs, 2) int64 rows (i, j), i ≠ j, each uniform over the
  /// ordered pairs of distinct images of `images` (≥ 2), drawn from `seed`.
  static torch::Tensor pairIndices(std::int64_t images, std::int64_t pairs, std::uint64_t seed);
  /// Mean MS-SSIM of options.pairs random pairs of distinct images of `images` (N ≥ 2), with its
  /// standard error and the scales used.
  static Result<MsSsimDiversity> diversity(const torch::Tensor& images, const MsSsimDiversityOptions& options = {});
};

}  // namespace streetgan
