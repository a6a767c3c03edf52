#include "core/data/image_cache.h"

#include "core/util/crc32.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan {
namespace {

std::uint32_t u32At(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
std::uint64_t u64At(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

ImageCache::~ImageCache() {
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

Result<std::shared_ptr<ImageCache>> ImageCache::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer; only a regular file is mapped.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return makeError(path + ": cannot open the cache file (" + std::strerror(errno) + ")");
  struct stat info {};
  const bool stat_ok = ::fstat(fd, &info) == 0;
  const int stat_errno = errno;
  if (stat_ok && !S_ISREG(info.st_mode)) {
    ::close(fd);
    return makeError(path + ": not a regular file (" + (S_ISDIR(info.st_mode) ? "a directory" : "a device, pipe or socket") +
                     "); give the cache file that streetgan cache build wrote");
  }
  void* mapped = MAP_FAILED;
  if (stat_ok && info.st_size >= static_cast<off_t>(kHeaderSize))
    mapped = ::mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping stays valid
  if (!stat_ok) return makeError(path + ": cannot read the cache file (" + std::strerror(stat_errno) + ")");
  if (info.st_size < static_cast<off_t>(kHeaderSize))
    return makeError(path + ": not a StreetGAN image cache (too short; an unfinished build?)");
  if (mapped == MAP_FAILED)
    return makeError(path + ": cannot map the cache file (" + std::strerror(map_errno) + ")");

  std::shared_ptr<ImageCache> cache(new ImageCache());
  cache->path_ = path;
  cache->data_ = static_cast<const std::uint8_t*>(mapped);
  cache->size_ = static_cast<std::size_t>(info.st_size);
  const std::uint8_t* h = cache->data_;
  if (std::memcmp(h, "SGCACHE1", 8) != 0)
    return makeError(path + ": not a StreetGAN image cache (no SGCACHE1 signature; an unfinished build?)");
  if (crc32Update(0, h, 60) != u32At(h + 60))
    return makeError(path + ": the cache header is damaged (checksum mismatch); rebuild the cache");
  if (u32At(h + 8) != kVersion)
    return makeError(path + ": cache format version " + std::to_string(u32At(h + 8)) +
                     "; this streetgan reads version " + std::to_string(kVersion) + " (rebuild the cache)");
  cache->channels_ = static_cast<int>(u32At(h + 12));
  cache->reduction_ = static_cast<int>(u32At(h + 16));
  const std::uint64_t count = u64At(h + 24), index = u64At(h + 32), paths = u64At(h + 40),
                      paths_size = u64At(h + 48);
  const std::uint64_t file = cache->size_;
  if ((cache->channels_ != 1 && cache->channels_ != 3) || cache->reduction_ < 1 || cache->reduction_ > 8 ||
      count > file / kIndexEntrySize || index > file || index + count * kIndexEntrySize > file ||
      paths > file || paths_size > file - paths)
    return makeError(path + ": the cache header does not fit the file (truncated or damaged); rebuild the cache");
  std::uint32_t crc = crc32Update(0, h + index, count * kIndexEntrySize);
  crc = crc32Update(crc, h + paths, paths_size);
  if (crc != u32At(h + 56))
    return makeError(path + ": the cache index is damaged (checksum mismatch); rebuild the cache");

  cache->records_.resize(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint8_t* e = h + index + i * kIndexEntrySize;
    Record& r = cache->records_[i];
    r.offset = u64At(e);
    r.width = u32At(e + 8), r.height = u32At(e + 12);
    r.full_width = u32At(e + 16), r.full_height = u32At(e + 20);
    const std::uint32_t path_offset = u32At(e + 24), path_length = u32At(e + 28);
    r.crc = u32At(e + 32);
    r.reduction = u32At(e + 36);
    const std::uint64_t bytes = std::uint64_t(r.width) * r.height * cache->channels_;
    if (r.width == 0 || (r.reduction != 1 && r.reduction != 2 && r.reduction != 4 && r.reduction != 8) || r.height == 0 || r.offset > file || bytes > file - r.offset ||
        std::uint64_t(path_offset) + path_length > paths_size)
      return makeError(path + ": record " + std::to_string(i) + " lies outside the file (damaged); rebuild the cache");
    r.path.assign(reinterpret_cast<const char*>(h + paths + path_offset), path_length);
    cache->by_path_.emplace(r.path, i);
  }
  cache->checked_ = std::make_unique<std::atomic<std::uint8_t>[]>(count);
  for (std::uint64_t i = 0; i < count; ++i) cache->checked_[i].store(0, std::memory_order_relaxed);
  return cache;
}

std::int64_t ImageCache::find(const std::string& relative_path) const {
  const auto it = by_path_.find(relative_path);
  return it == by_path_.end() ? -1 : static_cast<std::int64_t>(it->second);
}

Result<ImageView> ImageCache::image(std::size_t record) const {
  const Record& r = records_[record];
  ImageView view;
  view.data = data_ + r.offset;
  view.width = static_cast<int>(r.width);
  view.height = static_cast<int>(r.height);
  view.channels = channels_;
  view.stride = std::size_t(r.width) * channels_;
  view.reduction = static_cast<int>(r.reduction);
  view.full_width = static_cast<int>(r.full_width);
  view.full_height = static_cast<int>(r.full_height);
  std::uint8_t state = checked_[record].load(std::memory_order_acquire);
  if (state == 0) {
    state = crc32Update(0, view.data, view.stride * r.height) == r.crc ? 1 : 2;
    checked_[record].store(state, std::memory_order_release);
  }
  if (state == 2)
    return makeError(path_ + ": the record of " + r.path +
                     " fails its checksum (the cache file is damaged; rebuild it)");
  return view;
}

}  // namespace streetgan
