#pragma once
// squaredRowNorms: ‖row‖² of each row of a CPU matrix, in float64, in one parallel pass (never a
// float64 copy of the whole matrix). A float or double row is summed on one thread in a fixed
// order, so its norm is the same bits on any number of threads; other types go through LibTorch, a
// chunk of rows at a time. A row holding NaN or Inf gets a NaN or Inf norm, so the norms also
// check the values. squaredRowDistances does the same for ‖row − point‖², and squaredDistanceOf is
// the one sum both (and the exact nearest-neighbour distances) use.
#include <torch/types.h>

#include <cstdint>

namespace streetgan {

/// (rows,) float64 norms² of a (rows, cols) CPU matrix of any floating type.
torch::Tensor squaredRowNorms(const torch::Tensor& rows);

/// ‖row − point‖² in float64 for each row of a contiguous (rows, cols) float or double CPU matrix,
/// `point` a contiguous (cols,) float64 tensor. With `nearest_so_far` ((rows,) float64) given, each
/// of its entries becomes the smaller of itself and that row's distance, and it is returned.
torch::Tensor squaredRowDistances(const torch::Tensor& rows, const torch::Tensor& point,
                                  torch::Tensor nearest_so_far = {});

/// Σ (a[i] − b[i])² over d values, in float64: four running sums (independent additions the
/// compiler can overlap) added in a fixed order, so the same bits wherever it runs.
template <class A, class B>
double squaredDistanceOf(const A* a, const B* b, std::int64_t d) {
  double s[4] = {0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 4 <= d; k += 4)
    for (int u = 0; u < 4; ++u) {
      const double diff = static_cast<double>(a[k + u]) - static_cast<double>(b[k + u]);
      s[u] += diff * diff;
    }
  for (; k < d; ++k) {
    const double diff = static_cast<double>(a[k]) - static_cast<double>(b[k]);
    s[0] += diff * diff;
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace streetgan
