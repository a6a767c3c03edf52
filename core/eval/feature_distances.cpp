#include "core/eval/feature_distances.h"

#include "core/util/finite_values.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

namespace streetgan {
namespace {

// The rows as float64 on the CPU, or why they cannot be used.
Result<torch::Tensor> featureRows(const torch::Tensor& rows, const char* name, std::int64_t min_rows) {
  if (!rows.defined() || rows.dim() != 2)
    return makeError(std::string("the ") + name + " features must be a matrix (one feature vector per row)");
  if (rows.size(0) < min_rows)
    return makeError(std::string("needs at least ") + std::to_string(min_rows) + " " + name + " feature vectors, got " +
                     std::to_string(rows.size(0)));
  if (rows.size(1) == 0) return makeError(std::string("the ") + name + " features have zero dimensions");
  torch::Tensor values = rows.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  if (!allFinite(values))
    return makeError(std::string("the ") + name + " features contain NaN or Inf values");
  return values;
}

Status sameDimensions(const torch::Tensor& real, const torch::Tensor& fake) {
  if (real.size(1) != fake.size(1))
    return makeError("the real features have " + std::to_string(real.size(1)) + " dimensions, the generated " +
                     std::to_string(fake.size(1)));
  return {};
}

torch::Tensor covariance(const torch::Tensor& rows, const torch::Tensor& mean) {
  const torch::Tensor centred = rows - mean;
  return torch::mm(centred.t(), centred) / static_cast<double>(rows.size(0) - 1);
}

// A symmetric matrix's square root from its eigendecomposition, negative eigenvalues as zero.
torch::Tensor symmetricSqrt(const torch::Tensor& matrix) {
  auto [values, vectors] = at::linalg_eigh(0.5 * (matrix + matrix.t()), "L");
  return torch::mm(vectors * values.clamp_min(0).sqrt().unsqueeze(0), vectors.t());
}

// The cubic kernel (p / d + 1)³ of a product matrix, elementwise, in place (no n × n temporaries).
torch::Tensor cubicKernel(torch::Tensor products, double d) { return products.div_(d).add_(1).pow_(3); }

// Σ over j of a[i][j] · b[i][j] for each row i (b a matrix of a's shape, or one row for all),
// in a fixed order: the sums do not depend on the threads.
std::vector<double> rowDots(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const torch::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  const double* x = a.data_ptr<double>();
  const double* y = b.data_ptr<double>();
  const std::int64_t rows = a.size(0), cols = a.size(1), b_stride = b.dim() == 1 ? 0 : cols;
  std::vector<double> sums(static_cast<std::size_t>(rows), 0.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) sums[static_cast<std::size_t>(i)] += x[i * cols + j] * y[i * b_stride + j];
  return sums;
}

// Each subset as a count per row (subsets, n): a subset's kernel sum Σ_a Σ_b K[i_a, i_b] is cᵀKc.
torch::Tensor rowCounts(const torch::Tensor& subsets, std::int64_t n) {
  return torch::zeros({subsets.size(0), n}, torch::kFloat64)
      .scatter_add_(1, subsets, torch::ones(subsets.sizes(), torch::kFloat64));
}

// The three kernel matrices of all rows once, and every subset's sums as products with its row
// counts: instead of three products of its own rows per subset (the default 100 subsets of 1,000
// rows from 1,000 samples draw the same rows 100 times). Taken when the matrices fit in 128 MiB
// and cost less than the subsets' own products (not for a few small subsets of many rows).
constexpr double kMaxKernelEntries = 16.0 * (1 << 20);

bool countsPay(double real_rows, double fake_rows, double dims, double subsets, double subset_size) {
  const double entries = real_rows * real_rows + fake_rows * fake_rows + real_rows * fake_rows;
  return entries <= kMaxKernelEntries && entries * (dims + subsets) < 3 * subsets * subset_size * subset_size * dims;
}

// Empty when a kernel entry overflows (huge finite features): a row no subset draws would then
// spoil every subset's sum (0 · Inf), where the subsets' own products never read it.
std::vector<double> kernelByCounts(const torch::Tensor& real, const torch::Tensor& fake, const torch::Tensor& ri,
                                   const torch::Tensor& fi) {
  torch::NoGradGuard no_grad;
  const double d = static_cast<double>(real.size(1)), m = static_cast<double>(ri.size(1));
  const torch::Tensor kxx = cubicKernel(torch::mm(real, real.t()), d), kyy = cubicKernel(torch::mm(fake, fake.t()), d);
  const torch::Tensor kxy = cubicKernel(torch::mm(real, fake.t()), d);
  if (!(torch::isfinite(kxx).all().item<bool>() && torch::isfinite(kyy).all().item<bool>() &&
        torch::isfinite(kxy).all().item<bool>()))
    return {};
  const torch::Tensor cr = rowCounts(ri, real.size(0)), cf = rowCounts(fi, fake.size(0));
  // The unbiased estimator leaves each row's pair with itself out of the XX and YY sums.
  const std::vector<double> xx = rowDots(torch::mm(cr, kxx), cr), xx_self = rowDots(cr, kxx.diagonal());
  const std::vector<double> yy = rowDots(torch::mm(cf, kyy), cf), yy_self = rowDots(cf, kyy.diagonal());
  const std::vector<double> xy = rowDots(torch::mm(cr, kxy), cf);
  std::vector<double> values(xx.size());
  for (std::size_t s = 0; s < values.size(); ++s)
    values[s] = (xx[s] - xx_self[s]) / (m * (m - 1)) + (yy[s] - yy_self[s]) / (m * (m - 1)) - 2 * xy[s] / (m * m);
  return values;
}

}  // namespace

Result<double> FeatureDistances::frechet(const torch::Tensor& real_in, const torch::Tensor& fake_in) {
  auto real = featureRows(real_in, "real", 2);
  if (!real) return makeError("Fréchet distance: " + real.error());
  auto fake = featureRows(fake_in, "generated", 2);
  if (!fake) return makeError("Fréchet distance: " + fake.error());
  if (Status s = sameDimensions(*real, *fake); !s) return makeError("Fréchet distance: " + s.error());
  try {
    const torch::Tensor mu_r = real->mean(0), mu_g = fake->mean(0);
    const torch::Tensor sigma_r = covariance(*real, mu_r), sigma_g = covariance(*fake, mu_g);
    const torch::Tensor root_r = symmetricSqrt(sigma_r);
    const torch::Tensor inner = torch::mm(torch::mm(root_r, sigma_g), root_r);
    const torch::Tensor inner_values = at::linalg_eigvalsh(0.5 * (inner + inner.t()), "L");
    const double trace_root = inner_values.clamp_min(0).sqrt().sum().item<double>();
    const double mean_term = (mu_r - mu_g).pow(2).sum().item<double>();
    const double distance =
        mean_term + sigma_r.trace().item<double>() + sigma_g.trace().item<double>() - 2.0 * trace_root;
    // Rounding can leave a tiny negative for identical sets; the distance itself is never below 0.
    return distance < 0 ? 0.0 : distance;
  } catch (const c10::Error& e) {
    return makeError(std::string("Fréchet distance: ") + e.what_without_backtrace());
  }
}

torch::Tensor FeatureDistances::subsetIndices(std::int64_t n, std::int64_t size, int subsets, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  torch::Tensor indices = torch::empty({subsets, size}, torch::kInt64);
  for (int s = 0; s < subsets; ++s)
    indices[s] = torch::randperm(n, generator, torch::TensorOptions().dtype(torch::kInt64)).slice(0, 0, size);
  return indices;
}

Result<std::vector<double>> FeatureDistances::kernelOnSubsets(const torch::Tensor& real_in,
                                                              const torch::Tensor& fake_in,
                                                              const torch::Tensor& real_subsets,
                                                              const torch::Tensor& fake_subsets) {
  auto real = featureRows(real_in, "real", 2);
  if (!real) return makeError("kernel distance: " + real.error());
  auto fake = featureRows(fake_in, "generated", 2);
  if (!fake) return makeError("kernel distance: " + fake.error());
  if (Status s = sameDimensions(*real, *fake); !s) return makeError("kernel distance: " + s.error());
  if (real_subsets.dim() != 2 || fake_subsets.sizes() != real_subsets.sizes() || real_subsets.size(0) < 1 ||
      real_subsets.size(1) < 2 || !c10::isIntegralType(real_subsets.scalar_type(), false) ||
      !c10::isIntegralType(fake_subsets.scalar_type(), false))
    return makeError("kernel distance: the subsets must be two (subsets, m) integer index matrices of one shape, "
                     "at least one subset, m ≥ 2");
  const torch::Tensor ri = real_subsets.to(torch::kInt64), fi = fake_subsets.to(torch::kInt64);
  if (ri.min().item<std::int64_t>() < 0 || ri.max().item<std::int64_t>() >= real->size(0) ||
      fi.min().item<std::int64_t>() < 0 || fi.max().item<std::int64_t>() >= fake->size(0))
    return makeError("kernel distance: a subset index is outside the feature rows");
  const double d = static_cast<double>(real->size(1));
  const auto m = static_cast<double>(ri.size(1));
  if (countsPay(static_cast<double>(real->size(0)), static_cast<double>(fake->size(0)), d,
                static_cast<double>(ri.size(0)), m)) {
    try {
      std::vector<double> values = kernelByCounts(*real, *fake, ri, fi);
      if (!values.empty()) return values;
    } catch (const c10::Error& e) {
      return makeError(std::string("kernel distance: ") + e.what_without_backtrace());
    }
  }
  std::vector<double> values(static_cast<std::size_t>(ri.size(0)));
  // Σ of the cubic kernel (x·y/d + 1)³ over a product matrix, leaving its diagonal out when asked.
  const auto kernelSum = [d](const torch::Tensor& products, bool off_diagonal) {
    const torch::Tensor p = products.contiguous();
    const double* v = p.data_ptr<double>();
    const std::int64_t rows = p.size(0), cols = p.size(1);
    double sum = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        const double k = v[i * cols + j] / d + 1;
        row += (off_diagonal && i == j) ? 0.0 : k * k * k;
      }
      sum += row;
    }
    return sum;
  };
  try {
    // Subsets in parallel, each on one thread; each subset's value does not depend on the threads.
    at::parallel_for(0, ri.size(0), 1, [&](std::int64_t lo, std::int64_t hi) {
      torch::NoGradGuard no_grad;
      for (std::int64_t s = lo; s < hi; ++s) {
        const torch::Tensor x = real->index_select(0, ri[s]), y = fake->index_select(0, fi[s]);
        // The unbiased estimator leaves the diagonals (a row with itself) out of the XX and YY sums.
        const double xx = kernelSum(torch::mm(x, x.t()), true) / (m * (m - 1));
        const double yy = kernelSum(torch::mm(y, y.t()), true) / (m * (m - 1));
        const double xy = kernelSum(torch::mm(x, y.t()), false) / (m * m);
        values[static_cast<std::size_t>(s)] = xx + yy - 2 * xy;
      }
    });
  } catch (const c10::Error& e) {
    return makeError(std::string("kernel distance: ") + e.what_without_backtrace());
  }
  return values;
}

