#include "core/formats/torch_save_file.h"

#include "core/util/exception_message.h"
#include "core/formats/pickle_reader.h"
#include "core/formats/zip_directory.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>

namespace streetgan {
namespace {

// The largest data.pkl read: a pickle becomes ~64 bytes of values per byte at worst, and a
// checkpoint's pickle (names, numbers, a loss history of a million iterations) is far smaller.
constexpr std::uint64_t kMaxPickleBytes = 64ull << 20;

// The record's declared size, checked before LibTorch's reader allocates it: torch.save stores
// records uncompressed, so one that would inflate past the whole file is refused.
Result<std::uint64_t> recordSize(const ZipDirectory& directory, std::uint64_t file_size, const std::string& name) {
  const ZipRecord* found = directory.find(name);
  if (!found) return makeError("the zip has no record " + name);
  if (found->uncompressed_size > file_size)
    return makeError("the record " + name + " would inflate to " + std::to_string(found->uncompressed_size) +
                     " bytes, more than the whole file (" + std::to_string(file_size) +
                     "); torch.save never compresses its records");
  return found->uncompressed_size;
}

std::string recordText(caffe2::serialize::PyTorchStreamReader& reader, const std::string& name) {
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

Result<PickleValue> readArchive(const std::string& path) {
  std::error_code ec;
  const std::uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return makeError(path + ": its size cannot be read (" + ec.message() + ")");
  if (Status fits = zipRecordsFitTheFile(path); !fits) return makeError(fits.error());
  auto directory = readZipDirectory(path);
  if (!directory) return makeError(path + ": cannot read the zip archive (" + directory.error() + ")");
  caffe2::serialize::PyTorchStreamReader reader(path);
  if (!reader.hasRecord("data.pkl"))
    return makeError(path + ": the zip holds no data.pkl, so torch.save did not write it");
  for (const char* name : {"data.pkl", "byteorder"})
    if (reader.hasRecord(name))
      if (auto size = recordSize(*directory, file_size, name); !size) return makeError(path + ": " + size.error());
  if (reader.hasRecord("byteorder") && recordText(reader, "byteorder") != "little")
    return makeError(path + ": the tensors are stored big-endian, which this build does not read");
  auto pickle_size = recordSize(*directory, file_size, "data.pkl");
  if (!pickle_size) return makeError(path + ": " + pickle_size.error());
  if (*pickle_size > kMaxPickleBytes)
    return makeError(path + ": its data.pkl is " + std::to_string(*pickle_size) + " bytes; at most " +
                     std::to_string(kMaxPickleBytes) + " are read");
  const std::string pickle = recordText(reader, "data.pkl");
  PickleReader unpickler([&reader, &directory, file_size](const std::string& key, torch::ScalarType dtype,
                                                        std::int64_t numel) -> Result<torch::Tensor> {
    const std::string name = "data/" + key;
    if (!reader.hasRecord(name)) return makeError("the zip has no record " + name + " for a tensor");
    if (numel < 0) return makeError("the storage " + key + " has a negative size");
    auto declared = recordSize(*directory, file_size, name);
    if (!declared) return makeError(declared.error());
    const auto element = static_cast<std::uint64_t>(c10::elementSize(dtype));
    if (static_cast<std::uint64_t>(numel) > *declared / element)
      return makeError("the record " + name + " holds " + std::to_string(*declared) + " bytes, its tensor of " +
                       std::to_string(numel) + " elements needs more");
    auto [data, size] = reader.getRecord(name);
    const auto bytes = static_cast<std::size_t>(numel) * element;
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

// Pickle opcodes (protocol 2), written the way Python's pickler writes them for a state dict.
class PickleBytes {
public:
  void op(char code) { bytes_ += code; }
  void proto() { bytes_ += "\x80\x02"; }
  void global(const std::string& module, const std::string& name) { bytes_ += "c" + module + "\n" + name + "\n"; }
  void string(const std::string& text) {
    op('X');
    int32(static_cast<std::int32_t>(text.size()));
    bytes_ += text;
  }
  void integer(std::int64_t value) {
    op('J');
    int32(static_cast<std::int32_t>(value));
  }
  void intTuple(c10::IntArrayRef values) {
    op('(');
    for (auto v : values) integer(v);
    op('t');
  }
  void emptyOrderedDict() {
    global("collections", "OrderedDict");
    op(')');
    op('R');
  }
  const std::string& bytes() const { return bytes_; }

private:
  void int32(std::int32_t value) {
    for (int i = 0; i < 4; ++i) bytes_ += static_cast<char>((static_cast<std::uint32_t>(value) >> (8 * i)) & 0xff);
  }
  std::string bytes_;
};

Result<std::string> storageName(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32: return std::string("FloatStorage");
    case torch::kFloat64: return std::string("DoubleStorage");
    case torch::kFloat16: return std::string("HalfStorage");
    case torch::kBFloat16: return std::string("BFloat16Storage");
    case torch::kInt64: return std::string("LongStorage");
    case torch::kInt32: return std::string("IntStorage");
    case torch::kUInt8: return std::string("ByteStorage");
    case torch::kBool: return std::string("BoolStorage");
    default: return makeError(std::string("tensors of type ") + c10::toString(type) + " are not written");
  }
}

}  // namespace

Result<std::string> torchSaveStateDict(const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  PickleBytes pickle;
  std::vector<torch::Tensor> storages;
  pickle.proto();
  pickle.emptyOrderedDict();
  pickle.op('(');
  for (const auto& [name, tensor] : tensors) {
    torch::Tensor data = tensor.detach().to(torch::kCPU).contiguous();
    auto storage = storageName(data.scalar_type());
    if (!storage) return makeError(name + ": " + storage.error());
    if (data.numel() > std::numeric_limits<std::int32_t>::max()) return makeError(name + ": too large to write");
    const std::string key = std::to_string(storages.size());
    storages.push_back(data);
    pickle.string(name);
    pickle.global("torch._utils", "_rebuild_tensor_v2");
    pickle.op('(');
    pickle.op('(');  // the persistent id: ('storage', torch.<Type>Storage, key, 'cpu', numel)
    pickle.string("storage");
    pickle.global("torch", *storage);
    pickle.string(key);
    pickle.string("cpu");
    pickle.integer(data.numel());
    pickle.op('t');
    pickle.op('Q');
    pickle.integer(0);  // storage offset
    pickle.intTuple(data.sizes());
    pickle.intTuple(data.strides());
    pickle.op('\x89');  // requires_grad False
    pickle.emptyOrderedDict();  // backward hooks
    pickle.op('t');
    pickle.op('R');
  }
  pickle.op('u');
  pickle.op('.');
  std::string out;
  try {
    caffe2::serialize::PyTorchStreamWriter writer([&out](const void* data, size_t size) {
      out.append(static_cast<const char*>(data), size);
      return size;
    });
    writer.writeRecord("data.pkl", pickle.bytes().data(), pickle.bytes().size());
    writer.writeRecord("byteorder", "little", 6);
    for (std::size_t i = 0; i < storages.size(); ++i)
      writer.writeRecord("data/" + std::to_string(i), storages[i].data_ptr(), storages[i].nbytes());
    writer.writeEndOfFile();
  } catch (const c10::Error& e) {
    return makeError(std::string("cannot write the zip archive (") + firstLine(e.what_without_backtrace()) + ")");
  }
  return out;
}

Result<PickleValue> readTorchSaveFile(const std::string& path) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::not_found) return makeError(path + ": no such file");
  if (type == std::filesystem::file_type::none) return makeError(path + ": " + ec.message());
  if (type != std::filesystem::file_type::regular) return makeError(path + ": not a regular file (a folder, FIFO or device)");
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
