#include "core/util/finite_values.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace streetgan {
namespace {

// A value is NaN or Inf exactly when all its exponent bits are set: an integer test per value
// with no branch, the block's answers ORed together; memory bandwidth bounds it.
template <typename Value, typename Bits, Bits kExponent>
bool exponentsFinite(const Value* values, std::int64_t count) {
  static_assert(sizeof(Value) == sizeof(Bits));
  std::atomic<bool> finite{true};
  constexpr std::int64_t kGrain = std::int64_t{1} << 16;
  at::parallel_for(0, count, kGrain, [&](std::int64_t lo, std::int64_t hi) {
    Bits all_set = 0;
    for (std::int64_t i = lo; i < hi; ++i) {
      Bits bits;
      std::memcpy(&bits, values + i, sizeof(Bits));
      all_set |= static_cast<Bits>((bits & kExponent) == kExponent);
    }
    if (all_set != 0) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

}  // namespace

bool allFinite(const torch::Tensor& t) {
  if (!t.defined() || t.numel() == 0 || !(t.is_floating_point() || t.is_complex())) return true;
  if (t.is_cpu() && t.is_contiguous()) {
    if (t.scalar_type() == torch::kFloat32)
      return exponentsFinite<float, std::uint32_t, 0x7f800000u>(t.data_ptr<float>(), t.numel());
    if (t.scalar_type() == torch::kFloat64)
      return exponentsFinite<double, std::uint64_t, 0x7ff0000000000000ull>(t.data_ptr<double>(), t.numel());
  }
  if (t.dim() == 0) return torch::isfinite(t).item<bool>();
  // LibTorch's check writes a bool tensor of what it reads: a slice of rows at a time keeps it small.
  constexpr std::int64_t kValuesPerSlice = std::int64_t{1} << 24;
  const std::int64_t rows = t.size(0), per_row = std::max<std::int64_t>(1, t.numel() / rows);
  const std::int64_t slice = std::max<std::int64_t>(1, kValuesPerSlice / per_row);
  for (std::int64_t row = 0; row < rows; row += slice)
    if (!torch::isfinite(t.narrow(0, row, std::min(slice, rows - row))).all().item<bool>()) return false;
  return true;
}

}  // namespace streetgan
