#pragma once
// LaplacianPatches: the patches of one Laplacian pyramid level, read straight from the images.
// Each image's level is computed alone (its planes stay in the cache; the level of the whole set is
// never made) with the filters and borders of SlicedWasserstein::laplacianPyramid (cv2's pyrDown
// and pyrUp, [1 4 6 4 1]/16, BORDER_REFLECT_101), and its patches copied out in (channel, row,
// column) order: what SlicedWasserstein::patchDescriptors(laplacianPyramid(images)[level]) gives,
// at a fraction of the memory traffic. SlicedWasserstein::compute uses it.
// The object owns a workspace that it reuses from call to call; one object per thread.
// Checking is the caller's: the images, level and positions must be valid (see gather()); a
// violation is a programming error (c10::Error from LibTorch's own checks, or undefined).
#include <torch/types.h>

#include <cstddef>
#include <vector>

namespace streetgan {

class LaplacianPatches {
public:
  /// Writes into `out` ((M, 3·p²), contiguous, the images' dtype) the p×p patches (p odd) of level
  /// `level` of `levels` (0: the images' size; the last level is the Gaussian level itself) of
  /// `images` ((n, 3, S, S), contiguous float32 or float64, S halving evenly through the levels)
  /// centred at `positions` ((M, 3) contiguous int64 rows: image index in `images`, centre row,
  /// centre column, each patch inside its level). Images are processed on LibTorch's threads.
  void gather(const torch::Tensor& images, std::size_t level, std::size_t levels, const torch::Tensor& positions,
              int patch, const torch::Tensor& out);

private:
  std::vector<float> levels_float_;
  std::vector<double> levels_double_;
};

}  // namespace streetgan
