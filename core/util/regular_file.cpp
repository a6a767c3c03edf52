#include "core/util/regular_file.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan {

Result<RegularFile> RegularFile::open(const std::string& path, bool follow_links) {
  const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW);
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP && !follow_links) return makeError(path + ": a symbolic link, not a regular file");
    return makeError(path + ": " + std::strerror(error));
  }
  RegularFile file(fd, 0, path);
  struct stat info {};
  if (::fstat(fd, &info) != 0) return makeError(path + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return makeError(path + (S_ISDIR(info.st_mode) ? ": a folder, not a regular file" : ": not a regular file"));
  // Reads block as usual from here on; O_NONBLOCK was only for the open of a FIFO.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file.size_ = static_cast<std::int64_t>(info.st_size);
  return file;
}

Result<std::string> RegularFile::readAll(const std::string& path, std::int64_t max_bytes, bool follow_links) {
  auto file = open(path, follow_links);
  if (!file) return makeError(file.error());
  if (file->size() > max_bytes) return makeError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
  return file->readRest(max_bytes);
}

std::string RegularFile::reasonOf(const std::string& path, const std::string& error) {
  const std::string prefix = path + ": ";
  return error.compare(0, prefix.size(), prefix) == 0 ? error.substr(prefix.size()) : error;
}

Result<std::string> RegularFile::readRest(std::int64_t max_bytes) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return makeError(path_ + ": " + std::strerror(errno));
    if (n == 0) return bytes;
    if (static_cast<std::int64_t>(bytes.size()) + n > max_bytes)
      return makeError(path_ + ": larger than " + std::to_string(max_bytes) + " bytes");
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace streetgan
