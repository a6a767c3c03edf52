#include "core/eval/ndb_jsd.h"

#include "core/eval/metric_inputs.h"

#include "core/eval/nearest_neighbour_search.h"
#include "core/util/row_norms.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

namespace streetgan {
namespace {

constexpr std::int64_t kChunk = 4096;  // rows per distance chunk

std::string prefixedNdb(const std::string& text) { return "NDB/JSD: " + text; }

std::string ndbNumber(double value) { return MetricInputs::number(value); }
std::string ndbShape(const torch::Tensor& images) { return MetricInputs::shapeText(images); }
Status checkNdbImages(const torch::Tensor& images, const std::string& name) {
  return MetricInputs::checkImages(images, name, "NDB/JSD");
}
Status checkNdbRows(const torch::Tensor& rows, const std::string& name) {
  return MetricInputs::checkRows(rows, name, "NDB/JSD", "one row each");
}

std::vector<std::int64_t> toVectorNdb(const torch::Tensor& counts) {
  const torch::Tensor c = counts.to(torch::kLong).contiguous();
  return std::vector<std::int64_t>(c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel());
}

}  // namespace

torch::Tensor NdbJsd::nearestCentre(const torch::Tensor& rows, const torch::Tensor& centres) {
  const torch::Tensor c = centres.to(torch::kFloat64).contiguous();
  const torch::Tensor c_sq = c.pow(2).sum(1).view({1, c.size(0)});
  const std::int64_t n = rows.size(0);
  torch::Tensor out = torch::empty({n}, torch::kLong);
  // At least one chunk per thread; each chunk single-threaded underneath (BLAS included).
  const std::int64_t threads = std::max(1, at::get_num_threads());
  const std::int64_t chunk = std::max<std::int64_t>(1, std::min(kChunk, (n + threads - 1) / threads));
  at::parallel_for(0, (n + chunk - 1) / chunk, 1, [&](std::int64_t lo, std::int64_t hi) {
    torch::NoGradGuard no_grad_here;
    for (std::int64_t b = lo; b < hi; ++b) {
      const std::int64_t i0 = b * chunk, m = std::min(chunk, n - i0);
      // ‖x − c‖² less ‖x‖² (the same for every centre): ‖c‖² − 2·x·c; argmin takes the first
      // minimum.
      const torch::Tensor key = torch::addmm(c_sq, rows.narrow(0, i0, m).to(torch::kFloat64), c.t(), 1.0, -2.0);
      out.narrow(0, i0, m).copy_(key.argmin(1));
    }
  });
  return out;
}

torch::Tensor NdbJsd::lloyd(const torch::Tensor& rows, torch::Tensor centres, int iterations, int* moved) {
  torch::NoGradGuard no_grad;
  centres = centres.to(torch::kFloat64).contiguous();
  const std::int64_t k = centres.size(0), n = rows.size(0);
  torch::Tensor previous;
  *moved = 0;
  for (int it = 0; it < iterations; ++it) {
    const torch::Tensor assignment = nearestCentre(rows, centres);
    if (previous.defined() && torch::equal(assignment, previous)) break;  // converged
    torch::Tensor sums = torch::zeros_like(centres);
    for (std::int64_t i = 0; i < n; i += kChunk) {
      const std::int64_t b = std::min(kChunk, n - i);
      sums.index_add_(0, assignment.narrow(0, i, b), rows.narrow(0, i, b).to(torch::kFloat64));
    }
    const torch::Tensor counts = torch::bincount(assignment, {}, k).to(torch::kFloat64).unsqueeze(1);
    centres = torch::where(counts > 0, sums / counts.clamp_min(1.0), centres);  // empty: keep the centre
    previous = assignment;
    ++*moved;
  }
  return centres;
}

torch::Tensor NdbJsd::initialCentres(const torch::Tensor& rows, int bins, std::uint64_t seed) {
  if (!rows.defined() || rows.dim() != 2 || rows.size(0) == 0 || rows.size(1) == 0 || bins < 1 || bins > rows.size(0))
    return {};
  try {
    torch::NoGradGuard no_grad;
    // Float and double rows are read as they are; half and bfloat16 widened to float, others to
    // double (both exactly).
    torch::Tensor x = rows.cpu();
    if (x.scalar_type() == torch::kFloat16 || x.scalar_type() == torch::kBFloat16)
      x = x.to(torch::kFloat32);
    else if (x.scalar_type() != torch::kFloat32 && x.scalar_type() != torch::kFloat64)
      x = x.to(torch::kFloat64);
    x = x.contiguous();
    const std::int64_t n = x.size(0);
    at::Generator generator = at::detail::createCPUGenerator(seed);
    torch::Tensor centres = torch::empty({bins, x.size(1)}, torch::kFloat64);
    std::int64_t chosen = torch::randint(n, {1}, generator, torch::kLong).item<std::int64_t>();
    centres[0].copy_(x[chosen].to(torch::kFloat64));
    torch::Tensor closest = squaredRowDistances(x, centres[0]);
    for (int c = 1; c < bins; ++c) {
      const torch::Tensor cumulative = closest.cumsum(0);
      const double total = cumulative[n - 1].item<double>();
      if (total > 0) {  // the first row whose cumulative weight exceeds u ∈ [0, total): never a zero weight
        double u = torch::rand({1}, generator, torch::kFloat64).item<double>() * total;
        if (u >= total) u = std::nextafter(total, 0.0);
        chosen = torch::searchsorted(cumulative, torch::full({1}, u, torch::kFloat64), false, /*right=*/true)
                     .item<std::int64_t>();
        chosen = std::min(chosen, n - 1);
      } else {  // every row is a centre already: fewer distinct rows than bins
        chosen = torch::randint(n, {1}, generator, torch::kLong).item<std::int64_t>();
      }
      centres[c].copy_(x[chosen].to(torch::kFloat64));
      squaredRowDistances(x, centres[c], closest);
    }
    return centres;
  } catch (const c10::Error&) {  // out of memory
    return {};
  }
}

Result<torch::Tensor> NdbJsd::kmeans(const torch::Tensor& rows, const torch::Tensor& initial_centres, int iterations) {
  if (Status s = checkNdbRows(rows, "rows"); !s) return makeError(s.error());
  if (Status s = checkNdbRows(initial_centres, "initial centres"); !s) return makeError(s.error());
  if (rows.size(1) != initial_centres.size(1))
    return makeError(prefixedNdb("the rows have " + std::to_string(rows.size(1)) + " values, the centres " +
                              std::to_string(initial_centres.size(1))));
  if (iterations < 0) return makeError(prefixedNdb("iterations must be at least 0, got " + std::to_string(iterations)));
  try {
    int moved = 0;
    return lloyd(rows.cpu(), initial_centres.cpu(), iterations, &moved);
  } catch (const c10::Error& e) {
    return makeError(prefixedNdb(e.what_without_backtrace()));
  }
}

Result<torch::Tensor> NdbJsd::assign(const torch::Tensor& rows, const torch::Tensor& centres) {
  if (Status s = checkNdbRows(rows, "rows"); !s) return makeError(s.error());
  if (Status s = checkNdbRows(centres, "centres"); !s) return makeError(s.error());
  if (rows.size(1) != centres.size(1))
    return makeError(prefixedNdb("the rows have " + std::to_string(rows.size(1)) + " values, the centres " +
                              std::to_string(centres.size(1))));
  try {
    return nearestCentre(rows.cpu(), centres.cpu());
  } catch (const c10::Error& e) {
    return makeError(prefixedNdb(e.what_without_backtrace()));
  }
}

double NdbJsd::upperNormalQuantile(double tail) {
  if (!(tail > 0 && tail < 1)) return std::numeric_limits<double>::quiet_NaN();
  // P(Z > x) = ½·erfc(x/√2) falls from 1 to 0 over [−40, 40] (it underflows past 38.5).
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    if (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail)
      lo = mid;  // the quantile lies above mid
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

double NdbJsd::jensenShannon(const std::vector<double>& p, const std::vector<double>& q) {
  double kl_p = 0, kl_q = 0;
  for (std::size_t i = 0; i < p.size() && i < q.size(); ++i) {
    const double m = 0.5 * (p[i] + q[i]);
    if (p[i] > 0) kl_p += p[i] * std::log(p[i] / m);
    if (q[i] > 0) kl_q += q[i] * std::log(q[i] / m);
  }
  return std::max(0.0, 0.5 * kl_p + 0.5 * kl_q);
}

Result<NdbJsdResult> NdbJsd::evaluate(const torch::Tensor& samples, const torch::Tensor& train,
                                      const NdbJsdOptions& options) {
  if (options.size < 1)
    return makeError(prefixedNdb("the image size must be at least 1, got " + std::to_string(options.size)));
  if (Status s = checkNdbImages(samples, "samples"); !s) return makeError(s.error());
  if (Status s = checkNdbImages(train, "training images"); !s) return makeError(s.error());
  if (samples.sizes().slice(1) != train.sizes().slice(1))
    return makeError(prefixedNdb("the samples are " + ndbShape(samples) + ", the training images " + ndbShape(train)));
  if (options.bins >= 1 && train.size(0) < options.bins)
    return makeError(prefixedNdb("needs at least " + std::to_string(options.bins) + " training images for " +
                              std::to_string(options.bins) + " bins, got " + std::to_string(train.size(0))));
  const torch::Tensor sample_rows = NearestNeighbourSearch::downsampledRows(samples, options.size);
  const torch::Tensor train_rows = NearestNeighbourSearch::downsampledRows(train, options.size);
  if (!sample_rows.defined() || !train_rows.defined())
    return makeError(prefixedNdb("out of memory downsampling the images"));
  return evaluateRows(sample_rows, train_rows, options);
}

Result<NdbJsdResult> NdbJsd::evaluateRows(const torch::Tensor& sample_rows, const torch::Tensor& train_rows,
                                          const NdbJsdOptions& options) {
  if (options.bins < 1)
    return makeError(prefixedNdb("the number of bins must be at least 1, got " + std::to_string(options.bins)));
  if (options.iterations < 0)
    return makeError(prefixedNdb("iterations must be at least 0, got " + std::to_string(options.iterations)));
  if (!std::isfinite(options.alpha) || options.alpha <= 0 || options.alpha >= 1)
    return makeError(prefixedNdb("alpha must be in (0, 1), got " + ndbNumber(options.alpha)));
  if (Status s = checkNdbRows(sample_rows, "samples"); !s) return makeError(s.error());
  if (Status s = checkNdbRows(train_rows, "training images"); !s) return makeError(s.error());
  if (sample_rows.size(1) != train_rows.size(1))
    return makeError(prefixedNdb("the sample rows have " + std::to_string(sample_rows.size(1)) +
                              " values, the training rows " + std::to_string(train_rows.size(1))));
  const int k = options.bins;
  const std::int64_t n_train = train_rows.size(0), n_samples = sample_rows.size(0);
  if (n_train < k)
    return makeError(prefixedNdb("needs at least " + std::to_string(k) + " training images for " + std::to_string(k) +
                              " bins, got " + std::to_string(n_train)));
  NdbJsdResult result;
  result.bins = k;
  result.n_train = n_train;
  result.n_samples = n_samples;
  result.z_critical = upperNormalQuantile(options.alpha / 2);
  try {
    torch::NoGradGuard no_grad;
    const torch::Tensor train = train_rows.cpu(), samples = sample_rows.cpu();
    const torch::Tensor initial = initialCentres(train, k, options.seed);
    if (!initial.defined()) return makeError(prefixedNdb("out of memory choosing the initial centres"));
    result.centres = lloyd(train, initial, options.iterations, &result.lloyd_iterations);
    result.train_counts = toVectorNdb(torch::bincount(nearestCentre(train, result.centres), {}, k));
    result.sample_counts = toVectorNdb(torch::bincount(nearestCentre(samples, result.centres), {}, k));
  } catch (const c10::Error& e) {  // out of memory
    return makeError(prefixedNdb(e.what_without_backtrace()));
  }
  const auto nt = static_cast<double>(n_train), ns = static_cast<double>(n_samples);
  for (int b = 0; b < k; ++b) {
    const auto ct = static_cast<double>(result.train_counts[std::size_t(b)]);
    const auto cs = static_cast<double>(result.sample_counts[std::size_t(b)]);
    const double p1 = ct / nt, p2 = cs / ns, pooled = (ct + cs) / (nt + ns);
    const double se = std::sqrt(pooled * (1 - pooled) * (1 / nt + 1 / ns));
    const double z = se > 0 ? (p1 - p2) / se : 0.0;
    result.train_proportions.push_back(p1);
    result.sample_proportions.push_back(p2);
    result.z.push_back(z);
    result.significant.push_back(std::fabs(z) > result.z_critical);
    result.ndb += result.significant.back() ? 1 : 0;
  }
  result.ndb_fraction = static_cast<double>(result.ndb) / k;
  result.jsd = jensenShannon(result.train_proportions, result.sample_proportions);
  return result;
}

}  // namespace streetgan
