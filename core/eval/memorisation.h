#pragma once
// MemorisationCheck: does the generator copy its training images? Every sample is compared with
// every training image (exact nearest neighbour, L2 between the images downsampled to
// size × size by area averaging). The yardstick is how close training images are to each other:
// for a seeded subset of the training images (all of them when there are fewer), the distance to
// their nearest other training image. A sample counts as a copy when its nearest distance is
// below the `percentile`-th percentile of those distances (numpy's default linear
// interpolation); the copy rate is the share of such samples. Each sample's distance divided by
// the median of the training distances is reported too (about 1 for a sample as novel as a
// training image, near 0 for a copy), with its mean and median. The samples' spread (how far a
// sample lies from its nearest other sample) beside the training images' tells mode collapse.
// Inputs are CPU images (N, 3, H, W) in [-1, 1] (or rows already downsampled); results are new CPU
// tensors owned by the caller. Bad input (no samples, fewer than 2 training images, sizes that
// differ, NaN or Inf, options out of range) comes back as an Error.
#include "core/eval/nearest_neighbour_search.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace streetgan {

struct MemorisationOptions {
  int size = 32;                              ///< images are compared at size × size
  std::int64_t train_self_queries = 10000;    ///< training images whose own nearest neighbour is measured
  double percentile = 1.0;                    ///< threshold percentile of those distances, in [0, 100]
  std::uint64_t seed = 0;                     ///< picks that subset of training images
  int show_nearest = 3;                       ///< nearest training images kept per sample (for viewing)
  std::int64_t spread_queries = 500;          ///< rows of each set whose nearest other row measures its spread
  std::int64_t block = 1024;                  ///< rows per distance block
};

struct MemorisationResult {
  torch::Tensor nearest_index;      ///< (n) int64: each sample's nearest training image
  torch::Tensor nearest_distance;   ///< (n) float64: the L2 distance to it, at size × size
  torch::Tensor nearest_indices;    ///< (n, show_nearest) int64: the nearest training images, nearest first
  torch::Tensor nearest_distances;  ///< (n, show_nearest) float64: their distances
  torch::Tensor ratio;              ///< (n) float64: nearest_distance / train_nn_median
  torch::Tensor train_queries;      ///< (m) int64: the training images measured, ascending
  torch::Tensor train_nn_distance;  ///< (m) float64: their distance to the nearest other training image
  double threshold = 0;             ///< the percentile of train_nn_distance
  double train_nn_median = 0;       ///< the median of train_nn_distance
  double copy_rate = 0;             ///< share of samples with nearest_distance ≤ threshold (exact copies count when it is 0)
  double mean_ratio = 0;
  double median_ratio = 0;
  /// The spread: the median distance of a row to its nearest other row of the same set, for
  /// m = min(samples, training images) rows of each (a seeded draw; nearest-neighbour distances
  /// shrink as a set grows, so both sets count the same), spread_queries of them measured. The
  /// ratio is about 1 when the samples are as varied as training images and falls towards 0 as
  /// the generator collapses onto a few images. NaN when m < 2 or the training spread is 0.
  double sample_spread = 0;
  double train_spread = 0;
  double spread_ratio = 0;
  std::int64_t n_samples = 0;
  std::int64_t n_train = 0;
};

class MemorisationCheck {
public:
  /// Samples and training images (N, C, H, W) with the same C, H and W.
  static Result<MemorisationResult> evaluate(const torch::Tensor& samples, const torch::Tensor& train,
                                             const MemorisationOptions& options = {});
  /// The same on rows already downsampled (downsampledRows(images, options.size)), so that a
  /// large training set can be reduced as it is loaded; options.size is then unused.
  static Result<MemorisationResult> evaluateRows(const torch::Tensor& sample_rows, const torch::Tensor& train_rows,
                                                 const MemorisationOptions& options = {});
  /// The same with lower-bound rows of both sets (PixelPcaFeatures::boundRows at options.size):
  /// the searches choose their candidates on them (NearestNeighbourSearch::searchBounded), the
  /// same figures with far less work.
  static Result<MemorisationResult> evaluateRows(const torch::Tensor& sample_rows, const torch::Tensor& train_rows,
                                                 const torch::Tensor& sample_bounds, const torch::Tensor& train_bounds,
                                                 const MemorisationOptions& options = {});
  /// The k nearest training images of each sample at size × size (the "nearest training images"
  /// view), from images.
  static Result<NearestNeighbours> nearest(const torch::Tensor& samples, const torch::Tensor& train, int k = 3,
                                           int size = 32, std::int64_t block = 1024);
  /// The training images measured for the threshold: `count` of the `n_train` indices drawn
  /// without replacement from `seed` (LibTorch's CPU generator), ascending; all of them when
  /// count ≥ n_train.
  static torch::Tensor trainSubset(std::int64_t n_train, std::int64_t count, std::uint64_t seed);
  /// numpy.percentile(values, q) with its default linear interpolation: sorted x, position
  /// q/100·(m − 1) between the two nearest ranks. `values` must not be empty; q in [0, 100].
  static double percentile(std::vector<double> values, double q);
};

}  // namespace streetgan
