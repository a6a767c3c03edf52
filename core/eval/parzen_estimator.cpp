#include "core/eval/parzen_estimator.h"

#include "core/util/finite_values.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <atomic>
#include <mutex>

#include <cmath>
#include <limits>

namespace streetgan {
namespace {

Status checkMatrix(const torch::Tensor& t, const char* name) {
  if (!t.defined() || t.dim() != 2)
    return makeError(std::string("Parzen: the ") + name + " must be a matrix (one flattened image per row)");
  if (t.size(0) == 0) return makeError(std::string("Parzen: the ") + name + " split is empty");
  if (t.size(1) == 0) return makeError(std::string("Parzen: the ") + name + " have zero dimensions");
  if (!allFinite(t))
    return makeError(std::string("Parzen: the ") + name + " contain NaN or Inf values");
  return {};
}

struct Summary {
  double mean, stderr_ll;
};

Summary summarize(const torch::Tensor& column) {
  const double mean = column.mean().item<double>();
  const std::int64_t n = column.size(0);
  const double std = n > 1 ? column.std(/*unbiased=*/true).item<double>() : 0.0;
  return {mean, std / std::sqrt(static_cast<double>(n))};
}

// The buffers of one thread's distance blocks, allocated at the first block and reused: a fresh
// 50 MB float64 block of μ per (x, μ) block pair cost a quarter of the estimator's time in page
// faults (perf, 10,000 samples of 12,288 values).
class BlockWorkspace {
public:
  /// −‖x−μ‖²/(2σ²) of a block of x (float64, with its squared norms) against a block of μ (any
  /// float type; mu_sq: its squared norms as a (1, c) row) for every σ: (m, c, S), a view of the
  /// workspace, valid until the next call.
  torch::Tensor exponents(const torch::Tensor& xc, const torch::Tensor& x_sq, const torch::Tensor& mu_block,
                          const torch::Tensor& mu_sq, const torch::Tensor& scale) {
    const std::int64_t m = xc.size(0), c = mu_block.size(0), s = scale.size(2);
    torch::Tensor mc = reserve(mu_, {c, mu_block.size(1)}, xc);
    mc.copy_(mu_block);
    torch::Tensor products = reserve(products_, {m, c}, xc);
    at::mm_out(products, xc, mc.t());
    // (‖x‖² + ‖μ‖²) − 2·x·μ, in that order, clamped at 0 against rounding.
    torch::Tensor dist = reserve(dist_, {m, c}, xc);
    at::add_out(dist, x_sq, mu_sq).sub_(products, 2.0).clamp_min_(0.0);
    torch::Tensor exponents = reserve(exponents_, {m, c, s}, xc);
    return at::mul_out(exponents, dist.unsqueeze(2), scale);
  }

private:
  // The first `sizes` elements of `buffer`, grown (once) when it is too small.
  static torch::Tensor reserve(torch::Tensor& buffer, at::IntArrayRef sizes, const torch::Tensor& like) {
    std::int64_t numel = 1;
    for (std::int64_t size : sizes) numel *= size;
    if (!buffer.defined() || buffer.numel() < numel) buffer = torch::empty({numel}, like.options());
    return buffer.narrow(0, 0, numel).view(sizes);
  }

