// The whole road from a checkpoint file to its config, on arbitrary bytes written to a file: the
// zip directory, checkLibTorchArchive (pickles, code/ files, storages), then LibTorch's own
// archive reader on what the check let through, the format version, the stored config and the
// counters and sub-archives a restore reads. Every exception must become checkpointReadFailure's
// one line; a crash or a sanitizer report is a defect.
#include "core/train/checkpoint_archive.h"
#include "fuzz/fuzz_scratch_folder.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

void readRestoredParts(torch::serialize::InputArchive& archive) {
  for (const char* key : {"epoch", "batch", "step", "images_seen", "world_size", "fixed_noise", "noise_rng_state"}) {
    torch::Tensor value;
    if (archive.try_read(key, value) && value.numel() == 1) (void)value.item<std::int64_t>();
  }
  for (const char* key : {"generator", "discriminator", "optimizer_g", "optimizer_d"}) {
    torch::serialize::InputArchive part;
    (void)archive.try_read(key, part);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const FuzzScratchFolder scratch("fuzz-checkpoint");
  static const std::string path = scratch.file("input.pt");
  if (!scratch.write("input.pt", data, size)) return 0;
  try {
    torch::serialize::InputArchive archive;
    if (!streetgan::openCheckpointArchive(archive, path, torch::kCPU)) return 0;
    (void)streetgan::readCheckpointArchiveConfig(archive, path);
    readRestoredParts(archive);
  } catch (...) {
    (void)streetgan::checkpointReadFailure(path);
  }
  return 0;
}
