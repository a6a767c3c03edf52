#pragma once
// Opening a checkpoint file for reading: the one road from a file to the LibTorch archive that
// checkpoint.cpp restores a run from. The file is opened once; checkLibTorchArchive
// (core/formats/libtorch_archive_check.h) reads it through that descriptor before LibTorch's own
// reader, which crashes on a crafted pickle or runs an archive's TorchScript, sees a byte of it,
// and LibTorch then reads the same descriptor. Every failure, LibTorch's exceptions included,
// comes back as one line naming the file. fuzz/fuzz_checkpoint drives this path.
#include "core/config/train_config.h"
#include "core/util/result.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace torch::serialize {
class InputArchive;
}

namespace streetgan {

/// The checkpoint format this build writes and reads.
constexpr std::int64_t kCheckpointFormatVersion = 1;

/// Opens the checkpoint at `path` into `archive`, its tensors on `device`. May throw LibTorch's
/// exceptions for what the check let through; callers translate them with checkpointReadFailure.
Status openCheckpointArchive(torch::serialize::InputArchive& archive, const std::string& path, const c10::Device& device);

/// The config stored in an open checkpoint archive.
Result<TrainConfig> readCheckpointArchiveConfig(torch::serialize::InputArchive& archive, const std::string& path);

/// Inside a catch block: the exception being handled as reading `path` failed ("PATH: cannot read
/// the checkpoint (...)"; a file of Python's torch.save is named as one, with the import command).
Error checkpointReadFailure(const std::string& path);

}  // namespace streetgan
