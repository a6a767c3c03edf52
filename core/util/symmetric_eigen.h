#pragma once
// SymmetricEigen: the largest eigenpairs of a real symmetric float64 matrix, and XᵀX for a tall X.
// Both call LAPACK/BLAS directly (dsyevr's relatively robust representations for a subset of the
// spectrum, dsyrk for half the products of a full matrix product) when the process has them, as
// LibTorch's own CPU build does, and fall back to LibTorch (linalg_eigh on the whole spectrum, mm)
// where it does not: the same figures either way, to rounding. The caller owns the tensors;
// LAPACK failures come back as an Error, LibTorch's own (out of memory) as c10::Error.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>

namespace streetgan {

struct EigenPairs {
  torch::Tensor values;   ///< (k,) float64, largest first
  torch::Tensor vectors;  ///< (d, k) float64, unit columns in the order of `values`
};

class SymmetricEigen {
public:
  /// The k largest eigenvalues of the symmetric (d, d) matrix (both triangles filled; 1 ≤ k ≤ d)
  /// and their eigenvectors.
  static Result<EigenPairs> largest(const torch::Tensor& symmetric, std::int64_t k);

  /// XᵀX (d, d) of a (n, d) float64 matrix, both triangles filled; rows in a fixed number of
  /// blocks on LibTorch's threads, their products added in block order (the result does not depend
  /// on the number of threads).
  static torch::Tensor gram(const torch::Tensor& x);

  /// Whether dsyevr and dsyrk were found (benchmarks say which path they timed).
  static bool usesLapack();
};

}  // namespace streetgan
