#include "core/latent/semantic_directions.h"

#include "core/util/row_norms.h"
#include "core/util/symmetric_eigen.h"
#include "core/model/generator.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace streetgan {
namespace {

constexpr const char* kConv = "main.0";  // the first transposed convolution
constexpr const char* kNorm = "main.1";  // its BatchNorm
// Above this many values per activation row, PCA by subspace iteration (GANSpace's own choice,
// fbpca) instead of a full eigendecomposition: 8,192 values (ngf 64) would take minutes.
constexpr std::int64_t kExactLimit = 4096;
constexpr double kMaxActivationBytes = 2048.0 * (1 << 20);

std::string prefixedDirections(const std::string& text) { return "directions: " + text; }

// The sign that makes the largest component positive, so that a direction is reproducible.
torch::Tensor signFixed(const torch::Tensor& v) {
  const std::int64_t largest = v.abs().argmax().item<std::int64_t>();
  return v[largest].item<double>() < 0 ? -v : v;
}

torch::Tensor unitVector(const torch::Tensor& v) { return v / v.norm(); }

// Σ x² of the rows, their norms added in row order: the same bits on any number of threads, where
// LibTorch's sum splits by the thread count.
double orderedSquareSum(const torch::Tensor& rows) {
  const torch::Tensor norms = squaredRowNorms(rows);
  const double* norm = norms.data_ptr<double>();
  double total = 0;
  for (std::int64_t r = 0; r < norms.size(0); ++r) total += norm[r];
  return total;
}

// The top `k` eigenpairs of a symmetric (d, d) matrix, values descending.
Result<EigenPairs> topPairs(const torch::Tensor& symmetric, std::int64_t k) {
  return SymmetricEigen::largest(0.5 * (symmetric + symmetric.t()), k);
}

// The top `k` right singular vectors of centred rows (N, D) and their squared singular values, by
// subspace iteration with k + 10 columns and 6 power steps (Halko, Martinsson and Tropp 2011),
// the last step a Rayleigh–Ritz on the subspace: exact to rounding when the spectrum has a gap.
// The products with the (N, D) rows run in their type (float32 for a large model's outputs), the
// small factorisations in float64.
Result<EigenPairs> randomisedTop(const torch::Tensor& centred, std::int64_t k, std::uint64_t seed) {
  const std::int64_t columns = std::min<std::int64_t>(k + 10, std::min(centred.size(0), centred.size(1)));
  const auto type = centred.scalar_type();
  at::Generator generator = at::detail::createCPUGenerator(seed);
  torch::Tensor y = torch::mm(centred, torch::randn({centred.size(1), columns}, generator, type)).to(torch::kFloat64);
  for (int step = 0; step < 6; ++step) {
    const torch::Tensor basis = std::get<0>(torch::linalg_qr(y)).to(type);
    y = torch::mm(centred, torch::mm(centred.t(), basis)).to(torch::kFloat64);
  }
  const torch::Tensor q = std::get<0>(torch::linalg_qr(y));
  const torch::Tensor b = torch::mm(q.t().to(type), centred).to(torch::kFloat64);  // (columns, D)
  auto small = topPairs(torch::mm(b, b.t()), k);      // eigenpairs of B Bᵀ: σ² and left vectors
  if (!small) return small;
  const torch::Tensor sigma = small->values.clamp_min(0).sqrt();
  const torch::Tensor right = torch::mm(b.t(), small->vectors) / torch::where(sigma > 0, sigma, torch::ones_like(sigma));
  return EigenPairs{small->values.clamp_min(0), right};
}

}  // namespace

torch::Tensor SemanticDirections::firstWeight(GeneratorImpl& g) {
  const auto params = g.named_parameters();  // the dict owns what find() points to
  const torch::Tensor* weight = params.find(std::string(kConv) + ".weight");
  TORCH_CHECK(weight && weight->dim() == 4, "the generator has no first transposed convolution");
  return weight->detach().to(torch::kCPU, torch::kFloat64);
}

torch::Tensor SemanticDirections::firstBlock(GeneratorImpl& g, const torch::Tensor& latents) {
  torch::NoGradGuard no_grad;
  const torch::Tensor w = firstWeight(g);
  const std::int64_t channels = w.size(1), area = w.size(2) * w.size(3);
  const auto params = g.named_parameters();
  const auto buffers = g.named_buffers();
  const torch::Tensor* gamma = params.find(std::string(kNorm) + ".weight");
  const torch::Tensor* beta = params.find(std::string(kNorm) + ".bias");
  const torch::Tensor* mean = buffers.find(std::string(kNorm) + ".running_mean");
  const torch::Tensor* var = buffers.find(std::string(kNorm) + ".running_var");
  TORCH_CHECK(gamma && beta && mean && var, "the generator's first BatchNorm is missing");
  double eps = 1e-5;
  for (const auto& item : g.named_modules())
    if (item.key() == kNorm)
      if (auto* norm = item.value()->as<torch::nn::BatchNorm2dImpl>()) eps = norm->options.eps();
  const auto column = [&](const torch::Tensor& t) { return t.detach().to(torch::kCPU, torch::kFloat64).view({1, channels, 1}); };
  const torch::Tensor h = torch::mm(latents.to(torch::kCPU, torch::kFloat64), w.flatten(1)).view({-1, channels, area});
  const torch::Tensor normed = (h - column(*mean)) / (column(*var) + eps).sqrt() * column(*gamma) + column(*beta);
  return normed.clamp_min(0).flatten(1);
}

