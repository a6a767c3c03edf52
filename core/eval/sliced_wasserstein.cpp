#include "core/eval/sliced_wasserstein.h"

#include "core/eval/laplacian_patches.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace streetgan {
namespace {

constexpr std::int64_t kSwdChannels = 3;
// Projections held at once per set: directions are taken in chunks of about this many values
// (256 MB of float32), so that the descriptors are read once per chunk.
constexpr std::int64_t kProjectionValues = std::int64_t(1) << 27;
constexpr std::int64_t kMaxCount = std::int64_t(1) << 20;  // patches per image, projections

std::string px(std::int64_t size) { return std::to_string(size) + " px"; }

// splitmix64: an independent seed for each random part (subsamples, each level's positions and
// directions), so that no draw depends on how many values an earlier one took.
std::uint64_t streamSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Status checkSwdOptions(const SlicedWassersteinOptions& o) {
  if (o.patch_size < 1 || o.patch_size % 2 == 0)
    return makeError("SWD: the patch size must be odd and at least 1, got " + std::to_string(o.patch_size));
  if (o.min_resolution < 4 || o.min_resolution < o.patch_size)
    return makeError("SWD: the smallest level must be at least 4 px and the patch size (" +
                     std::to_string(o.patch_size) + "), got " + px(o.min_resolution));
  if (o.patches_per_image < 1 || o.patches_per_image > kMaxCount)
    return makeError("SWD: patches per image must be between 1 and " + std::to_string(kMaxCount) + ", got " +
                     std::to_string(o.patches_per_image));
  if (o.projections < 1 || o.projections > kMaxCount)
    return makeError("SWD: the number of projections must be between 1 and " + std::to_string(kMaxCount) +
                     ", got " + std::to_string(o.projections));
  if (o.block < 1) return makeError("SWD: the block size must be at least 1, got " + std::to_string(o.block));
  return {};
}

// Square RGB images of ≥ `min_size` px; `halving`: halving evenly down to the level `min_size`.
Status checkSwdImages(const torch::Tensor& t, const std::string& name, int min_size, bool halving) {
  if (!t.defined() || t.dim() != 4)
    return makeError("SWD: " + name + " must be images (N, 3, H, W), got " +
                     (t.defined() ? std::to_string(t.dim()) + " dimensions" : std::string("no tensor")));
  if (t.size(0) == 0) return makeError("SWD: " + name + " is empty");
  if (t.size(1) != kSwdChannels)
    return makeError("SWD: " + name + " has " + std::to_string(t.size(1)) + " channels, images need 3");
  if (!t.is_floating_point()) return makeError("SWD: " + name + " must hold floating-point pixels");
  if (t.size(2) != t.size(3))
    return makeError("SWD: " + name + " holds " + std::to_string(t.size(3)) + "x" + std::to_string(t.size(2)) +
                     " images, they must be square");
  if (t.size(2) < min_size)
    return makeError("SWD: " + name + " holds " + px(t.size(2)) + " images, below " +
                     (halving ? "the smallest level of " : "the patch size of ") + px(min_size));
  if (halving) {
    const std::vector<int> levels = SlicedWasserstein::resolutions(t.size(2), min_size);
    for (std::size_t i = 0; i + 1 < levels.size(); ++i)
      if (levels[i] % 2 != 0)
        return makeError("SWD: " + px(t.size(2)) + " images do not halve evenly down to " + px(min_size) +
                         " (the level of " + px(levels[i]) + " is odd)");
  }
  if (!torch::isfinite(t).all().item<bool>()) return makeError("SWD: " + name + " contains NaN or Inf values");
  return {};
}

// [1 4 6 4 1]·gain/16 along both axes of (N, C, H, W), whole-sample mirror borders: gain 1 is
// pyrDown's filter, gain 2 pyrUp's (4× the kernel in 2-D).
torch::Tensor binomial(const torch::Tensor& x, double gain) {
  static constexpr double kTaps[5] = {1, 4, 6, 4, 1};
  const std::int64_t h = x.size(2), w = x.size(3);
  const torch::Tensor padded = torch::reflection_pad2d(x, {2, 2, 2, 2});
  torch::Tensor across = padded.narrow(3, 0, w) * (kTaps[0] * gain / 16);
  for (int t = 1; t < 5; ++t) across.add_(padded.narrow(3, t, w), kTaps[t] * gain / 16);
  torch::Tensor out = across.narrow(2, 0, h) * (kTaps[0] * gain / 16);
  for (int t = 1; t < 5; ++t) out.add_(across.narrow(2, t, h), kTaps[t] * gain / 16);
  return out;
}

torch::Tensor pyrDown(const torch::Tensor& g) {
  return binomial(g, 1.0).slice(2, 0, g.size(2), 2).slice(3, 0, g.size(3), 2).contiguous();
}

torch::Tensor pyrUp(const torch::Tensor& g) {
  const std::int64_t h = g.size(2), w = g.size(3);
  torch::Tensor up = torch::zeros({g.size(0), g.size(1), 2 * h, 2 * w}, g.options());
  up.slice(2, 0, 2 * h, 2).slice(3, 0, 2 * w, 2).copy_(g);
  return binomial(up, 2.0);
}

// Patches of a contiguous level (n, C, S, S) at valid int64 positions (M, 3): (M, C·p²).
torch::Tensor gatherPatches(const torch::Tensor& level, const torch::Tensor& positions, int patch) {
  const std::int64_t c = level.size(1), h = level.size(2), w = level.size(3), half = patch / 2;
  const auto longs = torch::TensorOptions().dtype(torch::kLong);
  const torch::Tensor base =
      ((positions.select(1, 0) * c) * h + positions.select(1, 1) - half) * w + positions.select(1, 2) - half;
  const torch::Tensor offsets = (torch::arange(c, longs).view({c, 1, 1}) * (h * w) +
                                 torch::arange(patch, longs).view({1, patch, 1}) * w +
                                 torch::arange(patch, longs).view({1, 1, patch}))
                                    .view({1, c * patch * patch});
  const torch::Tensor index = base.view({-1, 1}) + offsets;
  return level.view(-1).index_select(0, index.view(-1)).view({positions.size(0), c * patch * patch});
}

// finalize_descriptors on a contiguous (M, 3k) float or double tensor, in place: per channel, the
// mean and the population std over all rows and that channel's k values. Sums in float64 over
// fixed blocks of rows (in parallel), added in block order: the result does not depend on the
// number of threads.
template <class T>
void normaliseRows(T* data, std::int64_t rows, std::int64_t per_channel) {
  constexpr std::int64_t kRows = 8192;
  const std::int64_t width = kSwdChannels * per_channel, blocks = (rows + kRows - 1) / kRows;
  std::vector<double> partial(static_cast<std::size_t>(blocks * kSwdChannels * 2), 0.0);
  at::parallel_for(0, blocks, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t b = lo; b < hi; ++b) {
      double* out = partial.data() + b * kSwdChannels * 2;
      for (std::int64_t r = b * kRows; r < std::min(rows, (b + 1) * kRows); ++r)
        for (std::int64_t c = 0; c < kSwdChannels; ++c) {
          const T* x = data + r * width + c * per_channel;
          double s = 0, ss = 0;
          for (std::int64_t k = 0; k < per_channel; ++k) {
            s += static_cast<double>(x[k]);
            ss += static_cast<double>(x[k]) * static_cast<double>(x[k]);
          }
          out[2 * c] += s;
          out[2 * c + 1] += ss;
        }
    }
  });
  double mean[kSwdChannels], scale[kSwdChannels];
  const double count = static_cast<double>(rows) * static_cast<double>(per_channel);
  for (std::int64_t c = 0; c < kSwdChannels; ++c) {
    double s = 0, ss = 0;
    for (std::int64_t b = 0; b < blocks; ++b) {
      s += partial[static_cast<std::size_t>((b * kSwdChannels + c) * 2)];
      ss += partial[static_cast<std::size_t>((b * kSwdChannels + c) * 2 + 1)];
    }
    mean[c] = s / count;
    const double variance = std::max(0.0, ss / count - mean[c] * mean[c]);
    scale[c] = variance > 0 ? 1.0 / std::sqrt(variance) : 1.0;  // a constant channel stays 0
  }
  at::parallel_for(0, rows, 4096, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r)
      for (std::int64_t c = 0; c < kSwdChannels; ++c) {
        T* x = data + r * width + c * per_channel;
        for (std::int64_t k = 0; k < per_channel; ++k)
          x[k] = static_cast<T>((static_cast<double>(x[k]) - mean[c]) * scale[c]);
      }
  });
}

