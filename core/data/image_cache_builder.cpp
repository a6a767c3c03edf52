#include "core/data/image_cache_builder.h"

#include "core/data/image_cache.h"
#include "core/util/atomic_file.h"
#include "core/util/crc32.h"
#include "core/util/run_on_threads.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <thread>
#include <unistd.h>

namespace streetgan {
namespace {

namespace fs = std::filesystem;

// The temporary file of a build: removed unless commit() renamed it into place.
class TemporaryOutput {
public:
  explicit TemporaryOutput(std::string final_path)
      : final_(std::move(final_path)), temp_(temporaryPathFor(final_)) {}
  ~TemporaryOutput() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }
  TemporaryOutput(const TemporaryOutput&) = delete;
  TemporaryOutput& operator=(const TemporaryOutput&) = delete;

  Status open() {
    fd_ = createTemporaryFile(temp_);
    if (fd_ < 0) return makeError(final_ + ": cannot create the cache file (" + std::strerror(errno) + ")");
    return {};
  }
  Status write(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return makeError(final_ + ": cannot write the cache file (" + std::strerror(errno) + ")");
      p += n, size -= static_cast<std::size_t>(n), offset_ += static_cast<std::uint64_t>(n);
    }
    return {};
  }
  Status padTo(std::uint64_t alignment) {
    static const std::uint8_t zeros[64] = {};
    const std::uint64_t pad = (alignment - offset_ % alignment) % alignment;
    return write(zeros, pad);
  }
  Status writeHeader(const std::uint8_t* header, std::size_t size) {
    if (::fsync(fd_) != 0 || ::pwrite(fd_, header, size, 0) != static_cast<ssize_t>(size))
      return makeError(final_ + ": cannot write the cache file (" + std::strerror(errno) + ")");
    return {};
  }
  Status commit() {
    ::close(fd_);
    fd_ = -1;
    committed_ = true;  // commitTemporaryFile removes the file itself when it fails
    return commitTemporaryFile(temp_, final_);
  }
  std::uint64_t offset() const { return offset_; }

private:
  std::string final_, temp_;
  int fd_ = -1;
  bool committed_ = false;
  std::uint64_t offset_ = 0;
};

template <class T>
void put(std::vector<std::uint8_t>& out, std::size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof value);
}

}  // namespace

int resolveWorkerCount(int requested) {
  if (requested > 0) return requested;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

Result<CacheBuildSummary> ImageCacheBuilder::build(const ImageDataset& dataset,
                                                   const SamplePipeline& pipeline,
                                                   const std::string& out_path,
                                                   const CacheBuildOptions& options) {
  TemporaryOutput out(out_path);
  if (Status opened = out.open(); !opened) return makeError(opened.error());
  std::vector<std::uint8_t> header(ImageCache::kHeaderSize, 0);
  if (Status s = out.write(header.data(), header.size()); !s) return makeError(s.error());

  const int workers = resolveWorkerCount(options.workers);
  const std::int64_t total = static_cast<std::int64_t>(dataset.size());
  const std::int64_t chunk = 32LL * workers;
  CacheBuildSummary summary;
  std::vector<std::uint8_t> index;
  std::string paths;
  std::vector<std::optional<Result<DecodedImage>>> decoded;
  for (std::int64_t begin = 0; begin < total; begin += chunk) {
    if (options.cancel && options.cancel->load()) return makeError(out_path + ": cache build cancelled; no file written");
    const std::int64_t end = std::min(total, begin + chunk);
    decoded.assign(static_cast<std::size_t>(end - begin), std::nullopt);
    std::atomic<std::int64_t> next{begin};
    runOnThreads(workers, [&](int) {
      for (std::int64_t i; (i = next.fetch_add(1)) < end;)
        decoded[static_cast<std::size_t>(i - begin)].emplace(pipeline.decode(dataset.path(static_cast<std::size_t>(i))));
    });

    for (std::int64_t i = begin; i < end; ++i) {
      auto& image = *decoded[static_cast<std::size_t>(i - begin)];
      const std::string& path = dataset.path(static_cast<std::size_t>(i));
      if (!image) {
        summary.skipped.push_back({path, image.error()});
        continue;
      }
      if (Status s = out.padTo(64); !s) return makeError(s.error());
      const std::uint64_t offset = out.offset();
      if (Status s = out.write(image->pixels.data(), image->pixels.size()); !s) return makeError(s.error());
      const std::string relative = fs::path(path).lexically_relative(dataset.root()).generic_string();
      const std::size_t at = index.size();
      index.resize(at + ImageCache::kIndexEntrySize, 0);
      put<std::uint64_t>(index, at, offset);
      put<std::uint32_t>(index, at + 8, static_cast<std::uint32_t>(image->width));
      put<std::uint32_t>(index, at + 12, static_cast<std::uint32_t>(image->height));
      put<std::uint32_t>(index, at + 16, static_cast<std::uint32_t>(image->header.width));
      put<std::uint32_t>(index, at + 20, static_cast<std::uint32_t>(image->header.height));
      put<std::uint32_t>(index, at + 24, static_cast<std::uint32_t>(paths.size()));
      put<std::uint32_t>(index, at + 28, static_cast<std::uint32_t>(relative.size()));
      put<std::uint32_t>(index, at + 32, crc32Update(0, image->pixels.data(), image->pixels.size()));
      put<std::uint32_t>(index, at + 36, static_cast<std::uint32_t>(image->reduction));
      paths += relative;
      ++summary.records;
    }
    if (options.progress) options.progress(end, total);
  }
  if (summary.records == 0)
    return makeError(dataset.root() + ": not one image could be decoded; no cache written");

  if (Status s = out.padTo(64); !s) return makeError(s.error());
  const std::uint64_t index_offset = out.offset();
  if (Status s = out.write(index.data(), index.size()); !s) return makeError(s.error());
  const std::uint64_t paths_offset = out.offset();
  if (Status s = out.write(paths.data(), paths.size()); !s) return makeError(s.error());
  summary.bytes = out.offset();

  std::memcpy(header.data(), "SGCACHE1", 8);
  put<std::uint32_t>(header, 8, ImageCache::kVersion);
  put<std::uint32_t>(header, 12, static_cast<std::uint32_t>(pipeline.channels()));
  put<std::uint32_t>(header, 16, static_cast<std::uint32_t>(pipeline.reduction()));
  put<std::uint64_t>(header, 24, static_cast<std::uint64_t>(summary.records));
  put<std::uint64_t>(header, 32, index_offset);
  put<std::uint64_t>(header, 40, paths_offset);
  put<std::uint64_t>(header, 48, static_cast<std::uint64_t>(paths.size()));
  put<std::uint32_t>(header, 56, crc32Update(crc32Update(0, index.data(), index.size()), paths.data(), paths.size()));
  put<std::uint32_t>(header, 60, crc32Update(0, header.data(), 60));
  if (options.cancel && options.cancel->load()) return makeError(out_path + ": cache build cancelled; no file written");
  if (Status s = out.writeHeader(header.data(), header.size()); !s) return makeError(s.error());
  if (Status s = out.commit(); !s) return makeError(s.error());
  return summary;
}

}  // namespace streetgan
