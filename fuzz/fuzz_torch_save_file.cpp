// readTorchSaveFile on arbitrary bytes written to a file: the zip directory, LibTorch's zip
// reader (its exceptions must come back as an Error), the pickle and the storages.
#include "core/formats/torch_save_file.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-torch-save");
  static const std::string path = scratch.file("input.pt");
  if (!scratch.write("input.pt", data, size)) return 0;
  (void)streetgan::readTorchSaveFile(path);
  return 0;
}