void normaliseInPlace(torch::Tensor& descriptors) {
  const std::int64_t per_channel = descriptors.size(1) / kSwdChannels;
  if (descriptors.scalar_type() == torch::kFloat64) normaliseRows(descriptors.data_ptr<double>(), descriptors.size(0), per_channel);
  else normaliseRows(descriptors.data_ptr<float>(), descriptors.size(0), per_channel);
}

// An order-preserving unsigned key of a finite value (a positive value's sign bit set, a negative
// one's bits flipped), and back.
template <class T, class Key>
Key keyOf(T value) {
  constexpr Key kSign = Key(1) << (sizeof(Key) * 8 - 1);
  Key u;
  std::memcpy(&u, &value, sizeof u);
  return (u & kSign) ? static_cast<Key>(~u) : static_cast<Key>(u | kSign);
}

template <class T, class Key>
T valueOf(Key key) {
  constexpr Key kSign = Key(1) << (sizeof(Key) * 8 - 1);
  const Key u = (key & kSign) ? static_cast<Key>(key & ~kSign) : static_cast<Key>(~key);
  T value;
  std::memcpy(&value, &u, sizeof value);
  return value;
}

// LSD radix sort of n keys on their low `bits` bits (the higher bits being equal), 11 bits a pass;
// a pass whose digit every key shares is skipped. The result ends in `keys`.
template <class Key>
void lowBitsSort(Key* keys, Key* scratch, std::size_t n, unsigned bits) {
  constexpr unsigned kBits = 11, kBuckets = 1u << kBits;
  std::array<std::size_t, kBuckets> count;
  Key* from = keys;
  Key* to = scratch;
  for (unsigned shift = 0; shift < bits; shift += kBits) {
    const Key mask = static_cast<Key>((Key(1) << std::min(kBits, bits - shift)) - 1);
    count.fill(0);
    for (std::size_t i = 0; i < n; ++i) ++count[(from[i] >> shift) & mask];
    if (count[(from[0] >> shift) & mask] == n) continue;
    std::size_t sum = 0;
    for (std::size_t& c : count) sum += std::exchange(c, sum);  // exclusive prefix sums
    for (std::size_t i = 0; i < n; ++i) to[count[(from[i] >> shift) & mask]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys) std::copy(from, from + n, keys);
}

// Rows of at most this many float32 values are sorted by one LSD radix sort of their whole keys:
// they stay in the cache, and the top bits' buckets of such a row (a few dozen exponents hold
// most values) are left to std::sort. 4× faster on rows of 38,400 (300 images), the same at
// 2^17 and slower above (measured, 2-core VM).
constexpr std::size_t kWholeRadixRow = std::size_t(1) << 17;

// The keys of n ≥ 1 finite values, sorted ascending into `keys`: one most-significant-digit pass
// on the top 11 bits (sign, exponent) while the keys are made, then each bucket by an LSD radix
// sort of the remaining bits (small buckets by std::sort). The buckets are small enough to stay
// in the cache, where a whole-array LSD sort of a million keys would not: O(n), several times
// std::sort's speed on rows of a million. A short float32 row is one LSD sort (kWholeRadixRow).
// `keys` and `scratch` hold n keys each; the values are left as they are.
template <class T, class Key>
void sortedKeys(const T* values, Key* keys, Key* scratch, std::size_t n) {
  static_assert(sizeof(T) == sizeof(Key), "one key per value");
  if (sizeof(Key) == 4 && n <= kWholeRadixRow) {
    for (std::size_t i = 0; i < n; ++i) keys[i] = keyOf<T, Key>(values[i]);
    lowBitsSort(keys, scratch, n, sizeof(Key) * 8);
    return;
  }
  constexpr unsigned kTopBits = 11, kTop = 1u << kTopBits, kLowBits = sizeof(Key) * 8 - kTopBits;
  std::vector<std::size_t> begin(kTop + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Key k = keyOf<T, Key>(values[i]);
    scratch[i] = k;
    ++begin[(k >> kLowBits) + 1];
  }
  for (unsigned b = 0; b < kTop; ++b) begin[b + 1] += begin[b];
  std::vector<std::size_t> next(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < n; ++i) keys[next[scratch[i] >> kLowBits]++] = scratch[i];
  constexpr std::size_t kSmall = 2048;  // below this, std::sort beats clearing radix counts
  for (unsigned b = 0; b < kTop; ++b) {
    const std::size_t first = begin[b], count = begin[b + 1] - first;
    if (count < 2) continue;
    if (count < kSmall) std::sort(keys + first, keys + first + count);
    else lowBitsSort(keys + first, scratch + first, count, kLowBits);
  }
}

// The projections of rows `a` on the directions `d` (rows), as a (directions, rows) matrix: row
// blocks in parallel, each written straight into its columns (BLAS reads `a` transposed, no copy),
// so that `a` is read once for all the directions of a chunk.
// `buffer` holds at least d.size(0) rows of a.size(0) values; the result is its first rows.
torch::Tensor project(const torch::Tensor& d, const torch::Tensor& a, const torch::Tensor& buffer) {
  const std::int64_t rows = a.size(0);
  torch::Tensor out = buffer.narrow(0, 0, d.size(0));
  constexpr std::int64_t kRowsPerTask = 16384;
  at::parallel_for(0, (rows + kRowsPerTask - 1) / kRowsPerTask, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t t = lo; t < hi; ++t) {
      const std::int64_t r0 = t * kRowsPerTask, count = std::min(kRowsPerTask, rows - r0);
      torch::Tensor part = out.narrow(1, r0, count);
      torch::mm_out(part, d, a.narrow(0, r0, count).t());
    }
  });
  return out;
}

