#include "core/util/crc32.h"

#include <array>

namespace streetgan {
namespace {

using Tables = std::array<std::array<std::uint32_t, 256>, 4>;

Tables makeTables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (int s = 1; s < 4; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}

}  // namespace

std::uint32_t crc32Update(std::uint32_t crc, const void* data, std::size_t size) {
  static const Tables t = makeTables();
  const auto* p = static_cast<const std::uint8_t*>(data);
  crc = ~crc;
  while (size >= 4) {
    crc ^= std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
           (std::uint32_t(p[3]) << 24);
    crc = t[3][crc & 0xFF] ^ t[2][(crc >> 8) & 0xFF] ^ t[1][(crc >> 16) & 0xFF] ^ t[0][crc >> 24];
    p += 4;
    size -= 4;
  }
  while (size--) crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace streetgan