Result<std::vector<FoundDirection>> SemanticDirections::closedForm(const torch::Tensor& first_weight, int top) {
  if (!first_weight.defined() || first_weight.dim() != 4 || first_weight.size(0) < 1)
    return makeError(prefixedDirections("the first layer's weight must be (nz, channels, 4, 4)"));
  const std::int64_t nz = first_weight.size(0);
  if (top < 1 || top > nz) return makeError(prefixedDirections("--top must be 1 to " + std::to_string(nz) + ", got " + std::to_string(top)));
  try {
    torch::NoGradGuard no_grad;
    const torch::Tensor a = first_weight.detach().to(torch::kCPU, torch::kFloat64).flatten(1);  // (nz, C·16) = Aᵀ
    if (!torch::isfinite(a).all().item<bool>()) return makeError(prefixedDirections("the generator's weights hold NaN or Inf"));
    auto pairs = topPairs(torch::mm(a, a.t()), top);  // AᵀA, nz × nz
    if (!pairs) return makeError(prefixedDirections(pairs.error()));
    std::vector<FoundDirection> out;
    for (std::int64_t i = 0; i < top; ++i)
      out.push_back({signFixed(unitVector(pairs->vectors.select(1, i))), pairs->values[i].item<double>()});
    return out;
  } catch (const c10::Error& e) {
    return makeError(prefixedDirections(e.what_without_backtrace()));
  }
}

Result<std::vector<FoundDirection>> SemanticDirections::principalOf(const torch::Tensor& latents,
                                                                    const torch::Tensor& activations, int top) {
  if (!activations.defined() || activations.dim() != 2)
    return makeError(prefixedDirections("the latents and the activations must be matrices with one row per latent"));
  try {
    // A copy to centre in place (principal() hands over outputs it made itself).
    const torch::Tensor copy = activations.size(1) <= kExactLimit ? activations.to(torch::kFloat64, false, true)
                                                                  : activations.clone();
    return principalInPlace(latents, copy, top);
  } catch (const c10::Error& e) {
    return makeError(prefixedDirections(e.what_without_backtrace()));
  }
}

Result<std::vector<FoundDirection>> SemanticDirections::principalInPlace(const torch::Tensor& latents,
                                                                         const torch::Tensor& activations, int top) {
  if (!latents.defined() || !activations.defined() || latents.dim() != 2 || activations.dim() != 2 ||
      latents.size(0) != activations.size(0))
    return makeError(prefixedDirections("the latents and the activations must be matrices with one row per latent"));
  const std::int64_t n = latents.size(0), nz = latents.size(1), d = activations.size(1);
  if (n < nz + 1 || n < 2)
    return makeError(prefixedDirections("principal components need more latents than the latent size (" + std::to_string(nz) +
                              "), got " + std::to_string(n)));
  if (top < 1 || top > std::min(nz, d))
    return makeError(prefixedDirections("--top must be 1 to " + std::to_string(std::min(nz, d)) + ", got " + std::to_string(top)));
  try {
    torch::NoGradGuard no_grad;
    // A large model's outputs stay float32 (principal() makes them so); the rest is float64.
    const bool exact = d <= kExactLimit;
    const torch::Tensor z = latents.to(torch::kFloat64);
    TORCH_CHECK(!exact || activations.scalar_type() == torch::kFloat64, "directions: float64 rows expected");
    const torch::Tensor centred = activations.contiguous();
    centred.sub_(centred.mean(0, true));  // in place: the rows can be gigabytes
    const double total = orderedSquareSum(centred);
    if (!std::isfinite(total)) return makeError(prefixedDirections("the activations hold NaN or Inf"));
    if (!(total > 0)) return makeError(prefixedDirections("the first block's outputs do not vary: no principal components"));
    Result<EigenPairs> pairs = exact ? topPairs(SymmetricEigen::gram(centred), top) : randomisedTop(centred, top, 0x5eed);
    if (!pairs) return makeError(prefixedDirections(pairs.error()));
    // Each axis' projections, regressed on the latents: the latent direction that moves along it.
    const torch::Tensor projections =
        torch::mm(centred, pairs->vectors.to(centred.scalar_type())).to(torch::kFloat64);  // (N, top)
    const torch::Tensor u = std::get<0>(torch::linalg_lstsq(z, projections, /*rcond=*/{}, "gelsd"));
    std::vector<FoundDirection> out;
    for (std::int64_t i = 0; i < top; ++i) {
      const torch::Tensor column = u.select(1, i);
      if (!(column.norm().item<double>() > 0)) return makeError(prefixedDirections("a component does not depend on the latent"));
      out.push_back({signFixed(unitVector(column)), pairs->values[i].item<double>() / total});
    }
    return out;
  } catch (const c10::Error& e) {
    return makeError(prefixedDirections(e.what_without_backtrace()));
  }
}

