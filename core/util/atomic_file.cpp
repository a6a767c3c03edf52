#include "core/util/atomic_file.h"

#include "core/util/own_folder.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <signal.h>
#include <sys/stat.h>
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

// An Error unless `name` in the folder `folder_fd` (AT_FDCWD: `path` itself) is absent or a regular
// file: the rename would put a file in place of a device, a FIFO, a socket or a link (`--out
// /dev/null`, as root, replaced the device), and fail on a folder.
Status refuseNonRegularTarget(int folder_fd, const std::string& name, const std::string& path) {
  struct stat target {};
  if (::fstatat(folder_fd, name.c_str(), &target, AT_SYMLINK_NOFOLLOW) != 0 || S_ISREG(target.st_mode)) return {};
  const char* kind = S_ISDIR(target.st_mode)   ? "a folder"
                     : S_ISLNK(target.st_mode) ? "a symbolic link"
                     : S_ISFIFO(target.st_mode) ? "a FIFO"
                     : S_ISSOCK(target.st_mode) ? "a socket"
                                                : "a device";
  return makeError(path + ": is " + std::string(kind) + ", not a regular file; it is not replaced (give the name of a new or regular file)");
}

// Temporary files of `path` ("<path>.<pid>.tmp") left by a process that is gone (a SIGKILL, a
// power cut): removed once `path` is written again. One of a process that still runs is its own.
void removeStaleTemporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + ".";
  std::error_code error;
  fs::directory_iterator entries(target.parent_path().empty() ? fs::path(".") : target.parent_path(), error);
  for (; !error && entries != fs::directory_iterator(); entries.increment(error)) {
    const std::string name = entries->path().filename().string();
    if (name.size() <= prefix.size() + 4 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 4, 4, ".tmp") != 0)
      continue;
    const std::string pid = name.substr(prefix.size(), name.size() - prefix.size() - 4);
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno == EPERM) continue;  // alive
    std::error_code ignored;
    if (entries->symlink_status(ignored).type() == fs::file_type::regular) fs::remove(entries->path(), ignored);
  }
}

}  // namespace

std::string temporaryPathFor(const std::string& path) {
  return path + "." + std::to_string(::getpid()) + ".tmp";
}

Status commitTemporaryFile(const std::string& temporary, const std::string& path) {
  if (Status regular = refuseNonRegularTarget(AT_FDCWD, path, path); !regular) {
    std::remove(temporary.c_str());
    return regular;
  }
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
  removeStaleTemporaries(path);
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

Status writeAllToFile(int fd, const std::string& bytes, const std::string& path) {
  for (std::size_t written = 0; written < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return makeError(systemError(path, "cannot write the file"));
    written += static_cast<std::size_t>(n);
  }
  return {};
}

// `bytes` in the temporary file of `path`, not yet renamed into place; nothing left on failure.
Status writeTemporaryFile(const std::string& path, const std::string& bytes) {
  if (Status regular = refuseNonRegularTarget(AT_FDCWD, path, path); !regular) return regular;
  const std::string temporary = temporaryPathFor(path);
  const int fd = createTemporaryFile(temporary);
  if (fd < 0) return makeError(systemError(path, "cannot create the file"));
  if (Status written = writeAllToFile(fd, bytes, path); !written) {
    ::close(fd);
    std::remove(temporary.c_str());
    return written;
  }
  if (::close(fd) != 0) {
    const Status failed = makeError(systemError(path, "cannot write the file"));
    std::remove(temporary.c_str());
    return failed;
  }
  return {};
}

}  // namespace

namespace {

// An open folder, closed with the object.
struct FolderDescriptor {
  int fd = -1;
  ~FolderDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Status checkReplaceableFile(const std::string& path) {
  if (path.empty()) return makeError("give a file to write");
  std::error_code error;
  const auto status = std::filesystem::symlink_status(path, error);
  if (std::filesystem::is_symlink(status)) return makeError(path + ": a symbolic link; give the file itself");
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) return makeError(path + ": not a regular file");
  return {};
}

Status writeFileAtomically(const std::string& path, const std::string& bytes, FolderLinks folder_links) {
  const std::filesystem::path target(path);
  const std::string folder = target.has_parent_path() ? target.parent_path().string() : ".";
  const std::string name = target.filename().string();
  const std::string temporary = std::filesystem::path(temporaryPathFor(path)).filename().string();
  FolderDescriptor folder_fd;
  folder_fd.fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (folder_links == FolderLinks::Refuse ? O_NOFOLLOW : 0));
  if (folder_fd.fd < 0) {
    if (folder_links == FolderLinks::Refuse && (errno == ELOOP || errno == ENOTDIR))
      if (Status linked = refuseLinkedFolder(folder); !linked) return linked;
    return makeError(systemError(path, "cannot create the file"));
  }
  if (Status regular = refuseNonRegularTarget(folder_fd.fd, name, path); !regular) return regular;
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(folder_fd.fd, temporary.c_str(), flags, 0644);
  if (fd < 0 && errno == EEXIST && ::unlinkat(folder_fd.fd, temporary.c_str(), 0) == 0)
    fd = ::openat(folder_fd.fd, temporary.c_str(), flags, 0644);
  if (fd < 0) return makeError(systemError(path, "cannot create the file"));
  Status written = writeAllToFile(fd, bytes, path);
  if (written && ::fsync(fd) != 0) written = makeError(systemError(path, "cannot flush to disk"));
  if (::close(fd) != 0 && written) written = makeError(systemError(path, "cannot write the file"));
  if (written && ::renameat(folder_fd.fd, temporary.c_str(), folder_fd.fd, name.c_str()) != 0)
    written = makeError(systemError(path, "cannot rename the finished file into place"));
  if (!written) {
    ::unlinkat(folder_fd.fd, temporary.c_str(), 0);
    return written;
  }
  (void)::fsync(folder_fd.fd);
  removeStaleTemporaries(path);
  return {};
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
