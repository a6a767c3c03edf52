#include "core/formats/libtorch_archive_check.h"

#include "core/util/exception_message.h"
#include "core/formats/pickle_reader.h"
#include "core/formats/zip_directory.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <vector>

namespace streetgan {
namespace {

class ArchiveAdapter : public caffe2::serialize::ReadAdapterInterface {
public:
  ArchiveAdapter(ArchiveReader read, std::uint64_t size) : read_(std::move(read)), size_(size) {}
  std::size_t size() const override { return static_cast<std::size_t>(size_); }
  std::size_t read(std::uint64_t pos, void* buf, std::size_t n, const char*) const override { return read_(pos, buf, n); }

private:
  ArchiveReader read_;
  std::uint64_t size_;
};

// The declared classes of the code/ files and the archive classes each one's attributes name,
// in lower case: LibTorch finds a class's file without regard to case.
using ClassReferences = std::map<std::string, std::vector<std::string>>;

std::string lower(std::string text) { return ZipDirectory::key(std::move(text)); }

bool isWordChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

bool isIdentifier(std::string_view text) {
  if (text.empty() || (text[0] >= '0' && text[0] <= '9')) return false;
  for (char c : text)
    if (!isWordChar(c)) return false;
  return true;
}

bool consume(std::string_view& rest, std::string_view prefix) {
  if (rest.substr(0, prefix.size()) != prefix) return false;
  rest.remove_prefix(prefix.size());
  return true;
}

// A quoted name without escapes ("weight", "params/0"), as LibTorch writes attribute names.
bool consumeQuoted(std::string_view& rest) {
  if (!consume(rest, "\"")) return false;
  const auto end = rest.find('"');
  if (end == std::string_view::npos) return false;
  for (char c : rest.substr(0, end))
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  rest.remove_prefix(end + 1);
  return true;
}

// TYPE := NAME [ "[" TYPE { ", " TYPE } "]" ]; archive classes it names go to `refs`.
bool consumeType(std::string_view& rest, int depth, int max_depth, std::vector<std::string>& refs) {
  std::size_t n = 0;
  while (n < rest.size() && (isWordChar(rest[n]) || rest[n] == '.')) ++n;
  const std::string_view name = rest.substr(0, n);
  if (name.empty() || !(isWordChar(name[0]) && !(name[0] >= '0' && name[0] <= '9')) || name.back() == '.' ||
      name.find("..") != std::string_view::npos)
    return false;
  if (name.substr(0, 10) == "__torch__.") refs.push_back(lower(std::string(name)));
  rest.remove_prefix(n);
  if (!consume(rest, "[")) return true;
  if (depth + 1 > max_depth) return false;
  do {
    if (!consumeType(rest, depth + 1, max_depth, refs)) return false;
  } while (consume(rest, ", "));
  return consume(rest, "]");
}

// One line of a class body: `__parameters__ = ["a", ]`, `__buffers__ = []`, `__annotations__ = []`,
// `__annotations__["key"] = TYPE` or `name : TYPE`.
bool isAttributeLine(std::string_view rest, int max_depth, std::vector<std::string>& refs) {
  if (consume(rest, "__parameters__ = [") || consume(rest, "__buffers__ = [")) {
    while (consumeQuoted(rest))
      if (!consume(rest, ", ")) return false;
    return rest == "]";
  }
  if (rest == "__annotations__ = []") return true;
  if (consume(rest, "__annotations__[")) {
    if (!consumeQuoted(rest) || !consume(rest, "] = ")) return false;
    return consumeType(rest, 1, max_depth, refs) && rest.empty();
  }
  const auto colon = rest.find(" : ");
  if (colon == std::string_view::npos || !isIdentifier(rest.substr(0, colon))) return false;
  rest.remove_prefix(colon + 3);
  return consumeType(rest, 1, max_depth, refs) && rest.empty();
}

// `key` is "code/__torch__/___torch_mangle_3.py"; its classes are "__torch__.___torch_mangle_3.NAME".
Status checkCodeFile(const std::string& key, const std::string& text, int max_depth, ClassReferences& classes) {
  const std::string qualifier = [&] {
    std::string q = key.substr(5, key.size() - 5 - 3);
    for (char& c : q)
      if (c == '/') c = '.';
    return q;
  }();
  std::string current;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    std::string_view rest = line;
    std::vector<std::string> refs;
    if (consume(rest, "class ")) {
      const auto paren = rest.find('(');
      if (paren == std::string_view::npos || !isIdentifier(rest.substr(0, paren)) || rest.substr(paren) != "(Module):")
        return makeError(key + " line " + std::to_string(line_number) + " declares a class that is not a module");
      current = lower(qualifier + "." + std::string(rest.substr(0, paren)));
      classes[current];
      continue;
    }
    if (current.empty() || !consume(rest, "  ") || !isAttributeLine(rest, max_depth, refs))
      return makeError(key + " line " + std::to_string(line_number) +
                       " is not an attribute declaration; a checkpoint's classes hold data only, never code");
    auto& list = classes[current];
    list.insert(list.end(), refs.begin(), refs.end());
  }
  return {};
}

// Kahn's algorithm: the classes that can be removed, each once nothing left refers to it; any
// left over refer to themselves through some chain, which LibTorch's importer would follow forever.
Status checkNoCycle(const ClassReferences& classes) {
  std::map<std::string, std::size_t> referred;
  for (const auto& [name, refs] : classes) {
    referred.emplace(name, 0);
    for (const auto& ref : refs)
      if (classes.count(ref)) ++referred[ref];
  }
  std::vector<std::string> free;
  for (const auto& [name, count] : referred)
    if (count == 0) free.push_back(name);
  std::size_t removed = 0;
  while (!free.empty()) {
    const std::string name = free.back();
    free.pop_back();
    ++removed;
    for (const auto& ref : classes.at(name))
      if (classes.count(ref) && --referred[ref] == 0) free.push_back(ref);
  }
  if (removed == classes.size()) return {};
  // Left over: the classes on a cycle and those they hold. Those that hold nothing left over are
  // removed the same way, the other way round, until only classes on a cycle remain.
  std::map<std::string, std::size_t> holds;
  std::map<std::string, std::vector<std::string>> held_by;
  for (const auto& [name, count] : referred) {
    if (count == 0) continue;
    holds.emplace(name, 0);
    for (const auto& ref : classes.at(name))
      if (referred.count(ref) && referred.at(ref) > 0) {
        ++holds[name];
        held_by[ref].push_back(name);
      }
  }
  for (const auto& [name, count] : holds)
    if (count == 0) free.push_back(name);
  while (!free.empty()) {
    const std::string name = free.back();
    free.pop_back();
    holds.erase(name);
    for (const auto& holder : held_by[name])
      if (holds.count(holder) && --holds[holder] == 0) free.push_back(holder);
  }
  return makeError("its class " + (holds.empty() ? std::string("?") : holds.begin()->first) +
                   " holds itself (through its attributes' types)");
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class ArchiveCheck {
public:
  ArchiveCheck(const ArchiveReader& read, std::uint64_t size, const LibTorchArchiveLimits& limits)
      : read_(read), size_(size), limits_(limits) {}

  Status run() {
    if (Status zip = checkDirectory(); !zip) return zip;
    caffe2::serialize::PyTorchStreamReader reader(std::make_shared<ArchiveAdapter>(read_, size_));
    // The records LibTorch's reader lists must be the ones checked, name for name.
    const std::vector<std::string> names = reader.getAllRecords();
    const std::set<std::string> listed = [&] {
      std::set<std::string> keys;
      for (const std::string& name : names) keys.insert(ZipDirectory::key(name));
      return keys;
    }();
    if (listed.size() != names.size() || listed.size() != directory_.records.size())
      return makeError("two of its records have the same name once case and folders are ignored");
    for (const auto& [key, record] : directory_.records)
      if (!listed.count(key)) return makeError("its zip directories disagree (LibTorch's reader does not list " + key + ")");
    if (!directory_.find("data.pkl")) return makeError("it has no data.pkl, so LibTorch did not write it");
    ClassReferences classes;
    for (const auto& [key, record] : directory_.records) {
      Status checked;
      if (key == "model.json") checked = makeError("it is in the legacy format of PyTorch 1.0 (model.json), which is not read");
      else if (key == "data.pkl") checked = checkPickle(reader, key, "data/");
      else if (key == "constants.pkl") checked = checkPickle(reader, key, "constants/");
      else if (key.rfind("code/", 0) == 0 && endsWith(key, ".debug_pkl")) checked = checkPickle(reader, key, "");
      else if (key.rfind("code/", 0) == 0 && endsWith(key, ".py"))
        checked = limits_.code_is_data_only ? checkCode(reader, key, classes) : checkNoLoadTimeCode(reader, key);
      else if (key == "version" || key == ".data/version") checked = checkVersion(reader, key);
      if (!checked) return checked;
    }
    return checkNoCycle(classes);
  }

private:
  Status checkDirectory() {
    char magic[4] = {};
    if (size_ < 4 || read_(0, magic, 4) != 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0)
      return makeError("it is not a zip archive, as LibTorch writes its archives");
    const ZipByteSource source = [this](std::uint64_t offset, char* out, std::size_t n) { return read_(offset, out, n) == n; };
    auto directory = readZipDirectory(source, size_);
    if (!directory) return makeError("cannot read the zip archive (" + directory.error() + ")");
    directory_ = std::move(*directory);
    // torch.jit.save deflates its code/ records (its sources and their .debug_pkl): one may inflate
    // past the whole file, up to the bound record() reads them with. Every other record is stored.
    ZipDirectory stored = directory_;
    for (const auto& [key, record] : directory_.records)
      if (key.rfind("code/", 0) == 0 && record.compressed_size < record.uncompressed_size &&
          record.uncompressed_size <= std::max(limits_.max_pickle_bytes, limits_.max_code_bytes))
        stored.records.erase(key);
    return zipRecordsFit(stored, size_);
  }

  Result<std::string> record(caffe2::serialize::PyTorchStreamReader& reader, const std::string& key, std::uint64_t limit) {
    const std::uint64_t declared = directory_.find(key)->uncompressed_size;
    if (declared > limit)
      return makeError("its record " + key + " is " + std::to_string(declared) + " bytes; at most " + std::to_string(limit) +
                       " are read");
    auto [data, n] = reader.getRecord(key);
    return std::string(static_cast<const char*>(data.get()), n);
  }

  // The pickle's tensors are checked against their records' declared sizes, never read: each
  // storage becomes a tensor on the meta device, which has a size and no memory.
  Status checkPickle(caffe2::serialize::PyTorchStreamReader& reader, const std::string& key, const std::string& folder) {
    auto bytes = record(reader, key, limits_.max_pickle_bytes);
    if (!bytes) return makeError(bytes.error());
    PickleReader::Limits limits;
    limits.libtorch_archive = true;
    PickleReader pickle(
        [this, &key, &folder](const std::string& id, torch::ScalarType dtype, std::int64_t numel) -> Result<torch::Tensor> {
          if (folder.empty()) return makeError(key + " refers to a tensor, which it never holds");
          const ZipRecord* found = directory_.find(folder + id);
          if (!found) return makeError("it has no record " + folder + id + " for a tensor of " + key);
          const auto element = static_cast<std::uint64_t>(c10::elementSize(dtype));
          if (numel < 0 || static_cast<std::uint64_t>(numel) > found->uncompressed_size / element)
            return makeError("its record " + folder + id + " holds " + std::to_string(found->uncompressed_size) +
                             " bytes, fewer than the " + std::to_string(numel) + " elements " + key + " gives it");
          return torch::empty({numel}, torch::TensorOptions().dtype(dtype).device(torch::kMeta));
        },
        limits);
    auto value = pickle.read(*bytes);
    if (!value) return makeError("its " + key + ": " + value.error());
    return {};
  }

  Status checkCode(caffe2::serialize::PyTorchStreamReader& reader, const std::string& key, ClassReferences& classes) {
    auto text = record(reader, key, limits_.max_code_bytes);
    if (!text) return makeError(text.error());
    if (Status s = checkCodeFile(key, *text, limits_.max_type_depth, classes); !s) return makeError("its " + s.error());
    return {};
  }

  // A network's methods run only when called, after its operators are checked; a __setstate__
  // would run inside LibTorch's loader, before anything can be checked.
  Status checkNoLoadTimeCode(caffe2::serialize::PyTorchStreamReader& reader, const std::string& key) {
    auto text = record(reader, key, limits_.max_pickle_bytes);
    if (!text) return makeError(text.error());
    if (text->find("__setstate__") != std::string::npos)
      return makeError("its record " + key + " defines __setstate__, code that would run as it loads");
    return {};
  }

  Status checkVersion(caffe2::serialize::PyTorchStreamReader& reader, const std::string& key) {
    auto text = record(reader, key, 32);
    if (!text) return makeError(text.error());
    std::string digits = *text;
    while (!digits.empty() && (digits.back() == '\n' || digits.back() == '\r')) digits.pop_back();
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
      return makeError("its record " + key + " is not a version number");
    return {};
  }

  const ArchiveReader& read_;
  std::uint64_t size_;
  LibTorchArchiveLimits limits_;
  ZipDirectory directory_;
};

}  // namespace

ArchiveReader memoryArchiveReader(std::shared_ptr<const std::string> bytes) {
  return [bytes = std::move(bytes)](std::uint64_t offset, void* out, std::size_t n) -> std::size_t {
    if (offset >= bytes->size()) return 0;
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(n, bytes->size() - offset));
    std::memcpy(out, bytes->data() + offset, count);
    return count;
  };
}

ArchiveReader fileArchiveReader(int fd, std::uint64_t size) {
  return [fd, size](std::uint64_t offset, void* out, std::size_t n) -> std::size_t {
    if (offset >= size) return 0;
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, size - offset));
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd, static_cast<char*>(out) + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  };
}

std::shared_ptr<caffe2::serialize::ReadAdapterInterface> archiveAdapter(ArchiveReader read, std::uint64_t size) {
  return std::make_shared<ArchiveAdapter>(std::move(read), size);
}

Status checkLibTorchArchive(const ArchiveReader& read, std::uint64_t size, const LibTorchArchiveLimits& limits) {
  try {
    return ArchiveCheck(read, size, limits).run();
  } catch (const c10::Error& e) {
    return makeError("cannot read the zip archive (" + firstLine(e.what_without_backtrace()) + ")");
  } catch (const std::bad_alloc&) {
    return makeError("cannot read the zip archive (out of memory)");
  }
}

}  // namespace streetgan
