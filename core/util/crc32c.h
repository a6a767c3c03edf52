#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TensorFlow's record format checks
// each record's length and data with it, and the "masked" form those records store:
// rotate right by 15 bits, then add 0xa282ead8. crc32c(data, n) gives the standard CRC-32C.
#include <cstddef>
#include <cstdint>

namespace streetgan {

std::uint32_t crc32c(const void* data, std::size_t size);
/// TensorFlow's masked CRC-32C of `data` (what a TFRecord stores).
std::uint32_t maskedCrc32c(const void* data, std::size_t size);

}  // namespace streetgan