  torch::Tensor mu_, products_, dist_, exponents_;
};

// ‖μ‖² of every row, in float64, a block at a time (the rows may be float32).
torch::Tensor squaredNorms(const torch::Tensor& mu, std::int64_t block) {
  const auto f64 = mu.options().dtype(torch::kFloat64);
  torch::Tensor norms = torch::empty({mu.size(0)}, f64);
  const std::int64_t rows_per_block = std::min(block, mu.size(0));
  const torch::Tensor rows = torch::empty({rows_per_block, mu.size(1)}, f64);
  const torch::Tensor squares = torch::empty({rows_per_block, mu.size(1)}, f64);
  for (std::int64_t j0 = 0; j0 < mu.size(0); j0 += block) {
    const std::int64_t c = std::min(block, mu.size(0) - j0);
    const torch::Tensor r = rows.narrow(0, 0, c).copy_(mu.narrow(0, j0, c));
    torch::Tensor square = squares.narrow(0, 0, c);
    torch::Tensor norm = norms.narrow(0, j0, c);
    at::sum_out(norm, at::mul_out(square, r, r), {1});
  }
  return norms;
}

}  // namespace

std::vector<double> ParzenOptions::defaultSigmas() {
  std::vector<double> sigmas;
  for (int i = 0; i < 10; ++i) sigmas.push_back(std::pow(10.0, -1.0 + i / 9.0));
  return sigmas;
}

Result<torch::Tensor> ParzenEstimator::logLikelihoods(const torch::Tensor& samples, const torch::Tensor& points,
                                                      const ParzenOptions& options) {
  try {
    return logLikelihoodsUnchecked(samples, points, options);
  } catch (const c10::Error& e) {  // out of memory on the device, a device that went away
    return makeError(std::string("Parzen: ") + e.what_without_backtrace());
  }
}

Result<torch::Tensor> ParzenEstimator::logLikelihoodsUnchecked(const torch::Tensor& samples,
                                                               const torch::Tensor& points,
                                                               const ParzenOptions& options) {
  if (Status s = checkMatrix(samples, "samples"); !s) return makeError(s.error());
  if (Status s = checkMatrix(points, "points"); !s) return makeError(s.error());
  if (samples.size(1) != points.size(1))
    return makeError("Parzen: samples have " + std::to_string(samples.size(1)) + " dimensions, the points " +
                     std::to_string(points.size(1)));
  if (options.sigmas.empty()) return makeError("Parzen: the σ grid is empty");
  for (double sigma : options.sigmas)
    if (!std::isfinite(sigma) || sigma <= 0)
      return makeError("Parzen: σ " + std::to_string(sigma) + " is not a positive number");
  if (options.block < 1) return makeError("Parzen: the block size must be at least 1");

  torch::NoGradGuard no_grad;
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(options.device);
  // The samples stay as given (float32 images: half the memory); each block is widened to float64
  // when it is used.
  const torch::Tensor mu = samples.to(options.device);
  const torch::Tensor x = points.to(f64);
  const std::int64_t n_mu = mu.size(0), n_x = x.size(0), d = mu.size(1);
  const auto s = static_cast<std::int64_t>(options.sigmas.size());
  const torch::Tensor sigma = torch::tensor(options.sigmas, torch::kFloat64).to(options.device);
  const torch::Tensor scale = (-0.5 / (sigma * sigma)).view({1, 1, s});  // multiplies ‖x−μ‖²
  // log N + d·log(σ√(2π)), per σ
  const torch::Tensor norm = std::log(static_cast<double>(n_mu)) +
                             static_cast<double>(d) * (torch::log(sigma) + 0.5 * std::log(2.0 * M_PI));

  const torch::Tensor mu_sq = squaredNorms(mu, options.block);
  torch::Tensor out = torch::empty({n_x, s}, f64);
  const std::int64_t blocks_x = (n_x + options.block - 1) / options.block;
  const std::int64_t blocks_mu = (n_mu + options.block - 1) / options.block;
  std::atomic<std::int64_t> done{0};
  std::atomic<bool> cancelled{false};
  std::mutex progress_mutex;
  // One block of x against every μ, with a running log-sum-exp per (x, σ).
  auto scoreBlock = [&](std::int64_t block, BlockWorkspace& work) {
    torch::NoGradGuard no_grad_here;  // grad mode is per thread
    const std::int64_t i0 = block * options.block, m = std::min(options.block, n_x - i0);
    const torch::Tensor xc = x.narrow(0, i0, m);
    const torch::Tensor x_sq = (xc * xc).sum(1, /*keepdim=*/true);
    torch::Tensor run_max = torch::full({m, s}, -std::numeric_limits<double>::infinity(), f64);
    torch::Tensor run_sum = torch::zeros({m, s}, f64);
    for (std::int64_t j0 = 0; j0 < n_mu && !cancelled.load(); j0 += options.block) {
      const std::int64_t c = std::min(options.block, n_mu - j0);
      const torch::Tensor e = work.exponents(xc, x_sq, mu.narrow(0, j0, c), mu_sq.narrow(0, j0, c).view({1, c}), scale);
      const torch::Tensor new_max = torch::maximum(run_max, std::get<0>(e.max(1)));
      run_sum = run_sum * torch::exp(run_max - new_max) + e.sub_(new_max.unsqueeze(1)).exp_().sum(1);
      run_max = new_max;
      const std::int64_t finished = done.fetch_add(1) + 1;
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        if (!options.progress(static_cast<double>(finished) / static_cast<double>(blocks_x * blocks_mu)))
          cancelled.store(true);
      }
    }
    out.narrow(0, i0, m).copy_(run_max + torch::log(run_sum) - norm.view({1, s}));
  };
  if (options.device.is_cpu()) {
    // Blocks in parallel, each with single-threaded BLAS: LibTorch's pool is sized by the caller.
    at::parallel_for(0, blocks_x, 1, [&](std::int64_t lo, std::int64_t hi) {
      BlockWorkspace work;
      for (std::int64_t b = lo; b < hi; ++b) scoreBlock(b, work);
    });
  } else {
    BlockWorkspace work;
    for (std::int64_t b = 0; b < blocks_x; ++b) scoreBlock(b, work);
  }
  if (cancelled.load()) return makeError("Parzen: cancelled");
  return out.cpu();
}

