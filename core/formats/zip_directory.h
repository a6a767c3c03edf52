#pragma once
// ZipDirectory: the records a zip archive's central directory lists (ZIP64 included), with the
// sizes it declares, read before any record is inflated. torch.save writes every record stored
// (uncompressed), so a record declaring more bytes than the whole file is a decompression bomb;
// TorchSaveArchive uses this to refuse one before LibTorch's reader allocates for it.
//
// Reading goes through a caller's function so that it works on a file or on bytes in memory
// (the fuzzer's). Every offset and count is checked against the archive's size before it is
// used; a malformed directory comes back as an Error with one line saying what is wrong.
#include "core/util/result.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace streetgan {

struct ZipRecord {
  std::uint16_t method = 0;             ///< 0 stored, 8 deflated
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;  ///< as declared
};

struct ZipDirectory {
  /// Records by name in lower case, the first path component (torch.save's archive name)
  /// removed, as LibTorch's PyTorchStreamReader names them ("data.pkl", "data/0"). Its zip
  /// reader finds names without regard to case, so "DATA.PKL" is the record "data.pkl" too.
  std::map<std::string, ZipRecord> records;
  /// The record `name` ("data.pkl", "data/0") in any case, or null.
  const ZipRecord* find(std::string name) const;
  /// `name` in lower case, as `records` is keyed.
  static std::string key(std::string name);
  /// The largest number of records read; torch.save writes a few per tensor.
  static constexpr std::uint64_t kMaxRecords = 1'000'000;
};

/// Fills `out` with `n` bytes from `offset`; false when they are not all there.
using ZipByteSource = std::function<bool(std::uint64_t offset, char* out, std::size_t n)>;

/// The central directory of the archive of `size` bytes that `read` reads.
Result<ZipDirectory> readZipDirectory(const ZipByteSource& read, std::uint64_t size);

/// The central directory of the file at `path`.
Result<ZipDirectory> readZipDirectory(const std::string& path);

/// Whether every record of `directory` declares at most `size` bytes, the whole archive's size;
/// the Error names the record.
Status zipRecordsFit(const ZipDirectory& directory, std::uint64_t size);

/// Whether every record of the zip at `path` declares at most the file's own size: LibTorch
/// writes records uncompressed, so one that would inflate past the whole file is a decompression
/// bomb. Checked before LibTorch's reader opens a file, as it inflates some records (`version`)
/// before any of ours is looked at. The Error names the file and the record.
Status zipRecordsFitTheFile(const std::string& path);

}  // namespace streetgan
