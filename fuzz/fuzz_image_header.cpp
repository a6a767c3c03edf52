// parseImageHeader (JPEG, PNG, BMP … headers read before any pixel is decoded).
#include "core/data/image_header.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)streetgan::parseImageHeader(data, size);
  return 0;
}
