#pragma once
// ManifoldMetrics: precision and recall (Kynkäänniemi et al. 2019) and density and coverage
// (Naeem et al. 2020) of generated feature vectors against real ones, from k-nearest-neighbour
// balls: each real row's ball reaches its k-th nearest other real row (the same for generated
// rows). Precision: the share of generated rows inside some real ball. Recall: the share of real
// rows inside some generated ball. Density: how many real balls hold a generated row, on average,
// over k. Coverage: the share of real balls that hold at least one generated row.
// Distances are Euclidean in float64, from products computed in tiles of block × block rows
// (never the whole real × generated matrix at once), each tile tallied in one pass; "inside" is
// strictly closer than the radius, as the papers' code, tested on the squared distance against the
// smallest square whose root reaches the radius (the same answers, no square roots). The figures
// do not depend on the number of threads. Inputs are (n, d) rows, read on the CPU; nothing is
// kept. Bad input comes back as an Error.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>

namespace streetgan {

struct ManifoldMetricsOptions {
  int k = 5;                  ///< the neighbour that sets each ball's radius
  std::int64_t block = 1024;  ///< rows per side of a distance tile (at least 256) and of the neighbour searches' blocks
};

struct ManifoldMetricsResult {
  double precision = 0;
  double recall = 0;
  double density = 0;
  double coverage = 0;
  int k = 0;
};

class ManifoldMetrics {
public:
  /// All four figures; each set needs more than k rows.
  static Result<ManifoldMetricsResult> compute(const torch::Tensor& real, const torch::Tensor& fake,
                                               const ManifoldMetricsOptions& options = {});
};

}  // namespace streetgan
