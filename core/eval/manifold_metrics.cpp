#include "core/eval/manifold_metrics.h"

#include "core/eval/nearest_neighbour_search.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace streetgan {
namespace {

Result<torch::Tensor> rowsOfFeatures(const torch::Tensor& rows, const char* name, int k) {
  if (!rows.defined() || rows.dim() != 2)
    return makeError(std::string("the ") + name + " features must be a matrix (one feature vector per row)");
  if (rows.size(0) <= k)
    return makeError(std::string("needs at least ") + std::to_string(k + 1) + " " + name +
                     " feature vectors for k = " + std::to_string(k) + ", got " + std::to_string(rows.size(0)));
  torch::Tensor values = rows.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  if (!torch::isfinite(values).all().item<bool>())
    return makeError(std::string("the ") + name + " features contain NaN or Inf values");
  return values;
}

// The distance from each row to its k-th nearest other row of the same set.
Result<torch::Tensor> kthRadii(const torch::Tensor& rows, int k, std::int64_t block) {
  auto neighbours = NearestNeighbourSearch::search(rows, rows, k, /*exclude_self=*/true, block);
  if (!neighbours) return makeError(neighbours.error());
  return neighbours->distances.select(1, k - 1).contiguous();
}

}  // namespace

Result<ManifoldMetricsResult> ManifoldMetrics::compute(const torch::Tensor& real_in, const torch::Tensor& fake_in,
                                                       const ManifoldMetricsOptions& options) {
  if (options.k < 1) return makeError("precision and recall: k must be at least 1");
  if (options.block < 1) return makeError("precision and recall: the block size must be at least 1");
  auto real = rowsOfFeatures(real_in, "real", options.k);
  if (!real) return makeError("precision and recall: " + real.error());
  auto fake = rowsOfFeatures(fake_in, "generated", options.k);
  if (!fake) return makeError("precision and recall: " + fake.error());
  if (real->size(1) != fake->size(1))
    return makeError("precision and recall: the real features have " + std::to_string(real->size(1)) +
                     " dimensions, the generated " + std::to_string(fake->size(1)));
  try {
    auto real_radii = kthRadii(*real, options.k, options.block);
    if (!real_radii) return makeError("precision and recall: " + real_radii.error());
    auto fake_radii = kthRadii(*fake, options.k, options.block);
    if (!fake_radii) return makeError("precision and recall: " + fake_radii.error());

    const std::int64_t n_real = real->size(0), n_fake = fake->size(0);
    const torch::Tensor real_norms = real->pow(2).sum(1, /*keepdim=*/true);  // (n_real, 1)
    const torch::Tensor real_radius_column = real_radii->unsqueeze(1);       // (n_real, 1)
    // Blocks of generated rows on LibTorch's threads (BLAS is single-threaded under them), each
    // with its own tallies; counts, "any" and minima do not depend on the order they are merged in.
    const std::int64_t blocks = (n_fake + options.block - 1) / options.block;
    std::vector<std::int64_t> precise_of(static_cast<std::size_t>(blocks), 0), dense_of(precise_of);
    std::vector<torch::Tensor> recalled_of(static_cast<std::size_t>(blocks)), nearest_of(recalled_of);
    at::parallel_for(0, blocks, 1, [&](std::int64_t lo, std::int64_t hi) {
      torch::NoGradGuard no_grad_here;
      for (std::int64_t b = lo; b < hi; ++b) {
        const std::int64_t start = b * options.block, end = std::min(n_fake, start + options.block);
        const torch::Tensor f = fake->slice(0, start, end);
        const torch::Tensor squared =
            (real_norms + f.pow(2).sum(1).unsqueeze(0) - 2 * torch::mm(*real, f.t())).clamp_min(0);
        const torch::Tensor distances = squared.sqrt();  // (n_real, block)
        const torch::Tensor inside_real = distances < real_radius_column;
        const auto i = static_cast<std::size_t>(b);
        precise_of[i] = inside_real.any(0).sum().item<std::int64_t>();
        dense_of[i] = inside_real.sum().item<std::int64_t>();
        recalled_of[i] = (distances < fake_radii->slice(0, start, end).unsqueeze(0)).any(1);
        nearest_of[i] = std::get<0>(distances.min(1));
      }
    });
    std::int64_t precise = 0, dense = 0;
    torch::Tensor recalled = torch::zeros({n_real}, torch::kBool);
    torch::Tensor nearest_fake = torch::full({n_real}, std::numeric_limits<double>::infinity(), torch::kFloat64);
    for (std::size_t i = 0; i < static_cast<std::size_t>(blocks); ++i) {
      precise += precise_of[i];
      dense += dense_of[i];
      recalled |= recalled_of[i];
      nearest_fake = torch::minimum(nearest_fake, nearest_of[i]);
    }
    ManifoldMetricsResult result;
    result.k = options.k;
    result.precision = static_cast<double>(precise) / static_cast<double>(n_fake);
    result.recall = recalled.to(torch::kFloat64).mean().item<double>();
    result.density = static_cast<double>(dense) / (static_cast<double>(options.k) * static_cast<double>(n_fake));
    result.coverage = (nearest_fake < *real_radii).to(torch::kFloat64).mean().item<double>();
    return result;
  } catch (const c10::Error& e) {
    return makeError(std::string("precision and recall: ") + e.what_without_backtrace());
  }
}

}  // namespace streetgan
