#include "core/eval/laplacian_patches.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace streetgan {
namespace {

constexpr std::int64_t kPatchChannels = 3;
constexpr double kBinomialTaps[5] = {1, 4, 6, 4, 1};

// BORDER_REFLECT_101 for offsets of at most 2 on n ≥ 3 samples.
inline std::int64_t mirror(std::int64_t i, std::int64_t n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); }

// The 5 taps × gain / 16 in T, as LibTorch multiplies a T tensor by a double scalar.
template <class T>
struct Taps {
  explicit Taps(double gain) {
    for (int t = 0; t < 5; ++t) c[t] = static_cast<T>(kBinomialTaps[t] * gain / 16);
  }
  T c[5];
};

// One plane's filters, the sums in the order of SlicedWasserstein's tensor version (across the
// columns first, then down the rows; tap 0 multiplied, taps 1–4 added in turn) so that both agree
// to the last bits but for fused multiply-adds. `row` holds s + 4 values.
template <class T>
class PlaneFilters {
public:
  // s × s → s/2 × s/2: the binomial at even rows and columns. `tmp` holds s · s/2 values.
  static void down(const T* in, std::int64_t s, T* out, T* tmp, T* row) {
    const Taps<T> k(1.0);
    const std::int64_t h = s / 2;
    for (std::int64_t y = 0; y < s; ++y) {
      padRow(in + y * s, s, row);
      T* across = tmp + y * h;
      for (std::int64_t j = 0; j < h; ++j) {
        const T* p = row + 2 * j;
        T acc = p[0] * k.c[0];
        for (int t = 1; t < 5; ++t) acc = acc + p[t] * k.c[t];
        across[j] = acc;
      }
    }
    for (std::int64_t i = 0; i < h; ++i) {
      const T* r[5];
      for (int t = 0; t < 5; ++t) r[t] = tmp + mirror(2 * i + t - 2, s) * h;
      vertical(r, k, out + i * h, h);
    }
  }

  // h × h → 2h × 2h: zeros between the samples, then the binomial with gain 2 (4× in 2-D).
  // `tmp` holds h · 2h values, `zeros` 2h zeros.
  static void up(const T* g, std::int64_t h, T* out, T* tmp, T* row, const T* zeros) {
    const Taps<T> k(2.0);
    const std::int64_t s = 2 * h;
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t x = -2; x < s + 2; ++x) {
        const std::int64_t m = mirror(x, s);
        row[x + 2] = (m % 2 == 0) ? g[i * h + m / 2] : T(0);
      }
      T* across = tmp + i * s;
      for (std::int64_t x = 0; x < s; ++x) {
        const T* p = row + x;
        T acc = p[0] * k.c[0];
        for (int t = 1; t < 5; ++t) acc = acc + p[t] * k.c[t];
        across[x] = acc;
      }
    }
    for (std::int64_t y = 0; y < s; ++y) {
      const T* r[5];
      for (int t = 0; t < 5; ++t) {
        const std::int64_t m = mirror(y + t - 2, s);
        r[t] = (m % 2 == 0) ? tmp + (m / 2) * s : zeros;
      }
      vertical(r, k, out + y * s, s);
    }
  }

private:
  static void padRow(const T* in, std::int64_t s, T* row) {
    std::memcpy(row + 2, in, static_cast<std::size_t>(s) * sizeof(T));
    row[0] = in[2];
    row[1] = in[1];
    row[s + 2] = in[s - 2];
    row[s + 3] = in[s - 3];
  }

  static void vertical(const T* const* r, const Taps<T>& k, T* out, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) {
      T acc = r[0][j] * k.c[0];
      acc = acc + r[1][j] * k.c[1];
      acc = acc + r[2][j] * k.c[2];
      acc = acc + r[3][j] * k.c[3];
      acc = acc + r[4][j] * k.c[4];
      out[j] = acc;
    }
  }
};

