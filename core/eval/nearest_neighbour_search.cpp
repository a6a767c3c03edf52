#include "core/eval/nearest_neighbour_search.h"

#include "core/util/row_norms.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace streetgan {
namespace {

std::string prefixedSearch(const std::string& text) { return "nearest neighbours: " + text; }

Status checkSearchRows(const torch::Tensor& t, const std::string& name) {
  if (!t.defined()) return makeError(prefixedSearch("the " + name + " are missing"));
  if (t.dim() != 2)
    return makeError(prefixedSearch("the " + name + " must be a matrix (one row per item), got " + std::to_string(t.dim()) +
                              " dimensions"));
  if (!t.is_floating_point()) return makeError(prefixedSearch("the " + name + " must be floating point"));
  if (t.size(0) == 0) return makeError(prefixedSearch("there are no " + name));
  if (t.size(1) == 0) return makeError(prefixedSearch("the " + name + " have zero columns"));
  return {};
}


struct Candidates {
  torch::Tensor keys;     // (m, width) ‖r‖² − 2·q·r in the product's type, unsorted
  torch::Tensor indices;  // (m, width) int64 reference rows
};

// The `width` reference rows with the smallest key ‖r‖² − 2·q·r (the squared distance less ‖q‖²,
// which does not change the order) for each row of `q`, the product taken in `dtype`, one
// reference block of rows [from, to) at a time merged with the best so far. Reference row
// excluded[i] (when ≥ 0) is never chosen for query i. Every row left out has a key no smaller
// than every key kept.
Candidates candidates(const torch::Tensor& q, const torch::Tensor& excluded, const torch::Tensor& reference,
                      const torch::Tensor& reference_sq, std::int64_t width, std::int64_t block,
                      torch::ScalarType dtype, std::int64_t from, std::int64_t to) {
  const std::int64_t m = q.size(0), n_ref = to;
  const torch::Tensor qd = q.to(dtype);
  torch::Tensor keys = torch::empty({m, 0}, dtype), indices = torch::empty({m, 0}, torch::kLong);
  for (std::int64_t j0 = from; j0 < n_ref; j0 += block) {
    const std::int64_t c = std::min(block, n_ref - j0);
    const torch::Tensor r = reference.narrow(0, j0, c).to(dtype);
    torch::Tensor key = torch::addmm(reference_sq.narrow(0, j0, c).to(dtype).view({1, c}), qd, r.t(), 1.0, -2.0)
                            .contiguous();
    if (excluded.defined()) {
      const torch::Tensor rows = ((excluded >= j0) & (excluded < j0 + c)).nonzero().view(-1);
      if (rows.numel() > 0)
        key.view(-1).index_fill_(0, rows * c + (excluded.index_select(0, rows) - j0),
                                 std::numeric_limits<double>::infinity());
    }
    const std::int64_t kept = keys.size(1);
    const torch::Tensor all_keys = kept == 0 ? key : torch::cat({keys, key}, 1);
    const auto top = all_keys.topk(std::min(width, all_keys.size(1)), 1, /*largest=*/false, /*sorted=*/false);
    keys = std::get<0>(top);
    // A position below `kept` is a row kept before; the others are this block's rows j0 + (p − kept).
    const torch::Tensor& position = std::get<1>(top);
    indices = kept == 0 ? position + j0
                        : torch::where(position < kept, indices.gather(1, position.clamp_max(kept - 1)),
                                       position + (j0 - kept));
  }
  return {keys, indices};
}

template <class T>
void exactSquaredOf(const T* q, const T* reference, const std::int64_t* indices, std::int64_t m, std::int64_t w,
                    std::int64_t d, double* out) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < w; ++j) out[i * w + j] = squaredDistanceOf(q + i * d, reference + indices[i * w + j] * d, d);
}