Result<ParzenResult> ParzenEstimator::evaluate(const torch::Tensor& samples, const torch::Tensor& valid,
                                               const torch::Tensor& test, const ParzenOptions& options) {
  if (Status s = checkMatrix(valid, "validation points"); !s) return makeError(s.error());
  if (Status s = checkMatrix(test, "test points"); !s) return makeError(s.error());
  // Progress: the validation pass over the whole grid, then the test pass at one σ.
  const double valid_share = static_cast<double>(valid.size(0)) / static_cast<double>(valid.size(0) + test.size(0));
  ParzenOptions first = options;
  if (options.progress) first.progress = [&](double f) { return options.progress(f * valid_share); };
  auto ll = logLikelihoods(samples, valid, first);
  if (!ll) return makeError(ll.error());
  const torch::Tensor means = ll->mean(0);
  ParzenResult result;
  std::int64_t best = 0;
  for (std::size_t i = 0; i < options.sigmas.size(); ++i) {
    const double mean = means[static_cast<std::int64_t>(i)].item<double>();
    result.curve.push_back({options.sigmas[i], mean});
    if (mean > result.curve[static_cast<std::size_t>(best)].mean_ll) best = static_cast<std::int64_t>(i);
  }
  ParzenOptions second = options;
  if (options.progress) second.progress = [&](double f) { return options.progress(valid_share + f * (1 - valid_share)); };
  auto scored = evaluateAt(samples, test, options.sigmas[static_cast<std::size_t>(best)], second);
  if (!scored) return makeError(scored.error());
  scored->curve = std::move(result.curve);
  scored->n_valid = valid.size(0);
  return scored;
}

Result<ParzenResult> ParzenEstimator::evaluateAt(const torch::Tensor& samples, const torch::Tensor& test,
                                                 double sigma, const ParzenOptions& options) {
  ParzenOptions one = options;
  one.sigmas.assign(1, sigma);  // not `= {sigma}`: GCC 14 warns about that (a false -Warray-bounds)
  auto ll = logLikelihoods(samples, test, one);
  if (!ll) return makeError(ll.error());
  const Summary summary = summarize(ll->select(1, 0));
  ParzenResult result;
  result.sigma = sigma;
  result.mean_ll = summary.mean;
  result.stderr_ll = summary.stderr_ll;
  result.n_test = test.size(0);
  result.n_samples = samples.size(0);
  return result;
}

}  // namespace streetgan
