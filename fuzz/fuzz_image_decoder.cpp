// ImageDecoder on arbitrary bytes, at every channel count and JPEG reduction, with a small pixel
// limit so that a header claiming a large image is refused before OpenCV allocates it.
#include "core/data/image_decoder.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int channels = data[0] & 1 ? 3 : 1;
  const int reductions[] = {1, 2, 4, 8};
  streetgan::DecodeLimits limits;
  limits.max_pixels = 4'000'000;
  (void)streetgan::ImageDecoder::decode(data + 1, size - 1, "fuzz", channels, reductions[(data[0] >> 1) & 3], limits);
  return 0;
}
