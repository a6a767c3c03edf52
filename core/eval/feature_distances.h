#pragma once
// FeatureDistances: two distances between the feature vectors of real and generated images.
//  - Fréchet distance (FID when the features are Inception's; Heusel et al. 2017):
//    ‖μr − μg‖² + tr(Σr + Σg − 2 (Σr^½ Σg Σr^½)^½), covariances with n − 1, computed in float64.
//    The matrix square roots come from symmetric eigendecompositions (eigenvalues below zero,
//    rounding noise, count as zero), never from an iteration that may not converge.
//  - Kernel distance (KID; Bińkowski et al. 2018): the unbiased MMD² with the cubic polynomial
//    kernel k(x, y) = (xᵀy / d + 1)³, averaged over random subsets of both sets (drawn without
//    replacement, one draw per subset and side, from a seeded generator), with its standard
//    deviation over the subsets. When the three kernel matrices of all rows fit in 128 MiB, cost
//    less than the subsets' own products and hold no overflow, they are computed once and each
//    subset's sums read from them (cᵀKc with its row counts); otherwise each subset takes its own
//    three products.
// Inputs are (n, d) rows on any device, read in float64 on the CPU; nothing is kept. Bad input
// (not a matrix, dimensions that differ, too few rows, NaN or Inf) comes back as an Error.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace streetgan {

struct KernelDistanceOptions {
  std::int64_t subset_size = 1000;  ///< rows per subset (fewer when a set has fewer rows)
  int subsets = 100;                ///< number of subsets averaged
  std::uint64_t seed = 0;           ///< the subsets' draws
};

struct KernelDistanceResult {
  double mean = 0;    ///< mean MMD² over the subsets
  double stddev = 0;  ///< its standard deviation over the subsets (n − 1)
  std::int64_t subset_size = 0;
  int subsets = 0;
};

class FeatureDistances {
public:
  /// The Fréchet distance between the Gaussians fitted to `real` and `fake` (each ≥ 2 rows).
  static Result<double> frechet(const torch::Tensor& real, const torch::Tensor& fake);

  /// The kernel distance over subsets drawn as `options` says.
  static Result<KernelDistanceResult> kernel(const torch::Tensor& real, const torch::Tensor& fake,
                                             const KernelDistanceOptions& options = {});

  /// The subsets kernel() uses: `subsets` rows of `size` distinct indices below `n`, (subsets,
  /// size) int64, the same for the same arguments.
  static torch::Tensor subsetIndices(std::int64_t n, std::int64_t size, int subsets, std::uint64_t seed);

  /// The unbiased MMD² of each subset pair: rows `real_subsets[s]` of `real` against rows
  /// `fake_subsets[s]` of `fake` (both (subsets, m) int64, m ≥ 2).
  static Result<std::vector<double>> kernelOnSubsets(const torch::Tensor& real, const torch::Tensor& fake,
                                                     const torch::Tensor& real_subsets,
                                                     const torch::Tensor& fake_subsets);
};

}  // namespace streetgan
