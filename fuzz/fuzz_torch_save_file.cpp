// readTorchSaveFile on arbitrary bytes written to a file: the zip directory, LibTorch's zip
// reader (its exceptions must come back as an Error), the pickle and the storages.
#include "core/util/torch_save_file.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-torch-save");
  static const std::string path = scratch.file("input.pt");
  if (!scratch.ok()) return 0;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  (void)streetgan::readTorchSaveFile(path);
  return 0;
}
