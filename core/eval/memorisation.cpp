#include "core/eval/memorisation.h"

#include "core/eval/metric_inputs.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

namespace streetgan {
namespace {

std::string prefixedMemorisation(const std::string& text) { return "memorisation: " + text; }

std::string memorisationNumber(double value) { return MetricInputs::number(value); }
std::string memorisationShape(const torch::Tensor& images) { return MetricInputs::shapeText(images); }
Status checkMemorisationImages(const torch::Tensor& images, const std::string& name) {
  return MetricInputs::checkImages(images, name, "memorisation");
}
Status checkMemorisationRows(const torch::Tensor& rows, const std::string& name) {
  return MetricInputs::checkRows(rows, name, "memorisation", "one downsampled image per row");
}

Status checkMemorisationOptions(const MemorisationOptions& options, std::int64_t n_train) {
  if (options.train_self_queries < 1)
    return makeError(prefixedMemorisation("train_self_queries must be at least 1, got " +
                              std::to_string(options.train_self_queries)));
  if (!std::isfinite(options.percentile) || options.percentile < 0 || options.percentile > 100)
    return makeError(prefixedMemorisation("the percentile must be in [0, 100], got " + memorisationNumber(options.percentile)));
  if (options.show_nearest < 1)
    return makeError(prefixedMemorisation("show_nearest must be at least 1, got " + std::to_string(options.show_nearest)));
  if (options.show_nearest > n_train)
    return makeError(prefixedMemorisation("showing " + std::to_string(options.show_nearest) + " nearest training images needs " +
                              "at least " + std::to_string(options.show_nearest) + " training images, got " +
                              std::to_string(n_train)));
  if (options.block < 1)
    return makeError(prefixedMemorisation("the block size must be at least 1, got " + std::to_string(options.block)));
  if (options.spread_queries < 1)
    return makeError(prefixedMemorisation("spread_queries must be at least 1, got " + std::to_string(options.spread_queries)));
  return {};
}

std::vector<double> toVectorMemorisation(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

double MemorisationCheck::percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(position));
  const std::size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
}

torch::Tensor MemorisationCheck::trainSubset(std::int64_t n_train, std::int64_t count, std::uint64_t seed) {
  if (n_train <= 0 || count <= 0) return torch::empty({0}, torch::kLong);
  if (count >= n_train) return torch::arange(n_train, torch::kLong);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  return std::get<0>(torch::randperm(n_train, generator, torch::kLong).narrow(0, 0, count).sort());
}

namespace {

// The nearest `k` reference rows of each query (never reference row excluded[i] for query i when
// `excluded` is defined), chosen on the bound rows when there are some.
Result<NearestNeighbours> find(const torch::Tensor& queries, const torch::Tensor& reference,
                               const torch::Tensor& query_bounds, const torch::Tensor& reference_bounds,
                               const torch::Tensor& excluded, int k, std::int64_t block) {
  if (query_bounds.defined())
    return NearestNeighbourSearch::searchBounded(queries, reference, query_bounds, reference_bounds, excluded, k, block);
  if (excluded.defined()) return NearestNeighbourSearch::searchExcluding(queries, reference, excluded, k, block);
  return NearestNeighbourSearch::search(queries, reference, k, false, block);
}

// The median distance of `queries` of m rows drawn from `rows` to their nearest other drawn row.
Result<double> spreadOf(const torch::Tensor& rows, const torch::Tensor& bounds, std::int64_t m, std::int64_t queries,
                        std::uint64_t seed, std::int64_t block) {
  const torch::Tensor subset = MemorisationCheck::trainSubset(rows.size(0), m, seed);
  const torch::Tensor drawn = rows.index_select(0, subset);
  const torch::Tensor drawn_bounds = bounds.defined() ? bounds.index_select(0, subset) : torch::Tensor();
  const torch::Tensor asked = MemorisationCheck::trainSubset(m, queries, seed + 1);
  auto found = find(drawn.index_select(0, asked), drawn,
                    drawn_bounds.defined() ? drawn_bounds.index_select(0, asked) : torch::Tensor(), drawn_bounds,
                    asked, 1, block);
  if (!found) return makeError(found.error());
  return MemorisationCheck::percentile(toVectorMemorisation(found->distances.select(1, 0).contiguous()), 50.0);
}

}  // namespace

Result<NearestNeighbours> MemorisationCheck::nearest(const torch::Tensor& samples, const torch::Tensor& train, int k,
                                                     int size, std::int64_t block) {
  if (size < 1) return makeError(prefixedMemorisation("the image size must be at least 1, got " + std::to_string(size)));
  if (Status s = checkMemorisationImages(samples, "samples"); !s) return makeError(s.error());
  if (Status s = checkMemorisationImages(train, "training images"); !s) return makeError(s.error());
  if (samples.sizes().slice(1) != train.sizes().slice(1))
    return makeError(prefixedMemorisation("the samples are " + memorisationShape(samples) + ", the training images " + memorisationShape(train)));
  const torch::Tensor sample_rows = NearestNeighbourSearch::downsampledRows(samples, size);
  const torch::Tensor train_rows = NearestNeighbourSearch::downsampledRows(train, size);
  if (!sample_rows.defined() || !train_rows.defined())
    return makeError(prefixedMemorisation("out of memory downsampling the images"));
  return NearestNeighbourSearch::search(sample_rows, train_rows, k, false, block);
}

Result<MemorisationResult> MemorisationCheck::evaluate(const torch::Tensor& samples, const torch::Tensor& train,
                                                       const MemorisationOptions& options) {
  if (options.size < 1)
    return makeError(prefixedMemorisation("the image size must be at least 1, got " + std::to_string(options.size)));
  if (Status s = checkMemorisationImages(samples, "samples"); !s) return makeError(s.error());
  if (Status s = checkMemorisationImages(train, "training images"); !s) return makeError(s.error());
  if (train.size(0) < 2)
    return makeError(prefixedMemorisation("needs at least 2 training images, got " + std::to_string(train.size(0))));
  if (samples.sizes().slice(1) != train.sizes().slice(1))
    return makeError(prefixedMemorisation("the samples are " + memorisationShape(samples) + ", the training images " + memorisationShape(train)));
  if (Status s = checkMemorisationOptions(options, train.size(0)); !s) return makeError(s.error());
  const torch::Tensor sample_rows = NearestNeighbourSearch::downsampledRows(samples, options.size);
  const torch::Tensor train_rows = NearestNeighbourSearch::downsampledRows(train, options.size);
  if (!sample_rows.defined() || !train_rows.defined())
    return makeError(prefixedMemorisation("out of memory downsampling the images"));
  return evaluateRows(sample_rows, train_rows, options);
}

Result<MemorisationResult> MemorisationCheck::evaluateRows(const torch::Tensor& sample_rows,
                                                           const torch::Tensor& train_rows,
                                                           const MemorisationOptions& options) {
  return evaluateRows(sample_rows, train_rows, torch::Tensor(), torch::Tensor(), options);
}

Result<MemorisationResult> MemorisationCheck::evaluateRows(const torch::Tensor& sample_rows,
                                                           const torch::Tensor& train_rows,
                                                           const torch::Tensor& sample_bounds,
                                                           const torch::Tensor& train_bounds,
                                                           const MemorisationOptions& options) {
  if (sample_bounds.defined() != train_bounds.defined())
    return makeError(prefixedMemorisation("bound rows are needed for both the samples and the training images, or neither"));
  if (Status s = checkMemorisationRows(sample_rows, "samples"); !s) return makeError(s.error());
  if (Status s = checkMemorisationRows(train_rows, "training images"); !s) return makeError(s.error());
  const std::int64_t n = sample_rows.size(0), n_train = train_rows.size(0);
  if (n_train < 2) return makeError(prefixedMemorisation("needs at least 2 training images, got " + std::to_string(n_train)));
  if (sample_rows.size(1) != train_rows.size(1))
    return makeError(prefixedMemorisation("the sample rows have " + std::to_string(sample_rows.size(1)) +
                              " values, the training rows " + std::to_string(train_rows.size(1))));
  if (Status s = checkMemorisationOptions(options, n_train); !s) return makeError(s.error());

  MemorisationResult result;
  result.n_samples = n;
  result.n_train = n_train;
  result.train_queries = trainSubset(n_train, options.train_self_queries, options.seed);
  try {
    torch::NoGradGuard no_grad;
    // The yardstick first (it fails on duplicates): training images to their nearest other one.
    const torch::Tensor train_queries = train_rows.cpu().index_select(0, result.train_queries);
    auto train_nn = find(train_queries, train_rows,
                         train_bounds.defined() ? train_bounds.cpu().index_select(0, result.train_queries) : torch::Tensor(),
                         train_bounds, result.train_queries, 1, options.block);
    if (!train_nn) return makeError(train_nn.error());
    result.train_nn_distance = train_nn->distances.select(1, 0).contiguous();
    const std::vector<double> train_distances = toVectorMemorisation(result.train_nn_distance);
    result.threshold = percentile(train_distances, options.percentile);
    result.train_nn_median = percentile(train_distances, 50.0);
    if (!(result.train_nn_median > 0))
      return makeError(prefixedMemorisation("the median distance of a training image to its nearest other training image is 0 "
                                "(mostly duplicates): the distance ratio is undefined"));
    // The samples: their nearest training images.
    auto samples_nn =
        find(sample_rows, train_rows, sample_bounds, train_bounds, torch::Tensor(), options.show_nearest, options.block);
    if (!samples_nn) return makeError(samples_nn.error());
    result.nearest_indices = samples_nn->indices;
    result.nearest_distances = samples_nn->distances;
    result.nearest_index = samples_nn->indices.select(1, 0).contiguous();
    result.nearest_distance = samples_nn->distances.select(1, 0).contiguous();
    result.copy_rate = (result.nearest_distance <= result.threshold).sum().item<double>() / static_cast<double>(n);
    result.ratio = result.nearest_distance / result.train_nn_median;
    result.mean_ratio = result.ratio.mean().item<double>();
    result.median_ratio = percentile(toVectorMemorisation(result.ratio), 50.0);
    // The spread of each set, at equal counts.
    const std::int64_t m = std::min(n, n_train);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    result.sample_spread = result.train_spread = result.spread_ratio = nan;
    if (m >= 2) {
      const std::int64_t queries = std::min(m, options.spread_queries);
      auto samples_spread = spreadOf(sample_rows.cpu(), sample_bounds.defined() ? sample_bounds.cpu() : sample_bounds, m,
                                     queries, options.seed + 101, options.block);
      if (!samples_spread) return makeError(samples_spread.error());
      auto train_spread = spreadOf(train_rows.cpu(), train_bounds.defined() ? train_bounds.cpu() : train_bounds, m,
                                   queries, options.seed + 202, options.block);
      if (!train_spread) return makeError(train_spread.error());
      result.sample_spread = *samples_spread;
      result.train_spread = *train_spread;
      if (*train_spread > 0) result.spread_ratio = *samples_spread / *train_spread;
    }
  } catch (const c10::Error& e) {  // out of memory
    return makeError(prefixedMemorisation(e.what_without_backtrace()));
  }
  return result;
}

}  // namespace streetgan