// ‖q_i − r_j‖² in float64 for every candidate j of every query i, from the differences (no
// cancellation): straight from the rows when both are contiguous float or double, else a bounded
// chunk of queries at a time through float64 copies.
torch::Tensor exactSquared(const torch::Tensor& q, const torch::Tensor& reference, const torch::Tensor& indices) {
  const std::int64_t m = q.size(0), w = indices.size(1), d = q.size(1);
  torch::Tensor out = torch::empty({m, w}, torch::kFloat64);
  const torch::Tensor index = indices.contiguous();
  if (q.is_contiguous() && reference.is_contiguous() && q.scalar_type() == reference.scalar_type()) {
    if (q.scalar_type() == torch::kFloat32) {
      exactSquaredOf(q.data_ptr<float>(), reference.data_ptr<float>(), index.data_ptr<std::int64_t>(), m, w, d,
                     out.data_ptr<double>());
      return out;
    }
    if (q.scalar_type() == torch::kFloat64) {
      exactSquaredOf(q.data_ptr<double>(), reference.data_ptr<double>(), index.data_ptr<std::int64_t>(), m, w, d,
                     out.data_ptr<double>());
      return out;
    }
  }
  const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{1} << 21) / (w * d));
  for (std::int64_t i0 = 0; i0 < m; i0 += chunk) {
    const std::int64_t b = std::min(chunk, m - i0);
    const torch::Tensor rows =
        reference.index_select(0, index.narrow(0, i0, b).reshape(-1)).to(torch::kFloat64).view({b, w, d});
    const torch::Tensor qs = q.narrow(0, i0, b).to(torch::kFloat64).unsqueeze(1);
    out.narrow(0, i0, b).copy_((rows - qs).pow(2).sum(2));
  }
  return out;
}

struct Pass {
  torch::Tensor squared;  // (n, k) float64, ascending
  torch::Tensor indices;  // (n, k) int64
  torch::Tensor redo;     // (n) bool: the float32 choice could have missed a nearer row
};

// One pass over all queries, blocks of queries in parallel (each block single-threaded below:
// the engine keeps BLAS single-threaded under LibTorch's threads). With float32 products the
// pass also says which queries must be redone: query i is safe when its k-th exact distance is
// no larger than ‖q‖² + (the largest kept key) − tol, tol bounding the float32 rounding of any
// key: about (D + 5)·u·(‖q‖ + max‖r‖)² with u = 2⁻²⁴ (inputs, norms, a D-term dot product and
// the sum), taken twice over.
//
// With `exact_q` and `exact_reference` defined, q and reference are lower-bound rows of them
// (‖E(x) − E(y)‖ ≤ ‖x − y‖): the candidates are chosen on the bounds, their distances taken on
// the exact rows, and a query is safe when its k-th exact distance is no larger than the bound of
// every row left out (‖E(q)‖² + the largest kept key − tol), the same test as above.
Pass onePass(const torch::Tensor& q, const torch::Tensor& q_sq, const torch::Tensor& excluded,
             const torch::Tensor& reference, const torch::Tensor& reference_sq, int k, std::int64_t width,
             std::int64_t available, std::int64_t block, torch::ScalarType dtype,
             const torch::Tensor& exact_q = {}, const torch::Tensor& exact_reference = {}) {
  const std::int64_t n = q.size(0);
  Pass pass{torch::empty({n, k}, torch::kFloat64), torch::empty({n, k}, torch::kLong), torch::zeros({n}, torch::kBool)};
  const bool bounded = exact_q.defined();
  const bool check = (dtype == torch::kFloat32 || bounded) && width < available;
  const double r_max = std::sqrt(reference_sq.max().item<double>());
  // Bound rows carry their own rounding: a norm left over after cancellation (‖x‖² − ‖f‖², sums
  // of D float64 squares) is off by at most √(D·2⁻⁵³)·‖x‖, its part of a key by four times that
  // times ‖x‖² (‖x‖ being the bound row's norm); twice that is allowed for.
  const double margin = bounded ? 8.0 * std::sqrt(static_cast<double>(exact_q.size(1)) * std::ldexp(1.0, -53)) : 0.0;
  const double coeff =
      2.0 * static_cast<double>(q.size(1) + 16) * std::ldexp(1.0, dtype == torch::kFloat32 ? -24 : -53) + margin;
  // Tasks: a block of queries against a part of the reference rows. Many queries: one part, the
  // query blocks in parallel. Few queries: the reference rows split between the threads, so that
  // they are read once, not once per thread; the parts' candidates are merged after.
  const std::int64_t threads = std::max(1, at::get_num_threads());
  const std::int64_t even = (n + block - 1) / block;  // blocks of at most `block`, of about equal size
  const std::int64_t q_block = (n + even - 1) / even, q_blocks = (n + q_block - 1) / q_block;
  const std::int64_t n_ref = reference.size(0);
  const std::int64_t parts = q_blocks >= threads ? 1 : std::min<std::int64_t>(threads, (n_ref + block - 1) / block);
  const std::int64_t part_rows = (n_ref + parts - 1) / parts;
  std::vector<Candidates> found(static_cast<std::size_t>(q_blocks * parts));
  at::parallel_for(0, q_blocks * parts, 1, [&](std::int64_t lo, std::int64_t hi) {
    torch::NoGradGuard no_grad_here;  // grad mode is per thread
    for (std::int64_t t = lo; t < hi; ++t) {
      const std::int64_t b = t / parts, part = t % parts;
      const std::int64_t i0 = b * q_block, m = std::min(q_block, n - i0);
      const torch::Tensor ex = excluded.defined() ? excluded.narrow(0, i0, m) : torch::Tensor();
      found[static_cast<std::size_t>(t)] =
          candidates(q.narrow(0, i0, m), ex, reference, reference_sq, width, block, dtype, part * part_rows,
                     std::min(n_ref, (part + 1) * part_rows));
    }
  });
  at::parallel_for(0, q_blocks, 1, [&](std::int64_t lo, std::int64_t hi) {
    torch::NoGradGuard no_grad_here;
    for (std::int64_t b = lo; b < hi; ++b) {
      const std::int64_t i0 = b * q_block, m = std::min(q_block, n - i0);
      const torch::Tensor qb = q.narrow(0, i0, m);
      Candidates merged = found[static_cast<std::size_t>(b * parts)];
      if (parts > 1) {  // the width smallest of the parts' candidates: rows left out stay no nearer
        std::vector<torch::Tensor> keys, indices;
        for (std::int64_t part = 0; part < parts; ++part) {
          keys.push_back(found[static_cast<std::size_t>(b * parts + part)].keys);
          indices.push_back(found[static_cast<std::size_t>(b * parts + part)].indices);
        }
        const torch::Tensor all_keys = torch::cat(keys, 1), all_indices = torch::cat(indices, 1);
        const auto top = all_keys.topk(std::min(width, all_keys.size(1)), 1, /*largest=*/false, /*sorted=*/false);
        merged = {std::get<0>(top), all_indices.gather(1, std::get<1>(top))};
      }
      const auto sorted = (bounded ? exactSquared(exact_q.narrow(0, i0, m), exact_reference, merged.indices)
                                   : exactSquared(qb, reference, merged.indices))
                              .sort(1);
      const torch::Tensor squared = std::get<0>(sorted).narrow(1, 0, k);
      pass.squared.narrow(0, i0, m).copy_(squared);
      pass.indices.narrow(0, i0, m).copy_(merged.indices.gather(1, std::get<1>(sorted).narrow(1, 0, k)));
      if (check) {
        const torch::Tensor qs = q_sq.narrow(0, i0, m);
        const torch::Tensor safe_up_to =
            qs + merged.keys.to(torch::kFloat64).amax(1) - coeff * (qs.sqrt() + r_max).pow(2);
        pass.redo.narrow(0, i0, m).copy_(squared.select(1, k - 1) > safe_up_to);
      }
    }
  });
  return pass;
}

