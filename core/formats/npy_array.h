#pragma once
// NumPy's .npy format for float32 arrays, both ways: the bytes of an array (format 1.0, C order,
// little-endian '<f4', as numpy.save writes it) and an array read from such bytes. The reader takes
// files from anyone: it accepts format 1.0, 2.0 and 3.0 headers, only '<f4' in C order, at most
// kMaxDims dimensions, and checks the header's length, every dimension and their product against
// the bytes that are there before it allocates. A malformed file comes back as an Error with one
// line saying what is wrong (the caller puts the file's name in front).
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct NpyArray {
  std::vector<std::int64_t> shape;  ///< () for a scalar
  std::vector<float> values;        ///< C order: the last dimension varies fastest
  static constexpr std::size_t kMaxDims = 8;
  static constexpr std::uint32_t kMaxHeaderBytes = 65536;

  /// The .npy bytes of `values` with `shape` (their product must be values.size()).
  static std::string toBytes(const std::vector<std::int64_t>& shape, const float* values, std::size_t count);
  /// The array in `bytes`: Error when they are not a float32 .npy array in C order of exactly the
  /// size its header declares.
  static Result<NpyArray> fromBytes(const std::string& bytes);
};

}  // namespace streetgan