// For each row r of the (directions, rows) projections: Σ_i |sorted pa[r]_i − sorted pb[r]_i|,
// rows in parallel, each sum taken in order in float64 (so the figure does not depend on the
// number of threads).
template <class T, class Key>
void sortedDifferenceSums(const torch::Tensor& pa, const torch::Tensor& pb, double* sums) {
  const auto cols = static_cast<std::size_t>(pa.size(1));
  const T* da = pa.data_ptr<T>();
  const T* db = pb.data_ptr<T>();
  at::parallel_for(0, pa.size(0), 1, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<Key> keys_a(cols), keys_b(cols), scratch(cols);
    for (std::int64_t r = lo; r < hi; ++r) {
      sortedKeys<T, Key>(da + static_cast<std::size_t>(r) * cols, keys_a.data(), scratch.data(), cols);
      sortedKeys<T, Key>(db + static_cast<std::size_t>(r) * cols, keys_b.data(), scratch.data(), cols);
      double sum = 0;
      for (std::size_t i = 0; i < cols; ++i)
        sum += std::abs(static_cast<double>(valueOf<T, Key>(keys_a[i])) - static_cast<double>(valueOf<T, Key>(keys_b[i])));
      sums[r] = sum;
    }
  });
}

std::int64_t directionsPerChunk(std::int64_t rows, std::int64_t projections) {
  return std::clamp<std::int64_t>(kProjectionValues / rows, 1, projections);
}

