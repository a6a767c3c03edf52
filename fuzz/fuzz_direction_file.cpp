// A <run>/directions/NAME.json file (a run folder may come from anyone): read from a file, then
// written again and read back as the same direction.
#include "core/latent/direction_file.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-direction");
  static const std::string path = scratch.file("direction-input.json");
  static const std::string again_path = scratch.file("direction-again.json");
  if (!scratch.write("direction-input.json", data, size)) return 0;
  auto read = streetgan::DirectionFile::read(path);
  if (!read) return 0;
  if (read->vector.empty() || read->vector.size() > static_cast<std::size_t>(streetgan::DirectionFile::kMaxNz)) std::abort();
  auto same_size = streetgan::DirectionFile::read(path, static_cast<int>(read->vector.size()));
  if (!same_size) std::abort();
  // What was read writes again and reads back the same (the vector is unit length already).
  if (!streetgan::DirectionFile::write(again_path, *read)) return 0;
  auto again = streetgan::DirectionFile::read(again_path);
  if (!again || again->has != read->has || again->lacks != read->lacks || again->name != read->name ||
      again->vector.size() != read->vector.size())
    std::abort();
  return 0;
}
