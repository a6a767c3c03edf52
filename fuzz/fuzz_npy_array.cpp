// NpyArray::fromBytes on arbitrary bytes (`sample --latents` reads any file it is given).
#include "core/formats/npy_array.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)streetgan::NpyArray::fromBytes(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