// Each set's projections of a chunk of directions. Allocated once per computation: fresh pages for
// every chunk would cost the kernel more than the sorts.
struct ProjectionBuffers {
  torch::Tensor a, b;
  static ProjectionBuffers make(std::int64_t rows, std::int64_t projections, torch::ScalarType dtype) {
    const std::int64_t chunk = directionsPerChunk(rows, projections);
    const auto options = torch::TensorOptions().dtype(dtype);
    return {torch::empty({chunk, rows}, options), torch::empty({chunk, rows}, options)};
  }
};

// Σ over directions and ranks of |sorted a·d − sorted b·d| for unit columns d of `directions`
// (same dtype as a and b), a chunk of directions at a time (projections in parallel over rows,
// sorts in parallel over directions); each direction's sum is added in direction order.
// nullopt when `tick` (told once per chunk) cancels.
std::optional<double> sumOfSortedDifferences(const torch::Tensor& a, const torch::Tensor& b,
                                             const torch::Tensor& directions, const ProjectionBuffers& buffers,
                                             const std::function<bool()>& tick) {
  const std::int64_t p = directions.size(1), chunk = directionsPerChunk(a.size(0), p);
  const torch::Tensor rows_of_directions = directions.t().contiguous();
  std::vector<double> sums(static_cast<std::size_t>(p), 0.0);
  const torch::Tensor& buffer_a = buffers.a;
  const torch::Tensor& buffer_b = buffers.b;
  for (std::int64_t d0 = 0; d0 < p; d0 += chunk) {
    const torch::Tensor d = rows_of_directions.narrow(0, d0, std::min(chunk, p - d0));
    torch::Tensor pa = project(d, a, buffer_a), pb = project(d, b, buffer_b);
    if (a.scalar_type() == torch::kFloat64) sortedDifferenceSums<double, std::uint64_t>(pa, pb, sums.data() + d0);
    else sortedDifferenceSums<float, std::uint32_t>(pa, pb, sums.data() + d0);
    if (tick && !tick()) return std::nullopt;
  }
  return std::accumulate(sums.begin(), sums.end(), 0.0);
}