Result<NearestNeighbours> searchUnchecked(const torch::Tensor& queries, const torch::Tensor& reference_in,
                                  const torch::Tensor& excluded_in, int k, std::int64_t block) {
  torch::NoGradGuard no_grad;
  const torch::Tensor q = queries.cpu().contiguous(), reference = reference_in.cpu().contiguous();
  const torch::Tensor excluded = excluded_in.defined() ? excluded_in.cpu().to(torch::kLong) : torch::Tensor();
  const std::int64_t available = reference.size(0) - (excluded.defined() ? 1 : 0);
  // Candidates kept per query: a margin beyond k, so that the float32 check rarely fails where
  // images crowd (a query is redone only when more than `width` rows lie within the bound).
  const std::int64_t width = std::min<std::int64_t>(available, std::max<std::int64_t>(64, 2 * std::int64_t{k} + 8));
  const torch::Tensor q_sq = squaredRowNorms(q), reference_sq = squaredRowNorms(reference);
  if (!torch::isfinite(q_sq).all().item<bool>()) return makeError(prefixedSearch("the queries contain NaN or Inf values"));
  if (!torch::isfinite(reference_sq).all().item<bool>())
    return makeError(prefixedSearch("the reference rows contain NaN or Inf values"));
  Pass pass = onePass(q, q_sq, excluded, reference, reference_sq, k, width, available, block, torch::kFloat32);
  const torch::Tensor again = pass.redo.nonzero().view(-1);
  if (again.numel() > 0) {  // near-ties that float32 cannot separate: float64 throughout
    const Pass redone = onePass(q.index_select(0, again), q_sq.index_select(0, again),
                                excluded.defined() ? excluded.index_select(0, again) : torch::Tensor(), reference,
                                reference_sq, k, width, available, block, torch::kFloat64);
    pass.squared.index_copy_(0, again, redone.squared);
    pass.indices.index_copy_(0, again, redone.indices);
  }
  return NearestNeighbours{pass.squared.clamp_min(0.0).sqrt(), pass.indices};
}