Result<std::vector<FoundDirection>> SemanticDirections::principal(GeneratorImpl& g, int top,
                                                                  const PrincipalDirectionsOptions& options) {
  if (options.samples < 2 || options.samples > 10000000)
    return makeError(prefixedDirections("--n must be 2 to 10000000 latents, got " + std::to_string(options.samples)));
  if (options.block < 1) return makeError(prefixedDirections("the block must be at least 1 latent"));
  try {
    torch::NoGradGuard no_grad;
    const torch::Tensor w = firstWeight(g);
    const std::int64_t nz = w.size(0), n = options.samples, d = w.size(1) * w.size(2) * w.size(3);
    // The outputs are kept once (float32 above kExactLimit values a row; the exact path also
    // makes a d × d matrix per thread part): bounded before allocating.
    const double bytes = static_cast<double>(n) * static_cast<double>(d) * (d <= kExactLimit ? 8.0 : 4.0) +
                         (d <= kExactLimit ? 5.0 * static_cast<double>(d) * static_cast<double>(d) * 8.0 : 0.0);
    if (bytes > kMaxActivationBytes) {
      const auto fits = static_cast<std::int64_t>(kMaxActivationBytes / (bytes / static_cast<double>(n)));
      return makeError(prefixedDirections("principal components of " + std::to_string(n) + " latents keep " +
                                std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                                " MiB of this model's first-block outputs, above the 2048 MiB allowed: use at most " +
                                std::to_string(fits) + " latents (--n)"));
    }
    if (top < 1 || top > std::min(nz, d))
      return makeError(prefixedDirections("--top must be 1 to " + std::to_string(std::min(nz, d)) + ", got " + std::to_string(top)));
    if (n < nz + 1)
      return makeError(prefixedDirections("--n must be more than the latent size (" + std::to_string(nz) + "), got " +
                                std::to_string(n)));
    at::Generator generator = at::detail::createCPUGenerator(options.seed);
    const torch::Tensor z = torch::randn({n, nz}, generator, torch::kFloat64);
    const torch::Tensor h = torch::empty({n, d}, d <= kExactLimit ? torch::kFloat64 : torch::kFloat32);
    for (std::int64_t i0 = 0; i0 < n; i0 += options.block) {
      const std::int64_t count = std::min(options.block, n - i0);
      h.narrow(0, i0, count).copy_(firstBlock(g, z.narrow(0, i0, count)));
      if (options.progress && !options.progress(0.8 * static_cast<double>(i0 + count) / static_cast<double>(n)))
        return makeError(prefixedDirections("cancelled"));
    }
    return principalInPlace(z, h, top);
  } catch (const c10::Error& e) {
    return makeError(prefixedDirections(e.what_without_backtrace()));
  }
}

