#pragma once
// RegularFile: a file opened for reading only when it is a regular file, for paths that may come
// from somebody else (a run folder synced from a remote host, a record a user edited): a FIFO
// never blocks the open (O_NONBLOCK), a device or a folder is refused on the open descriptor
// itself (no window between a check and the open), and readAll() bounds what it reads, also when
// the file grows while it is read (/dev/zero behind a link never fills memory).
//
// The object owns its descriptor and closes it. Failures come back as an Error whose message
// begins with the path: "PATH: not a regular file", "PATH: larger than N bytes", or the system's
// reason ("PATH: No such file or directory").
#include "core/util/result.h"

#include <cstdint>
#include <string>

namespace streetgan {

class RegularFile {
public:
  /// Opens `path` for reading. `follow_links` false refuses a symbolic link (O_NOFOLLOW).
  static Result<RegularFile> open(const std::string& path, bool follow_links = true);
  /// The whole of `path`, when it is a regular file of at most `max_bytes` bytes.
  static Result<std::string> readAll(const std::string& path, std::int64_t max_bytes, bool follow_links = true);
  /// The reason of an Error from open() or readAll() for `path`, without the path
  /// ("not a regular file"), for a caller that words its own message.
  static std::string reasonOf(const std::string& path, const std::string& error);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int descriptor() const { return fd_; }
  /// The size when it was opened.
  std::int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  /// From the current position to the end, at most `max_bytes` (more is an Error).
  Result<std::string> readRest(std::int64_t max_bytes);

private:
  RegularFile(int fd, std::int64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  std::int64_t size_ = 0;
  std::string path_;
};

}  // namespace streetgan