Result<NearestNeighbours> searchBoundedUnchecked(const torch::Tensor& queries, const torch::Tensor& reference_in,
                                                 const torch::Tensor& query_bounds, const torch::Tensor& reference_bounds,
                                                 const torch::Tensor& excluded_in, int k, std::int64_t block) {
  torch::NoGradGuard no_grad;
  const torch::Tensor q = queries.cpu().contiguous(), reference = reference_in.cpu().contiguous();
  const torch::Tensor bq = query_bounds.cpu().contiguous(), bref = reference_bounds.cpu().contiguous();
  const torch::Tensor excluded = excluded_in.defined() ? excluded_in.cpu().to(torch::kLong) : torch::Tensor();
  const std::int64_t available = reference.size(0) - (excluded.defined() ? 1 : 0);
  // A tight bound leaves few rows to measure: a narrower margin than the float32 search's.
  const std::int64_t width = std::min<std::int64_t>(available, std::max<std::int64_t>(16, 2 * std::int64_t{k} + 8));
  if (!torch::isfinite(squaredRowNorms(q)).all().item<bool>()) return makeError(prefixedSearch("the queries contain NaN or Inf values"));
  if (!torch::isfinite(squaredRowNorms(reference)).all().item<bool>())
    return makeError(prefixedSearch("the reference rows contain NaN or Inf values"));
  const torch::Tensor bq_sq = squaredRowNorms(bq), bref_sq = squaredRowNorms(bref);
  if (!torch::isfinite(bq_sq).all().item<bool>() || !torch::isfinite(bref_sq).all().item<bool>())
    return makeError(prefixedSearch("the bound rows contain NaN or Inf values"));
  const Pass pass = onePass(bq, bq_sq, excluded, bref, bref_sq, k, width, available, block, torch::kFloat32, q, reference);
  NearestNeighbours out{pass.squared.clamp_min(0.0).sqrt(), pass.indices};
  const torch::Tensor again = pass.redo.nonzero().view(-1);
  if (again.numel() > 0) {  // the bound left too many rows near the answer: those queries in full
    auto full = searchUnchecked(q.index_select(0, again), reference,
                                excluded.defined() ? excluded.index_select(0, again) : torch::Tensor(), k, block);
    if (!full) return full;
    out.distances.index_copy_(0, again, full->distances);
    out.indices.index_copy_(0, again, full->indices);
  }
  return out;
}

Status checkSearchBounds(const torch::Tensor& query_bounds, const torch::Tensor& reference_bounds, std::int64_t n,
                   std::int64_t n_ref) {
  if (Status s = checkSearchRows(query_bounds, "queries' bound rows"); !s) return s;
  if (Status s = checkSearchRows(reference_bounds, "reference rows' bound rows"); !s) return s;
  if (query_bounds.size(0) != n || reference_bounds.size(0) != n_ref)
    return makeError(prefixedSearch("the bound rows must be one per query and reference row (" + std::to_string(n) + " and " +
                              std::to_string(n_ref) + "), got " + std::to_string(query_bounds.size(0)) + " and " +
                              std::to_string(reference_bounds.size(0))));
  if (query_bounds.size(1) != reference_bounds.size(1))
    return makeError(prefixedSearch("the bound rows have " + std::to_string(query_bounds.size(1)) + " and " +
                              std::to_string(reference_bounds.size(1)) + " columns"));
  return {};
}