Result<KernelDistanceResult> FeatureDistances::kernel(const torch::Tensor& real, const torch::Tensor& fake,
                                                      const KernelDistanceOptions& options) {
  if (options.subsets < 1) return makeError("kernel distance: subsets must be at least 1");
  if (options.subset_size < 2) return makeError("kernel distance: the subset size must be at least 2");
  if (!real.defined() || !fake.defined() || real.dim() != 2 || fake.dim() != 2)
    return makeError("kernel distance: the features must be matrices (one feature vector per row)");
  const std::int64_t size = std::min({options.subset_size, real.size(0), fake.size(0)});
  if (size < 2)
    return makeError("kernel distance: needs at least 2 real and 2 generated feature vectors, got " +
                     std::to_string(real.size(0)) + " and " + std::to_string(fake.size(0)));
  const torch::Tensor real_subsets = subsetIndices(real.size(0), size, options.subsets, options.seed);
  const torch::Tensor fake_subsets = subsetIndices(fake.size(0), size, options.subsets, options.seed + 1);
  auto values = kernelOnSubsets(real, fake, real_subsets, fake_subsets);
  if (!values) return makeError(values.error());
  KernelDistanceResult result;
  result.subset_size = size;
  result.subsets = options.subsets;
  double sum = 0;
  for (double v : *values) sum += v;
  result.mean = sum / static_cast<double>(values->size());
  if (values->size() > 1) {
    double squares = 0;
    for (double v : *values) squares += (v - result.mean) * (v - result.mean);
    result.stddev = std::sqrt(squares / static_cast<double>(values->size() - 1));
  }
  return result;
}

}  // namespace streetgan
