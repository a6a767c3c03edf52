#include "core/util/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace streetgan {
namespace {

std::string systemError(const std::string& path, const std::string& what) {
  return path + ": " + what + " (" + std::strerror(errno) + ")";
}

Status syncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return makeError(systemError(path, "cannot open to sync"));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0 && !directory) return makeError(systemError(path, "cannot flush to disk"));
  return {};
}

}  // namespace

std::string temporaryPathFor(const std::string& path) {
  return path + "." + std::to_string(::getpid()) + ".tmp";
}

Status commitTemporaryFile(const std::string& temporary, const std::string& path) {
  if (Status synced = syncPath(temporary, false); !synced) {
    std::remove(temporary.c_str());
    return synced;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const Status failed = makeError(systemError(path, "cannot rename the finished file into place"));
    std::remove(temporary.c_str());
    return failed;
  }
  std::string folder = std::filesystem::path(path).parent_path().string();
  (void)syncPath(folder.empty() ? "." : folder, true);
  return {};
}

int createTemporaryFile(const std::string& temporary) {
  // Created new, never through a link: the name is predictable, and in a folder others can write
  // to a link planted there would otherwise be written through. A leftover of the same name (a
  // killed process with our pid, or such a link) is removed first: unlink removes a link itself.
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(temporary.c_str(), flags, 0644);
  if (fd < 0 && errno == EEXIST && ::unlink(temporary.c_str()) == 0) fd = ::open(temporary.c_str(), flags, 0644);
  return fd;
}

namespace {

// `bytes` in the temporary file of `path`, not yet renamed into place; nothing left on failure.
Status writeTemporaryFile(const std::string& path, const std::string& bytes) {
  const std::string temporary = temporaryPathFor(path);
  const int fd = createTemporaryFile(temporary);
  if (fd < 0) return makeError(systemError(path, "cannot create the file"));
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Status failed = makeError(systemError(path, "cannot write the file"));
      ::close(fd);
      std::remove(temporary.c_str());
      return failed;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const Status failed = makeError(systemError(path, "cannot write the file"));
    std::remove(temporary.c_str());
    return failed;
  }
  return {};
}

}  // namespace

Status writeFileAtomically(const std::string& path, const std::string& bytes) {
  if (Status written = writeTemporaryFile(path, bytes); !written) return written;
  return commitTemporaryFile(temporaryPathFor(path), path);
}

Status writeFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files) {
  for (std::size_t i = 0; i < files.size(); ++i)
    if (Status written = writeTemporaryFile(files[i].first, files[i].second); !written) {
      for (std::size_t j = 0; j < i; ++j) std::remove(temporaryPathFor(files[j].first).c_str());
      return written;
    }
  for (std::size_t i = 0; i < files.size(); ++i)
    if (Status committed = commitTemporaryFile(temporaryPathFor(files[i].first), files[i].first); !committed) {
      for (std::size_t j = i + 1; j < files.size(); ++j) std::remove(temporaryPathFor(files[j].first).c_str());
      return committed;
    }
  return {};
}

}  // namespace streetgan
