// readZipDirectory on arbitrary bytes held in memory.
#include "core/formats/zip_directory.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const streetgan::ZipByteSource read = [data, size](std::uint64_t offset, char* out, std::size_t n) {
    if (offset > size || n > size - offset) return false;
    std::memcpy(out, data + offset, n);
    return true;
  };
  (void)streetgan::readZipDirectory(read, size);
  return 0;
}
