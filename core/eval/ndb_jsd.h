#pragma once
// NdbJsd: the number of statistically different bins (NDB) and the Jensen–Shannon divergence of
// Richardson and Weiss, "On GANs and GMMs" (NeurIPS 2018). The training images, downsampled to
// size × size (area averaging), are split into K cells by k-means (k-means++ initialisation from
// a seed, then Lloyd iterations until no assignment changes or the maximum is reached; a cluster
// that empties keeps its previous centre). Training images and samples are then assigned to the
// nearest centre. Per bin, a two-proportion z-test with the pooled proportion,
// z = (p_train − p_sample) / √(p(1 − p)(1/n_train + 1/n_samples)), marks the bin significant when
// |z| exceeds the two-sided normal quantile for alpha (1.959963984540054 for 0.05); a bin with
// pooled proportion 0 or 1 has z = 0. NDB is the number of significant bins; JSD is that of the
// two bin histograms, natural log (0 ≤ JSD ≤ ln 2), terms with zero probability skipped.
// Size 16 (768 values) by default: the paper bins small images, 100 cells resolve coarse layout
// and colour rather than detail, and k-means over 100k training rows stays cheap.
// Inputs are CPU images (N, 3, H, W) in [-1, 1] or rows already downsampled; results are owned by
// the caller. Bad input (fewer training rows than bins, no samples, sizes that differ, NaN or Inf,
// alpha outside (0, 1)) comes back as an Error.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace streetgan {

struct NdbJsdOptions {
  int bins = 100;          ///< K, the number of k-means cells
  int size = 16;           ///< images are binned at size × size
  int iterations = 100;    ///< the most Lloyd iterations (each: assign, then move the centres)
  std::uint64_t seed = 0;  ///< the k-means++ initialisation
  double alpha = 0.05;     ///< two-sided significance level of each bin's test, in (0, 1)
};

struct NdbJsdResult {
  int bins = 0;
  int ndb = 0;                 ///< the number of significant bins
  double ndb_fraction = 0;     ///< ndb / bins
  double jsd = 0;              ///< natural log
  double z_critical = 0;       ///< the two-sided normal quantile for alpha
  int lloyd_iterations = 0;    ///< the Lloyd iterations that moved the centres
  std::int64_t n_train = 0;
  std::int64_t n_samples = 0;
  std::vector<double> train_proportions;   ///< per bin, summing to 1
  std::vector<double> sample_proportions;  ///< per bin, summing to 1
  std::vector<double> z;                   ///< per bin z statistic
  std::vector<bool> significant;           ///< per bin |z| > z_critical
  std::vector<std::int64_t> train_counts;
  std::vector<std::int64_t> sample_counts;
  torch::Tensor centres;  ///< (K, C·size·size) float64: the cells' centres (viewable as images)
};

class NdbJsd {
public:
  /// Samples and training images (N, C, H, W) with the same C, H and W.
  static Result<NdbJsdResult> evaluate(const torch::Tensor& samples, const torch::Tensor& train,
                                       const NdbJsdOptions& options = {});
  /// The same on rows already downsampled (one image per row, as downsampledRows() makes them);
  /// options.size is then unused. The centres start from initialCentres(train_rows, bins, seed).
  static Result<NdbJsdResult> evaluateRows(const torch::Tensor& sample_rows, const torch::Tensor& train_rows,
                                           const NdbJsdOptions& options = {});

  /// k-means++: the first centre a uniformly drawn row, each next one a row drawn with
  /// probability proportional to its squared distance to the nearest centre so far (uniformly
  /// when every row already coincides with a centre), from LibTorch's CPU generator seeded with
  /// `seed`. (K, D) float64. Returns an undefined tensor unless rows is a non-empty matrix and
  /// 1 ≤ bins ≤ rows.
  static torch::Tensor initialCentres(const torch::Tensor& rows, int bins, std::uint64_t seed);
  /// Lloyd's algorithm from `initial_centres` (K, D): at most `iterations` rounds of assigning
  /// every row to its nearest centre (ties to the lower index) and moving each centre to the mean
  /// of its rows (an empty cluster keeps its centre), stopping early when an assignment equals
  /// the previous one. Returns the final centres, (K, D) float64.
  static Result<torch::Tensor> kmeans(const torch::Tensor& rows, const torch::Tensor& initial_centres, int iterations);
  /// The nearest centre of every row, (N) int64 (ties to the lower index), in float64.
  static Result<torch::Tensor> assign(const torch::Tensor& rows, const torch::Tensor& centres);
  /// x with P(Z > x) = tail for a standard normal Z, tail in (0, 1) (bisection on erfc, to
  /// double precision); NaN outside.
  static double upperNormalQuantile(double tail);
  /// JSD(p, q) = ½KL(p‖m) + ½KL(q‖m), m = (p + q)/2, natural log, zero terms skipped; p and q
  /// are histograms of the same length summing to 1.
  static double jensenShannon(const std::vector<double>& p, const std::vector<double>& q);

private:
  static torch::Tensor nearestCentre(const torch::Tensor& rows, const torch::Tensor& centres);
  static torch::Tensor lloyd(const torch::Tensor& rows, torch::Tensor centres, int iterations, int* moved);
};

}  // namespace streetgan
