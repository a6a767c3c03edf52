// ImageCache::open on an arbitrary file, then every record it lists read once.
#include "core/data/image_cache.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-cache");
  static const std::string path = scratch.file("input.sgcache");
  if (!scratch.write("input.sgcache", data, size)) return 0;
  auto cache = streetgan::ImageCache::open(path);
  if (cache)
    for (std::size_t i = 0; i < (*cache)->size() && i < 64; ++i) (void)(*cache)->image(i);
  return 0;
}
