#pragma once
// CRC-32 (IEEE 802.3, the zlib/PNG polynomial), slicing-by-4, for the image cache's per-record
// checksums. crc32Update(0, data, n) gives the standard CRC of data.
#include <cstddef>
#include <cstdint>

namespace streetgan {

std::uint32_t crc32Update(std::uint32_t crc, const void* data, std::size_t size);

}  // namespace streetgan
