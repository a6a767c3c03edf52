#pragma once
// NearestNeighbourSearch: the exact k nearest reference rows of every query row under the
// Euclidean distance (flattened images or feature rows), and the area downsampling that turns
// images into such rows (shared by the memorisation check, NDB/JSD and the pixel features).
//
// The search runs over bounded blocks of queries and reference rows (never a full n × N matrix):
// candidates are chosen by float32 matrix products (‖r‖² − 2·q·r, a running top-max(64, 2k + 8)
// merged block by block), their distances are then recomputed directly in float64 from the
// differences, and a query is redone in float64 throughout whenever a worst-case bound on the
// float32 rounding could have hidden a nearer row among the ones left out. The answer is
// therefore exact (up to float64 rounding and exact ties). Query blocks run in parallel on
// LibTorch's threads.
// Inputs are CPU tensors (others are copied to the CPU) and are not modified; the results are
// new CPU tensors owned by the caller. Bad input (shapes, sizes, NaN or Inf, k out of range)
// comes back as an Error, never as an exception.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>

namespace streetgan {

struct NearestNeighbours {
  torch::Tensor distances;  ///< (n, k) float64 Euclidean distances, ascending along each row
  torch::Tensor indices;    ///< (n, k) int64 rows of the reference, in the same order
};

class NearestNeighbourSearch {
public:
  /// The k nearest rows of `reference` (N, D) for every row of `queries` (n, D); both float32 or
  /// float64. With `exclude_self` the queries are the reference rows themselves (n = N) and query
  /// i never gets row i back (a duplicate row elsewhere still counts, at distance 0). `block`
  /// bounds the rows of each distance block (queries and reference alike).
  static Result<NearestNeighbours> search(const torch::Tensor& queries, const torch::Tensor& reference, int k,
                                          bool exclude_self = false, std::int64_t block = 1024);

  /// As search(), query i never getting reference row `excluded[i]` back: `excluded` is an (n)
  /// int64 tensor of reference rows, −1 for none (e.g. a subset of the reference rows queried
  /// against the whole set). k may then be at most N − 1.
  static Result<NearestNeighbours> searchExcluding(const torch::Tensor& queries, const torch::Tensor& reference,
                                                   const torch::Tensor& excluded, int k, std::int64_t block = 1024);

  /// As searchExcluding() (`excluded` undefined: none), the candidates chosen on lower-bound rows
  /// instead of the rows: `query_bounds` (n, B) and `reference_bounds` (N, B) must satisfy
  /// ‖E(q) − E(r)‖ ≤ ‖q − r‖ for every pair (for example the projection on orthonormal
  /// components with the norm of the rest appended: PixelPcaFeatures::boundRows). A narrow set of
  /// candidates is measured exactly; a query whose answer the bound cannot prove is searched in
  /// full. The same answer as search(), far less work when B ≪ D and the bound is tight.
  static Result<NearestNeighbours> searchBounded(const torch::Tensor& queries, const torch::Tensor& reference,
                                                 const torch::Tensor& query_bounds,
                                                 const torch::Tensor& reference_bounds, const torch::Tensor& excluded,
                                                 int k, std::int64_t block = 1024);

  /// Images (N, C, H, W), any floating type, to (N, C·size·size) float32 rows, C-major like
  /// flatten(): each output pixel is the mean of its area of the image (adaptive average pooling;
  /// for H and W divisible by `size` that is the mean of each (H/size) × (W/size) block, and an
  /// image already at size × size is copied unchanged). Returns an undefined tensor when `images`
  /// is not a 4-dimensional tensor with non-empty C, H and W, or size < 1: callers check their
  /// images first.
  static torch::Tensor downsampledRows(const torch::Tensor& images, int size = 32);
};

}  // namespace streetgan