Result<LabelledDirection> SemanticDirections::labelled(const torch::Tensor& has, const torch::Tensor& lacks,
                                                       const LabelledDirectionOptions& o) {
  if (!has.defined() || !lacks.defined() || has.dim() != 2 || lacks.dim() != 2 || has.size(1) != lacks.size(1) ||
      has.size(1) < 1)
    return makeError(prefixedDirections("the marked latents must be rows of one latent size"));
  if (has.size(0) < o.min_each || lacks.size(0) < o.min_each)
    return makeError(prefixedDirections("mark at least " + std::to_string(o.min_each) + " samples \"has\" and " +
                              std::to_string(o.min_each) + " \"lacks\"; got " + std::to_string(has.size(0)) + " and " +
                              std::to_string(lacks.size(0))));
  if (!(o.held_out >= 0 && o.held_out < 1)) return makeError(prefixedDirections("the held-out share must be in [0, 1)"));
  if (!(o.l2 > 0) || o.iterations < 1) return makeError(prefixedDirections("the penalty must be positive and iterations ≥ 1"));
  try {
    torch::NoGradGuard no_grad;
    const std::int64_t nz = has.size(1);
    at::Generator generator = at::detail::createCPUGenerator(o.seed);
    std::vector<torch::Tensor> fit_rows, fit_labels, test_rows, test_labels;
    for (const auto& [rows, label] : {std::pair{has, 1.0}, std::pair{lacks, 0.0}}) {
      const torch::Tensor x = rows.to(torch::kCPU, torch::kFloat64);
      if (!torch::isfinite(x).all().item<bool>()) return makeError(prefixedDirections("a marked latent holds NaN or Inf"));
      const std::int64_t count = x.size(0);
      const auto keep_out = static_cast<std::int64_t>(std::llround(o.held_out * static_cast<double>(count)));
      const torch::Tensor order = torch::randperm(count, generator, torch::kLong);
      test_rows.push_back(x.index_select(0, order.narrow(0, 0, keep_out)));
      fit_rows.push_back(x.index_select(0, order.narrow(0, keep_out, count - keep_out)));
      test_labels.push_back(torch::full({keep_out}, label, torch::kFloat64));
      fit_labels.push_back(torch::full({count - keep_out}, label, torch::kFloat64));
    }
    const auto withBias = [](const torch::Tensor& x) { return torch::cat({x, torch::ones({x.size(0), 1}, torch::kFloat64)}, 1); };
    const torch::Tensor x = withBias(torch::cat(fit_rows)), y = torch::cat(fit_labels);
    torch::Tensor penalty = torch::full({nz + 1}, 2 * o.l2, torch::kFloat64);
    penalty[nz] = 0;  // the bias is free
    torch::Tensor w = torch::zeros({nz + 1}, torch::kFloat64);
    for (int it = 0; it < o.iterations; ++it) {  // Newton's method on the penalised log-loss
      const torch::Tensor p = torch::sigmoid(torch::mv(x, w));
      const torch::Tensor gradient = torch::mv(x.t(), p - y) + penalty * w;
      const torch::Tensor hessian = torch::mm(x.t() * (p * (1 - p)).unsqueeze(0), x) + torch::diag(penalty + 1e-12);
      const torch::Tensor step = torch::linalg_solve(hessian, gradient);
      w = w - step;
      if (step.abs().max().item<double>() < 1e-10) break;
    }
    const auto accuracy = [&](const torch::Tensor& rows, const torch::Tensor& labels) {
      if (rows.size(0) == 0) return std::nan("");
      const torch::Tensor predicted = (torch::mv(withBias(rows), w) >= 0).to(torch::kFloat64);
      return (predicted == labels).to(torch::kFloat64).mean().item<double>();
    };
    LabelledDirection out;
    const torch::Tensor normal = w.narrow(0, 0, nz);
    if (!(normal.norm().item<double>() > 0) || !torch::isfinite(normal).all().item<bool>())
      return makeError(prefixedDirections("the classifier found no boundary between the two marks"));
    out.vector = unitVector(normal);
    out.fitted = x.size(0);
    out.held_out = torch::cat(test_rows).size(0);
    out.train_accuracy = accuracy(torch::cat(fit_rows), y);
    out.accuracy = accuracy(torch::cat(test_rows), torch::cat(test_labels));
    return out;
  } catch (const c10::Error& e) {
    return makeError(prefixedDirections(e.what_without_backtrace()));
  }
}

Result<torch::Tensor> SemanticDirections::conditional(const torch::Tensor& direction,
                                                      const std::vector<torch::Tensor>& others) {
  if (!direction.defined() || direction.dim() != 1 || direction.size(0) < 1)
    return makeError(prefixedDirections("the direction must be a vector"));
  torch::Tensor d = direction.to(torch::kCPU, torch::kFloat64).clone();
  std::vector<torch::Tensor> basis;  // the others, made orthonormal (Gram–Schmidt, twice for accuracy)
  for (const torch::Tensor& other : others) {
    if (!other.defined() || other.dim() != 1 || other.size(0) != d.size(0))
      return makeError(prefixedDirections("every direction to keep must have " + std::to_string(d.size(0)) + " values"));
    torch::Tensor v = other.to(torch::kCPU, torch::kFloat64).clone();
    const double scale = v.norm().item<double>();
    for (int pass = 0; pass < 2; ++pass)
      for (const torch::Tensor& b : basis) v -= torch::dot(v, b) * b;
    if (v.norm().item<double>() > 1e-9 * std::max(1.0, scale)) basis.push_back(unitVector(v));
  }
  const double scale = d.norm().item<double>();
  for (int pass = 0; pass < 2; ++pass)
    for (const torch::Tensor& b : basis) d -= torch::dot(d, b) * b;
  if (!(d.norm().item<double>() > 1e-6 * scale))
    return makeError(prefixedDirections("the direction lies within the directions to keep: nothing is left to move along"));
  return unitVector(d);
}

}  // namespace streetgan
