// ImageCache::open on an arbitrary file, then every record it lists read once.
#include "core/data/image_cache.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-cache");
  static const std::string path = scratch.file("input.sgcache");
  if (!scratch.ok()) return 0;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  auto cache = streetgan::ImageCache::open(path);
  if (cache)
    for (std::size_t i = 0; i < (*cache)->size() && i < 64; ++i) (void)(*cache)->image(i);
  return 0;
}
