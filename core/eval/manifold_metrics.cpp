#include "core/eval/manifold_metrics.h"

#include "core/eval/nearest_neighbour_search.h"
#include "core/util/finite_values.h"
#include "core/util/row_norms.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <vector>

namespace streetgan {
namespace {

constexpr std::int64_t kMinTile = 256;  // rows a side of the smallest distance tile

Result<torch::Tensor> rowsOfFeatures(const torch::Tensor& rows, const char* name, int k) {
  if (!rows.defined() || rows.dim() != 2)
    return makeError(std::string("the ") + name + " features must be a matrix (one feature vector per row)");
  if (rows.size(0) <= k)
    return makeError(std::string("needs at least ") + std::to_string(k + 1) + " " + name +
                     " feature vectors for k = " + std::to_string(k) + ", got " + std::to_string(rows.size(0)));
  torch::Tensor values = rows.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  if (!allFinite(values)) return makeError(std::string("the ") + name + " features contain NaN or Inf values");
  return values;
}

// The distance from each row to its k-th nearest other row of the same set.
Result<torch::Tensor> kthRadii(const torch::Tensor& rows, int k, std::int64_t block) {
  auto neighbours = NearestNeighbourSearch::search(rows, rows, k, /*exclude_self=*/true, block);
  if (!neighbours) return makeError(neighbours.error());
  return neighbours->distances.select(1, k - 1).contiguous();
}

// The smallest double t with sqrt(t) >= radius. sqrt is correctly rounded and so never decreases:
// a squared distance s >= 0 has sqrt(s) < radius exactly when s < t, and the balls are tested on
// squared distances with the same answers as on their square roots.
double squaredEdge(double radius) {
  if (!(radius > 0)) return 0;  // nothing is strictly closer than 0
  double edge = radius * radius;
  while (edge > 0 && std::sqrt(std::nextafter(edge, 0.0)) >= radius) edge = std::nextafter(edge, 0.0);
  while (std::sqrt(edge) < radius) edge = std::nextafter(edge, std::numeric_limits<double>::infinity());
  return edge;
}

std::vector<double> squaredEdges(const torch::Tensor& radii) {
  const double* r = radii.data_ptr<double>();
  std::vector<double> edges(static_cast<std::size_t>(radii.numel()));
  for (std::size_t i = 0; i < edges.size(); ++i) edges[i] = squaredEdge(r[i]);
  return edges;
}

// What one tile of (real rows × generated rows) adds to the four figures.
struct Tile {
  std::int64_t real_first = 0, fake_first = 0;  // the tile's first real and generated rows
  std::vector<std::uint8_t> fake_inside;    // per generated row: inside some real ball of the tile
  std::vector<std::uint8_t> real_recalled;  // per real row: inside some generated ball of the tile
  std::vector<std::uint8_t> real_covered;   // per real row: its ball holds a generated row of the tile
  std::int64_t dense = 0;                   // (real ball, generated row inside it) pairs
};

struct SquaredRows {
  const double* norms;  // ‖row‖², one per row
  const double* edges;  // squaredEdge of each row's radius
};

// One tile's tallies from its products g (rows × cols, row-major): the squared distance of real
// row i and generated row j is (‖r_i‖² + ‖f_j‖²) − 2·g_ij, clamped at 0, in that order.
void tally(const double* g, std::int64_t rows, std::int64_t cols, SquaredRows real, SquaredRows fake, Tile& tile) {
  std::uint8_t* inside = tile.fake_inside.data();
  for (std::int64_t i = 0; i < rows; ++i) {
    const double norm = real.norms[i], edge = real.edges[i];
    const double* products = g + i * cols;
    std::int64_t in_ball = 0;
    std::uint8_t recalled = 0;
    for (std::int64_t j = 0; j < cols; ++j) {
      const double squared = std::max((norm + fake.norms[j]) - 2.0 * products[j], 0.0);
      const std::uint8_t in = squared < edge;
      in_ball += in;
      inside[j] |= in;
      recalled |= static_cast<std::uint8_t>(squared < fake.edges[j]);
    }
    tile.dense += in_ball;
    tile.real_covered[static_cast<std::size_t>(i)] = in_ball > 0;
    tile.real_recalled[static_cast<std::size_t>(i)] = recalled;
  }
}

struct Sides {
  torch::Tensor real, fake;  // (n, d) float64, contiguous
  std::vector<double> real_norms, fake_norms, real_edges, fake_edges;
};

// Every tile of `block` real rows × `block` generated rows, on LibTorch's threads (BLAS is
// single-threaded under them); each tile keeps its own tallies, so no thread writes another's.
std::vector<Tile> tiles(const Sides& sides, std::int64_t block) {
  const std::int64_t n_real = sides.real.size(0), n_fake = sides.fake.size(0);
  const std::int64_t real_tiles = (n_real + block - 1) / block, fake_tiles = (n_fake + block - 1) / block;
  std::vector<Tile> out(static_cast<std::size_t>(real_tiles * fake_tiles));
  at::parallel_for(0, real_tiles * fake_tiles, 1, [&](std::int64_t lo, std::int64_t hi) {
    torch::NoGradGuard no_grad_here;
    torch::Tensor products = torch::empty({0}, torch::kFloat64);  // reused: no fresh pages per tile
    for (std::int64_t t = lo; t < hi; ++t) {
      const std::int64_t r0 = (t / fake_tiles) * block, f0 = (t % fake_tiles) * block;
      const std::int64_t rows = std::min(block, n_real - r0), cols = std::min(block, n_fake - f0);
      products.resize_({rows, cols});  // mm_out warns when it has to resize
      torch::mm_out(products, sides.real.narrow(0, r0, rows), sides.fake.narrow(0, f0, cols).t());
      Tile& tile = out[static_cast<std::size_t>(t)];
      tile.real_first = r0;
      tile.fake_first = f0;
      tile.fake_inside.assign(static_cast<std::size_t>(cols), 0);
      tile.real_recalled.assign(static_cast<std::size_t>(rows), 0);
      tile.real_covered.assign(static_cast<std::size_t>(rows), 0);
      tally(products.data_ptr<double>(), rows, cols,
            {sides.real_norms.data() + r0, sides.real_edges.data() + r0},
            {sides.fake_norms.data() + f0, sides.fake_edges.data() + f0}, tile);
    }
  });
  return out;
}

// The tiles' tallies merged: counts add, and a row is inside, recalled or covered when any tile says so.
ManifoldMetricsResult merged(const std::vector<Tile>& all, std::int64_t n_real, std::int64_t n_fake, int k) {
  std::vector<std::uint8_t> inside(static_cast<std::size_t>(n_fake), 0), recalled(static_cast<std::size_t>(n_real), 0),
      covered(recalled);
  std::int64_t dense = 0;
  for (const Tile& tile : all) {
    const auto r0 = static_cast<std::size_t>(tile.real_first), f0 = static_cast<std::size_t>(tile.fake_first);
    dense += tile.dense;
    for (std::size_t j = 0; j < tile.fake_inside.size(); ++j) inside[f0 + j] |= tile.fake_inside[j];
    for (std::size_t i = 0; i < tile.real_recalled.size(); ++i) {
      recalled[r0 + i] |= tile.real_recalled[i];
      covered[r0 + i] |= tile.real_covered[i];
    }
  }
  const auto count = [](const std::vector<std::uint8_t>& flags) {
    return static_cast<double>(std::count(flags.begin(), flags.end(), std::uint8_t{1}));
  };
  ManifoldMetricsResult result;
  result.k = k;
  result.precision = count(inside) / static_cast<double>(n_fake);
  result.recall = count(recalled) / static_cast<double>(n_real);
  result.density = static_cast<double>(dense) / (static_cast<double>(k) * static_cast<double>(n_fake));
  result.coverage = count(covered) / static_cast<double>(n_real);
  return result;
}

std::vector<double> normsOf(const torch::Tensor& rows) {
  const torch::Tensor norms = squaredRowNorms(rows);
  return {norms.data_ptr<double>(), norms.data_ptr<double>() + norms.numel()};
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
    const Sides sides{*real, *fake, normsOf(*real), normsOf(*fake), squaredEdges(*real_radii),
                      squaredEdges(*fake_radii)};
    // The figures do not depend on the tile: at least kMinTile rows a side keeps the tiles' own
    // tallies small beside the pairs, and one larger than both sets changes nothing (and its
    // arithmetic could overflow).
    const std::int64_t tile = std::min(std::max(options.block, kMinTile), std::max(real->size(0), fake->size(0)));
    return merged(tiles(sides, tile), real->size(0), fake->size(0), options.k);
  } catch (const c10::Error& e) {
    return makeError(std::string("precision and recall: ") + e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    return makeError("precision and recall: out of memory");
  }
}

}  // namespace streetgan
