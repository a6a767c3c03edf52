#include "core/formats/zip_directory.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace streetgan {
namespace {

constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kEntrySignature = 0x02014b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kEntrySize = 46;
// The directory is read into memory whole; 1 M records of short names fit well inside this.
constexpr std::uint64_t kMaxDirectoryBytes = 256ull << 20;

std::uint64_t little(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

struct Span {
  std::uint64_t entries = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

Result<Span> zip64End(const ZipByteSource& read, std::uint64_t size, std::uint64_t end_at) {
  if (end_at < 20) return makeError("its ZIP64 end record is missing");
  char locator[20];
  if (!read(end_at - 20, locator, sizeof locator) || little(locator, 4) != kZip64LocatorSignature)
    return makeError("its ZIP64 end record is missing");
  const std::uint64_t at = little(locator + 8, 8);
  char end[56];
  if (at > size || size - at < sizeof end || !read(at, end, sizeof end) || little(end, 4) != kZip64EndSignature)
    return makeError("its ZIP64 end record lies outside the file");
  return Span{little(end + 32, 8), little(end + 48, 8), little(end + 40, 8)};
}

// The sizes an entry marks 0xFFFFFFFF are in its ZIP64 extra field (id 1), in this order.
Status zip64Sizes(const char* extra, std::size_t length, ZipRecord& record, bool big_uncompressed, bool big_compressed) {
  std::size_t pos = 0;
  while (length - pos >= 4) {
    const auto id = little(extra + pos, 2);
    const auto n = static_cast<std::size_t>(little(extra + pos + 2, 2));
    pos += 4;
    if (n > length - pos) return makeError("an extra field runs past its entry");
    if (id == 1) {
      std::size_t at = 0;
      if (big_uncompressed) {
        if (n - at < 8) return makeError("a ZIP64 field is too short");
        record.uncompressed_size = little(extra + pos + at, 8);
        at += 8;
      }
      if (big_compressed) {
        if (n - at < 8) return makeError("a ZIP64 field is too short");
        record.compressed_size = little(extra + pos + at, 8);
      }
      return {};
    }
    pos += n;
  }
  return makeError("an entry marks ZIP64 sizes but has no ZIP64 field");
}

}  // namespace

Result<ZipDirectory> readZipDirectory(const ZipByteSource& read, std::uint64_t size) {
  if (size < kEndSize) return makeError("it is too short to be a zip archive");
  // The end record is in the last 22 bytes plus a comment of at most 65,535.
  const std::uint64_t tail_size = std::min<std::uint64_t>(size, kEndSize + 0xffff);
  std::vector<char> tail(static_cast<std::size_t>(tail_size));
  if (!read(size - tail_size, tail.data(), tail.size())) return makeError("its end could not be read");
  std::size_t end = std::string::npos;
  for (std::size_t i = tail.size() - kEndSize + 1; i-- > 0;)
    if (little(&tail[i], 4) == kEndSignature) {
      end = i;
      break;
    }
  if (end == std::string::npos) return makeError("it has no zip end record: cut short, or not a zip archive");
  const char* e = &tail[end];
  Span span{little(e + 10, 2), little(e + 16, 4), little(e + 12, 4)};
  // A ZIP64 end record, where its locator stands before the end record, is what LibTorch's zip
  // reader (miniz) takes, whatever the end record says: so is it here, and an end record that
  // describes another directory is refused, or a check could read one directory and LibTorch
  // another.
  const std::uint64_t end_at = size - tail_size + end;
  char locator[4];
  const bool has_zip64 = end_at >= 20 && read(end_at - 20, locator, sizeof locator) &&
                         little(locator, 4) == kZip64LocatorSignature;
  const bool marked = span.entries == 0xffff || span.offset == 0xffffffff || span.size == 0xffffffff;
  if (has_zip64 || marked) {
    auto big = zip64End(read, size, end_at);
    if (!big) return makeError(big.error());
    if (!marked && (big->entries != span.entries || big->offset != span.offset || big->size != span.size))
      return makeError("its ZIP64 end record and its end record describe different directories");
    span = *big;
  }
  if (span.entries > ZipDirectory::kMaxRecords)
    return makeError("its directory lists " + std::to_string(span.entries) + " records; at most " +
                     std::to_string(ZipDirectory::kMaxRecords) + " are read");
  if (span.offset > size || span.size > size - span.offset || span.size > kMaxDirectoryBytes)
    return makeError("its directory lies outside the file");
  std::vector<char> dir(static_cast<std::size_t>(span.size));
  if (!dir.empty() && !read(span.offset, dir.data(), dir.size())) return makeError("its directory could not be read");

  ZipDirectory out;
  std::size_t pos = 0;
  for (std::uint64_t i = 0; i < span.entries; ++i) {
    if (dir.size() - pos < kEntrySize || little(&dir[pos], 4) != kEntrySignature)
      return makeError("its directory entry " + std::to_string(i) + " is malformed");
    const char* d = &dir[pos];
    ZipRecord record;
    record.method = static_cast<std::uint16_t>(little(d + 10, 2));
    record.compressed_size = little(d + 20, 4);
    record.uncompressed_size = little(d + 24, 4);
    const auto name_length = static_cast<std::size_t>(little(d + 28, 2));
    const auto extra_length = static_cast<std::size_t>(little(d + 30, 2));
    const auto comment_length = static_cast<std::size_t>(little(d + 32, 2));
    if (dir.size() - pos - kEntrySize < name_length + extra_length + comment_length)
      return makeError("its directory entry " + std::to_string(i) + " runs past the directory");
    std::string name(d + kEntrySize, name_length);
    const bool big_uncompressed = record.uncompressed_size == 0xffffffff;
    const bool big_compressed = record.compressed_size == 0xffffffff;
    if (big_uncompressed || big_compressed)
      if (Status s = zip64Sizes(d + kEntrySize + name_length, extra_length, record, big_uncompressed, big_compressed); !s)
        return makeError("its directory entry " + std::to_string(i) + ": " + s.error());
    pos += kEntrySize + name_length + extra_length + comment_length;
    name = ZipDirectory::key(std::move(name));
    const auto slash = name.find('/');
    // Two records may name the same record once their folders are removed ("a/data.pkl",
    // "b/data.pkl"): the larger is kept, so a check of the declared size never looks at the
    // smaller while LibTorch reads the larger.
    auto [at, inserted] = out.records.emplace(slash == std::string::npos ? name : name.substr(slash + 1), record);
    if (!inserted && record.uncompressed_size > at->second.uncompressed_size) at->second = record;
  }
  return out;
}

std::string ZipDirectory::key(std::string name) {
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return name;
}

const ZipRecord* ZipDirectory::find(std::string name) const {
  auto found = records.find(key(std::move(name)));
  return found == records.end() ? nullptr : &found->second;
}

Status zipRecordsFit(const ZipDirectory& directory, std::uint64_t size) {
  for (const auto& [name, record] : directory.records)
    if (record.uncompressed_size > size)
      return makeError("the record " + name + " would inflate to " + std::to_string(record.uncompressed_size) +
                       " bytes, more than the whole file (" + std::to_string(size) +
                       "); LibTorch never compresses its records");
  return {};
}

Status zipRecordsFitTheFile(const std::string& path) {
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return makeError(path + ": its size cannot be read (" + ec.message() + ")");
  auto directory = readZipDirectory(path);
  if (!directory) return makeError(path + ": cannot read the zip archive (" + directory.error() + ")");
  if (Status fits = zipRecordsFit(*directory, size); !fits) return makeError(path + ": " + fits.error());
  return {};
}

Result<ZipDirectory> readZipDirectory(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError("it cannot be opened");
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  if (end < 0) return makeError("its size cannot be read");
  const ZipByteSource read = [&in](std::uint64_t offset, char* out, std::size_t n) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(out, static_cast<std::streamsize>(n));
    return in.gcount() == static_cast<std::streamsize>(n);
  };
  return readZipDirectory(read, static_cast<std::uint64_t>(end));
}

}  // namespace streetgan
