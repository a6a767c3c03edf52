#include "core/util/torch_save_file.h"

#include "core/util/exception_message.h"
#include "core/util/pickle_reader.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace streetgan {
namespace {

std::string recordText(caffe2::serialize::PyTorchStreamReader& reader, const std::string& name) {
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

Result<PickleValue> readArchive(const std::string& path) {
  caffe2::serialize::PyTorchStreamReader reader(path);
  if (!reader.hasRecord("data.pkl"))
    return makeError(path + ": the zip holds no data.pkl, so torch.save did not write it");
  if (reader.hasRecord("byteorder") && recordText(reader, "byteorder") != "little")
    return makeError(path + ": the tensors are stored big-endian, which this build does not read");
  const std::string pickle = recordText(reader, "data.pkl");
  PickleReader unpickler([&reader](const std::string& key, torch::ScalarType dtype,
                                   std::int64_t numel) -> Result<torch::Tensor> {
    const std::string name = "data/" + key;
    if (!reader.hasRecord(name)) return makeError("the zip has no record " + name + " for a tensor");
    if (numel < 0) return makeError("the storage " + key + " has a negative size");
    auto [data, size] = reader.getRecord(name);
    const auto bytes = static_cast<std::size_t>(numel) * c10::elementSize(dtype);
    if (size < bytes)
      return makeError("the record " + name + " holds " + std::to_string(size) + " bytes, its tensor needs " +
                       std::to_string(bytes));
    torch::Tensor storage = torch::empty({numel}, torch::TensorOptions().dtype(dtype));
    if (bytes) std::memcpy(storage.data_ptr(), data.get(), bytes);
    return storage;
  });
  auto value = unpickler.read(pickle);
  if (!value) return makeError(path + ": " + value.error());
  return value;
}

}  // namespace

Result<PickleValue> readTorchSaveFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return makeError(path + ": no such file");
  char magic[2] = {0, 0};
  {
    std::ifstream in(path, std::ios::binary);
    in.read(magic, 2);
    if (in.gcount() < 2) return makeError(path + ": the file is empty or too short to be a checkpoint");
  }
  if (static_cast<unsigned char>(magic[0]) == 0x80)
    return makeError(path + ": written in PyTorch's legacy format (before 1.6, or with "
                            "_use_new_zipfile_serialization=False); load it in Python and torch.save it again");
  if (magic[0] != 'P' || magic[1] != 'K') return makeError(path + ": not a torch.save file (it is not a zip archive)");
  try {
    return readArchive(path);
  } catch (const c10::Error& e) {
    const std::string reason = firstLine(e.what_without_backtrace());
    // PyTorchStreamReader's own words for a zip torch.save did not write are an internal check.
    if (reason.find("hasRecord(\"version\")") != std::string::npos)
      return makeError(path + ": cannot read the zip archive (it has no version record, so torch.save did not write it)");
    return makeError(path + ": cannot read the zip archive (" + reason + ")");
  } catch (const std::exception& e) {
    return makeError(path + ": cannot read the zip archive (" + firstLine(e.what()) + ")");
  }
}

}  // namespace streetgan