torch::Tensor unitColumns(const torch::Tensor& d) { return d / d.square().sum(0, /*keepdim=*/true).sqrt(); }

torch::Tensor drawPositions(std::int64_t images, std::int64_t size, std::int64_t per_image, int patch,
                            std::uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const auto longs = torch::TensorOptions().dtype(torch::kLong);
  const std::int64_t half = patch / 2, m = images * per_image;
  const torch::Tensor image = torch::arange(images, longs).view({images, 1}).expand({images, per_image});
  // Karras: np.random.randint(H, S − H), the centre of a patch that lies inside the level
  return torch::cat({image.reshape({m, 1}), torch::randint(half, size - half, {m, 2}, generator, longs)}, 1);
}

torch::Tensor drawDirections(std::int64_t dim, std::int64_t count, std::uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  return unitColumns(torch::randn({dim, count}, generator, torch::TensorOptions().dtype(torch::kFloat64)));
}

// `keep` of `from` indices, a seeded draw without replacement, in increasing order.
torch::Tensor subsample(std::int64_t from, std::int64_t keep, std::uint64_t seed) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const torch::Tensor drawn = torch::randperm(from, generator, torch::TensorOptions().dtype(torch::kLong));
  return std::get<0>(drawn.narrow(0, 0, keep).sort());
}

// The descriptors of one level of a set (its images in `order` when defined) into `out`, block by
// block. false when `tick` cancels.
bool describeSwdOptions(const torch::Tensor& images, const torch::Tensor& order, const torch::Tensor& positions, std::size_t level,
              std::size_t levels, const SlicedWassersteinOptions& o, torch::ScalarType dtype, LaplacianPatches& patches,
              const torch::Tensor& out, const std::function<bool()>& tick) {
  const std::int64_t per_image = o.patches_per_image, n = positions.size(0) / per_image;
  for (std::int64_t i0 = 0; i0 < n; i0 += o.block) {
    const std::int64_t count = std::min(o.block, n - i0);
    const torch::Tensor chosen =
        order.defined() ? images.index_select(0, order.narrow(0, i0, count)) : images.narrow(0, i0, count);
    torch::Tensor pos = positions.narrow(0, i0 * per_image, count * per_image).clone();
    pos.select(1, 0).sub_(i0);
    patches.gather(chosen.to(dtype).contiguous(), level, levels, pos, o.patch_size,
                   out.narrow(0, i0 * per_image, count * per_image));
    if (!tick()) return false;
  }
  return true;
}