// The level of one image's plane (s × s at the images' size) into `out` (its level's size).
template <class T>
void planeLevel(const T* plane, std::int64_t s, std::size_t level, std::size_t levels, T* out, std::vector<T>& work) {
  // work: two Gaussian planes (s²/4 each from the first halving on), a filter buffer (s²/2), the
  // padded row and a row of zeros (s + 4 each), and the pyrUp result (s² at most).
  const std::int64_t quarter = s * s / 4 + 1;
  work.resize(static_cast<std::size_t>(2 * quarter + s * s / 2 + 2 * (s + 4) + s * s + 1));
  T* g_a = work.data();
  T* g_b = g_a + quarter;
  T* tmp = g_b + quarter;
  T* row = tmp + s * s / 2 + 1;
  T* zeros = row + s + 4;
  T* upped = zeros + s + 4;
  std::fill(zeros, zeros + s + 4, T(0));
  const T* g = plane;
  std::int64_t size = s;
  for (std::size_t i = 0; i < level; ++i) {
    T* next = (g == g_a) ? g_b : g_a;
    PlaneFilters<T>::down(g, size, next, tmp, row);
    g = next;
    size /= 2;
  }
  if (level + 1 == levels) {
    std::copy(g, g + size * size, out);
    return;
  }
  T* down = (g == g_a) ? g_b : g_a;
  PlaneFilters<T>::down(g, size, down, tmp, row);
  PlaneFilters<T>::up(down, size / 2, upped, tmp, row, zeros);
  for (std::int64_t i = 0; i < size * size; ++i) out[i] = g[i] - upped[i];
}

template <class T>
void gatherTyped(const torch::Tensor& images, std::size_t level, std::size_t levels, const torch::Tensor& positions,
                 int patch, const torch::Tensor& out, std::vector<T>& planes) {
  const std::int64_t n = images.size(0), s = images.size(2), size = s >> level;
  const std::int64_t plane = size * size;
  planes.resize(static_cast<std::size_t>(n * kPatchChannels * plane));
  const T* in = images.data_ptr<T>();
  T* levels_out = planes.data();
  at::parallel_for(0, n * kPatchChannels, 8, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<T> work;
    for (std::int64_t p = lo; p < hi; ++p) planeLevel(in + p * s * s, s, level, levels, levels_out + p * plane, work);
  });
  const std::int64_t m = positions.size(0), half = patch / 2, width = kPatchChannels * patch * patch;
  const std::int64_t* pos = positions.data_ptr<std::int64_t>();
  T* dst = out.data_ptr<T>();
  at::parallel_for(0, m, 4096, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r) {
      const std::int64_t image = pos[3 * r], top = pos[3 * r + 1] - half, left = pos[3 * r + 2] - half;
      T* o = dst + r * width;
      for (std::int64_t c = 0; c < kPatchChannels; ++c) {
        const T* src = levels_out + (image * kPatchChannels + c) * plane + top * size + left;
        for (std::int64_t dy = 0; dy < patch; ++dy, o += patch)
          std::memcpy(o, src + dy * size, static_cast<std::size_t>(patch) * sizeof(T));
      }
    }
  });
}

}  // namespace

void LaplacianPatches::gather(const torch::Tensor& images, std::size_t level, std::size_t levels,
                              const torch::Tensor& positions, int patch, const torch::Tensor& out) {
  TORCH_CHECK(images.dim() == 4 && images.size(1) == kPatchChannels && images.is_contiguous(), "LaplacianPatches: images");
  TORCH_CHECK(out.is_contiguous() && out.scalar_type() == images.scalar_type(), "LaplacianPatches: out");
  TORCH_CHECK(positions.scalar_type() == torch::kLong && positions.is_contiguous(), "LaplacianPatches: positions");
  if (images.scalar_type() == torch::kFloat64) gatherTyped<double>(images, level, levels, positions, patch, out, levels_double_);
  else gatherTyped<float>(images, level, levels, positions, patch, out, levels_float_);
}

}  // namespace streetgan
