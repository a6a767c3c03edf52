#pragma once
// ImageCache: a pre-decoded data set in one memory-mapped file, written by ImageCacheBuilder
// (`streetgan cache build`). It holds each image as decoded for training (8-bit pixels at the
// pipeline's DCT reduction), so the loader skips JPEG decoding yet gives the same batches.
//
// File layout (little-endian, version 1):
//   header (64 bytes): magic "SGCACHE1", version, channels, reduction, record count, offsets of
//     the index and the path table, CRC-32 of the index and paths, CRC-32 of the header;
//     `reduction` is the pipeline's JPEG reduction the cache was built for;
//   pixel records, each 64-byte aligned;
//   index: per record its data offset, size, full size, path position, the CRC-32 of its
//     pixels and its own reduction (1 for formats decoded at full size); paths: relative to the data folder, '/'-separated.
// The magic is written last, so an interrupted build never looks complete. open() checks the
// header, index and bounds; each record's checksum is checked the first time it is read.
// Failures are Errors naming the cache file (and the record).
#include "core/data/image_decoder.h"
#include "core/util/result.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace streetgan {

class ImageCache {
public:
  static constexpr std::uint32_t kVersion = 1;
  static constexpr std::size_t kHeaderSize = 64;
  static constexpr std::size_t kIndexEntrySize = 40;

  static Result<std::shared_ptr<ImageCache>> open(const std::string& path);
  ~ImageCache();
  ImageCache(const ImageCache&) = delete;
  ImageCache& operator=(const ImageCache&) = delete;

  const std::string& path() const { return path_; }
  int channels() const { return channels_; }
  int reduction() const { return reduction_; }
  std::size_t size() const { return records_.size(); }
  const std::string& relativePath(std::size_t record) const { return records_[record].path; }
  /// The record of an image by its path relative to the data folder, or -1.
  std::int64_t find(const std::string& relative_path) const;
  /// The pixels of a record; an Error when its checksum does not match (checked once).
  Result<ImageView> image(std::size_t record) const;

private:
  struct Record {
    std::uint64_t offset;
    std::uint32_t width, height, full_width, full_height, crc, reduction;
    std::string path;
  };
  ImageCache() = default;

  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  int channels_ = 0, reduction_ = 1;
  std::vector<Record> records_;
  std::unordered_map<std::string, std::size_t> by_path_;
  // Per record: 0 not checked yet, 1 checksum good, 2 damaged.
  std::unique_ptr<std::atomic<std::uint8_t>[]> checked_;
};

}  // namespace streetgan