Result<SlicedWassersteinResult> computeChecked(const torch::Tensor& a, const torch::Tensor& b,
                                               const SlicedWassersteinOptions& o) {
  if (Status s = checkSwdOptions(o); !s) return makeError(s.error());
  if (Status s = checkSwdImages(a, "the first set", o.min_resolution, true); !s) return makeError(s.error());
  if (Status s = checkSwdImages(b, "the second set", o.min_resolution, true); !s) return makeError(s.error());
  if (a.size(2) != b.size(2))
    return makeError("SWD: the first set holds " + px(a.size(2)) + " images, the second " + px(b.size(2)));
  const std::int64_t n = std::min(a.size(0), b.size(0)), size = a.size(2), p = o.projections;
  const std::int64_t dim = kSwdChannels * o.patch_size * o.patch_size;
  if (static_cast<double>(n) * static_cast<double>(o.patches_per_image) * static_cast<double>(dim) > 4e18)
    return makeError("SWD: " + std::to_string(n) + " images × " + std::to_string(o.patches_per_image) +
                     " patches: too many");
  const std::int64_t m = n * o.patches_per_image;
  torch::NoGradGuard no_grad;
  const torch::Tensor order_a = a.size(0) > n ? subsample(a.size(0), n, streamSeed(o.seed, 0)) : torch::Tensor();
  const torch::Tensor order_b = b.size(0) > n ? subsample(b.size(0), n, streamSeed(o.seed, 1)) : torch::Tensor();
  const std::vector<int> levels = SlicedWasserstein::resolutions(size, o.min_resolution);
  const torch::ScalarType dtype = o.float64 ? torch::kFloat64 : torch::kFloat32;
  const std::int64_t blocks = (n + o.block - 1) / o.block, chunk = directionsPerChunk(m, p);
  const double units = static_cast<double>(levels.size()) * static_cast<double>(2 * blocks + (p + chunk - 1) / chunk);
  std::int64_t done = 0;
  const std::function<bool()> tick = [&] {
    ++done;
    return !o.progress || o.progress(std::min(1.0, static_cast<double>(done) / units));
  };

  // Allocated once for all levels: fresh pages for every level would cost the kernel more than
  // the pyramid.
  LaplacianPatches patches;
  torch::Tensor desc_a = torch::empty({m, dim}, torch::TensorOptions().dtype(dtype));
  torch::Tensor desc_b = torch::empty({m, dim}, torch::TensorOptions().dtype(dtype));
  const ProjectionBuffers buffers = ProjectionBuffers::make(m, p, dtype);
  SlicedWassersteinResult result;
  result.images = n;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const std::uint64_t stream = 2 + 3 * static_cast<std::uint64_t>(l);
    const auto positions = [&](std::uint64_t s) {
      return drawPositions(n, levels[l], o.patches_per_image, o.patch_size, streamSeed(o.seed, s));
    };
    const torch::Tensor pos_a = positions(stream), pos_b = o.shared_positions ? pos_a : positions(stream + 1);
    if (!describeSwdOptions(a, order_a, pos_a, l, levels.size(), o, dtype, patches, desc_a, tick) ||
        !describeSwdOptions(b, order_b, pos_b, l, levels.size(), o, dtype, patches, desc_b, tick))
      return makeError("SWD: cancelled");
    normaliseInPlace(desc_a);
    normaliseInPlace(desc_b);
    const torch::Tensor directions = drawDirections(dim, p, streamSeed(o.seed, stream + 2)).to(dtype);
    const std::optional<double> sum = sumOfSortedDifferences(desc_a, desc_b, directions, buffers, tick);
    if (!sum) return makeError("SWD: cancelled");
    result.resolutions.push_back(levels[l]);
    result.distances_e3.push_back(*sum / (static_cast<double>(m) * static_cast<double>(p)) * 1e3);
  }
  result.mean_e3 = std::accumulate(result.distances_e3.begin(), result.distances_e3.end(), 0.0) /
                   static_cast<double>(result.distances_e3.size());
  return result;
}

}  // namespace

std::vector<int> SlicedWasserstein::resolutions(std::int64_t size, int min_resolution) {
  std::vector<int> out;
  if (min_resolution < 1) return out;
  for (std::int64_t r = size; r >= min_resolution; r /= 2) out.push_back(static_cast<int>(r));
  return out;
}

Result<SlicedWassersteinResult> SlicedWasserstein::compute(const torch::Tensor& a, const torch::Tensor& b,
                                                           const SlicedWassersteinOptions& options) {
  try {
    return computeChecked(a, b, options);
  } catch (const c10::Error& e) {  // out of memory
    return makeError(std::string("SWD: ") + e.what_without_backtrace());
  }
}

Result<std::vector<torch::Tensor>> SlicedWasserstein::laplacianPyramid(const torch::Tensor& images,
                                                                       int min_resolution) {
  if (min_resolution < 4) return makeError("SWD: the smallest level must be at least 4 px, got " + px(min_resolution));
  if (Status s = checkSwdImages(images, "the image set", min_resolution, true); !s) return makeError(s.error());
  try {
    torch::NoGradGuard no_grad;
    const std::size_t count = resolutions(images.size(2), min_resolution).size();
    std::vector<torch::Tensor> pyramid{images.to(torch::kFloat64).contiguous()};
    for (std::size_t i = 1; i < count; ++i) pyramid.push_back(pyrDown(pyramid.back()));  // Gaussian levels
    for (std::size_t i = 0; i + 1 < count; ++i) pyramid[i] = pyramid[i] - pyrUp(pyramid[i + 1]);
    return pyramid;
  } catch (const c10::Error& e) {
    return makeError(std::string("SWD: ") + e.what_without_backtrace());
  }
}

