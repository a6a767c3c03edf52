#include "core/train/checkpoint_archive.h"

#include "core/util/exception_message.h"
#include "core/formats/libtorch_archive_check.h"
#include "core/util/regular_file.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>

namespace streetgan {
namespace {

// A zip written by Python's torch.save has data.pkl but none of TorchScript's constants.pkl, which
// every LibTorch archive has: the original tool's checkpoints, which `streetgan import` reads.
bool isPythonTorchSave(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    return reader.hasRecord("data.pkl") && !reader.hasRecord("constants.pkl");
  } catch (const c10::Error&) {
    return false;
  }
}

}  // namespace

Status openCheckpointArchive(torch::serialize::InputArchive& archive, const std::string& path, const c10::Device& device) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::not_found) return makeError(path + ": the checkpoint does not exist");
  if (type == std::filesystem::file_type::none) return makeError(path + ": " + ec.message());
  if (type != std::filesystem::file_type::regular)
    return makeError(path + ": not a checkpoint (not a regular file: a folder, FIFO or device)");
  auto file = RegularFile::open(path);
  if (!file) return makeError(file.error());
  const auto size = static_cast<std::uint64_t>(file->size());
  const ArchiveReader read = fileArchiveReader(file->descriptor(), size);
  if (Status checked = checkLibTorchArchive(read, size); !checked)
    return makeError(path + ": cannot read the checkpoint (" + checked.error() + ")");
  archive.load_from(read, [size] { return static_cast<std::size_t>(size); }, device);
  torch::Tensor version;
  if (!archive.try_read("streetgan_checkpoint_version", version)) return makeError(path + ": not a StreetGAN checkpoint");
  if (version.numel() != 1 || version.item<std::int64_t>() != kCheckpointFormatVersion)
    return makeError(path + ": checkpoint format " + (version.numel() == 1 ? std::to_string(version.item<std::int64_t>()) : "?") +
                     " is not supported (this build reads format " + std::to_string(kCheckpointFormatVersion) + ")");
  return {};
}

Result<TrainConfig> readCheckpointArchiveConfig(torch::serialize::InputArchive& archive, const std::string& path) {
  c10::IValue text;
  archive.read("config", text);
  if (!text.isString()) return makeError(path + ": the checkpoint holds no config");
  return applyConfigText(TrainConfig{}, text.toStringRef(), ConfigScope::All, path + " (stored config)");
}

Error checkpointReadFailure(const std::string& path) {
  try {
    throw;
  } catch (const c10::Error& e) {
    // The zip is looked at again only now, so a good checkpoint is opened once.
    if (isPythonTorchSave(path))
      return makeError(path + ": not a StreetGAN checkpoint but a file of Python's torch.save; if the original tool "
                              "wrote it, import it first (streetgan import " + path + " --run-dir DIR)");
    return makeError(path + ": cannot read the checkpoint (" + firstLine(e.what_without_backtrace()) + ")");
  } catch (...) {
    return makeError(path + ": cannot read the checkpoint (" + exceptionMessage(std::current_exception()) + ")");
  }
}

}  // namespace streetgan