Result<NearestNeighbours> searchChecked(const torch::Tensor& queries, const torch::Tensor& reference,
                                        const torch::Tensor& excluded, bool exclude_self, int k, std::int64_t block,
                                        const torch::Tensor& query_bounds = {},
                                        const torch::Tensor& reference_bounds = {}) {
  if (Status s = checkSearchRows(queries, "queries"); !s) return makeError(s.error());
  if (Status s = checkSearchRows(reference, "reference rows"); !s) return makeError(s.error());
  const std::int64_t n = queries.size(0), n_ref = reference.size(0);
  if (queries.size(1) != reference.size(1))
    return makeError(prefixedSearch("the queries have " + std::to_string(queries.size(1)) + " columns, the reference rows " +
                              std::to_string(reference.size(1))));
  if (k < 1) return makeError(prefixedSearch("k must be at least 1, got " + std::to_string(k)));
  if (block < 1) return makeError(prefixedSearch("the block size must be at least 1, got " + std::to_string(block)));
  if (exclude_self && n != n_ref)
    return makeError(prefixedSearch("exclude_self needs the queries to be the reference rows: " + std::to_string(n) +
                              " queries, " + std::to_string(n_ref) + " reference rows"));
  if (excluded.defined() && !exclude_self) {
    if (excluded.dim() != 1 || excluded.size(0) != n)
      return makeError(prefixedSearch("the excluded rows must be one index per query (" + std::to_string(n) + "), got " +
                                std::to_string(excluded.numel())));
    if (excluded.is_floating_point() || excluded.is_complex() || excluded.scalar_type() == torch::kBool)
      return makeError(prefixedSearch("the excluded rows must be integer indices"));
    const std::int64_t low = excluded.min().item<std::int64_t>(), high = excluded.max().item<std::int64_t>();
    if (low < -1 || high >= n_ref)
      return makeError(prefixedSearch("excluded row " + std::to_string(low < -1 ? low : high) + " is outside the " +
                                std::to_string(n_ref) + " reference rows"));
  }
  if (!excluded.defined() && k > n_ref)
    return makeError(prefixedSearch("k = " + std::to_string(k) + " needs at least " + std::to_string(k) +
                              " reference rows, got " + std::to_string(n_ref)));
  if (excluded.defined() && k > n_ref - 1)
    return makeError(prefixedSearch("k = " + std::to_string(k) + " with each query's own row excluded needs at least " +
                              std::to_string(k + 1) + " reference rows, got " + std::to_string(n_ref)));
  block = std::min(block, std::max(n, n_ref));  // a larger block changes nothing, and its arithmetic could overflow
  try {
    if (query_bounds.defined() || reference_bounds.defined()) {
      if (Status s = checkSearchBounds(query_bounds, reference_bounds, n, n_ref); !s) return makeError(s.error());
      return searchBoundedUnchecked(queries, reference, query_bounds, reference_bounds, excluded, k, block);
    }
    return searchUnchecked(queries, reference, excluded, k, block);
  } catch (const c10::Error& e) {  // out of memory
    return makeError(prefixedSearch(e.what_without_backtrace()));
  }
}

}  // namespace

Result<NearestNeighbours> NearestNeighbourSearch::search(const torch::Tensor& queries, const torch::Tensor& reference,
                                                         int k, bool exclude_self, std::int64_t block) {
  torch::Tensor self;
  if (exclude_self && queries.defined() && queries.dim() == 2)
    self = torch::arange(queries.size(0), torch::kLong);
  return searchChecked(queries, reference, self, exclude_self, k, block);
}

Result<NearestNeighbours> NearestNeighbourSearch::searchExcluding(const torch::Tensor& queries,
                                                                  const torch::Tensor& reference,
                                                                  const torch::Tensor& excluded, int k,
                                                                  std::int64_t block) {
  if (!excluded.defined()) return makeError(prefixedSearch("the excluded rows are missing"));
  return searchChecked(queries, reference, excluded, false, k, block);
}

torch::Tensor NearestNeighbourSearch::downsampledRows(const torch::Tensor& images, int size) {
  if (!images.defined() || images.dim() != 4 || size < 1 || images.size(1) < 1 || images.size(2) < 1 ||
      images.size(3) < 1)
    return {};
  torch::NoGradGuard no_grad;
  const std::int64_t n = images.size(0), channels = images.size(1);
  if (n == 0) return torch::zeros({0, channels * size * size}, torch::kFloat32);
  try {
    const torch::Tensor x = images.to(torch::kCPU, torch::kFloat32).contiguous();  // expanded views too
    if (x.size(2) == size && x.size(3) == size) return x.reshape({n, -1}).clone();
    return torch::adaptive_avg_pool2d(x, {size, size}).reshape({n, -1}).contiguous();
  } catch (const c10::Error&) {  // out of memory
    return {};
  }
}

Result<NearestNeighbours> NearestNeighbourSearch::searchBounded(const torch::Tensor& queries,
                                                                const torch::Tensor& reference,
                                                                const torch::Tensor& query_bounds,
                                                                const torch::Tensor& reference_bounds,
                                                                const torch::Tensor& excluded, int k, std::int64_t block) {
  if (!query_bounds.defined() || !reference_bounds.defined()) return makeError(prefixedSearch("the bound rows are missing"));
  return searchChecked(queries, reference, excluded, false, k, block, query_bounds, reference_bounds);
}

}  // namespace streetgan