Result<torch::Tensor> SlicedWasserstein::patchDescriptors(const torch::Tensor& level, const torch::Tensor& positions,
                                                          int patch_size) {
  if (patch_size < 1 || patch_size % 2 == 0)
    return makeError("SWD: the patch size must be odd and at least 1, got " + std::to_string(patch_size));
  if (Status s = checkSwdImages(level, "the level", patch_size, false); !s) return makeError(s.error());
  if (!positions.defined() || positions.dim() != 2 || positions.size(1) != 3 || positions.size(0) == 0)
    return makeError("SWD: the positions must be rows (image, row, column), at least one");
  if (!c10::isIntegralType(positions.scalar_type(), /*includeBool=*/false))
    return makeError("SWD: the positions must be integers");
  const std::int64_t half = patch_size / 2, size = level.size(2);
  const torch::Tensor pos = positions.to(torch::kLong);
  const std::int64_t limits[3][2] = {{0, level.size(0) - 1}, {half, size - 1 - half}, {half, size - 1 - half}};
  const char* names[3] = {"image index", "centre row", "centre column"};
  for (int j = 0; j < 3; ++j) {
    const auto [lowest, highest] = torch::aminmax(pos.select(1, j));
    const std::int64_t lo = lowest.item<std::int64_t>(), hi = highest.item<std::int64_t>();
    if (lo < limits[j][0] || hi > limits[j][1])
      return makeError(std::string("SWD: a patch ") + names[j] + " is outside " + std::to_string(limits[j][0]) + ".." +
                       std::to_string(limits[j][1]) + " (got " + std::to_string(lo < limits[j][0] ? lo : hi) + ")");
  }
  try {
    torch::NoGradGuard no_grad;
    return gatherPatches(level.contiguous(), pos, patch_size);
  } catch (const c10::Error& e) {
    return makeError(std::string("SWD: ") + e.what_without_backtrace());
  }
}

Result<torch::Tensor> SlicedWasserstein::normaliseDescriptors(const torch::Tensor& descriptors) {
  if (!descriptors.defined() || descriptors.dim() != 2 || descriptors.size(0) == 0 || descriptors.size(1) == 0 ||
      descriptors.size(1) % kSwdChannels != 0)
    return makeError("SWD: descriptors must be a non-empty matrix with 3·k columns");
  torch::NoGradGuard no_grad;
  torch::Tensor out = descriptors.to(torch::kFloat64).clone().contiguous();
  if (!torch::isfinite(out).all().item<bool>()) return makeError("SWD: the descriptors contain NaN or Inf values");
  normaliseInPlace(out);
  return out;
}

Result<double> SlicedWasserstein::distance(const torch::Tensor& a, const torch::Tensor& b,
                                           const torch::Tensor& directions) {
  if (!a.defined() || !b.defined() || a.dim() != 2 || b.dim() != 2 || a.size(0) == 0 || a.size(1) == 0)
    return makeError("SWD: descriptor sets must be non-empty matrices");
  if (a.sizes() != b.sizes())
    return makeError("SWD: the descriptor sets are " + std::to_string(a.size(0)) + "x" + std::to_string(a.size(1)) +
                     " and " + std::to_string(b.size(0)) + "x" + std::to_string(b.size(1)) + ", they must match");
  if (!directions.defined() || directions.dim() != 2 || directions.size(0) != a.size(1) || directions.size(1) == 0)
    return makeError("SWD: the directions must be a matrix of " + std::to_string(a.size(1)) + " rows");
  try {
    torch::NoGradGuard no_grad;
    const torch::Tensor a64 = a.to(torch::kFloat64).contiguous(), b64 = b.to(torch::kFloat64).contiguous();
    const torch::Tensor d64 = directions.to(torch::kFloat64);
    if (!torch::isfinite(a64).all().item<bool>() || !torch::isfinite(b64).all().item<bool>() ||
        !torch::isfinite(d64).all().item<bool>())
      return makeError("SWD: the descriptors or directions contain NaN or Inf values");
    if ((d64.square().sum(0) == 0).any().item<bool>()) return makeError("SWD: a direction is zero");
    const std::optional<double> sum =
        sumOfSortedDifferences(a64, b64, unitColumns(d64), ProjectionBuffers::make(a.size(0), directions.size(1), torch::kFloat64), {});
    return *sum / (static_cast<double>(a.size(0)) * static_cast<double>(directions.size(1)));
  } catch (const c10::Error& e) {
    return makeError(std::string("SWD: ") + e.what_without_backtrace());
  }
}

}  // namespace streetgan
