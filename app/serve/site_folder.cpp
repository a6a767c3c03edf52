#include "app/serve/site_folder.h"

#include "core/util/atomic_file.h"
#include "core/util/json_value.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxManifestDepth = 8;  // scenes.json nests 4 deep

std::string systemError(const std::string& path, int error) { return path + ": " + std::strerror(error); }

// "SITE/", "SITE" and "./SITE" are one folder.
std::string withoutTrailingSlash(const std::string& path) {
  std::string out = fs::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string parentOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Whether the folder holds a scenes.json that says it is ours.
Status checkEarlierPublish(const std::string& target) {
  const std::string manifest = target + "/" + SiteFolder::kManifest;
  const std::string refusal = target + ": exists and is not a page written by streetgan publish (";
  auto text = RegularFile::readAll(manifest, SiteFolder::kMaxManifestBytes, /*follow_links=*/false);
  if (!text) return makeError(refusal + RegularFile::reasonOf(manifest, text.error()) + "); choose a new folder or remove it");
  if (jsonNestingDepth(*text) > kMaxManifestDepth)
    return makeError(refusal + manifest + " is not ours); choose a new folder or remove it");
  const nlohmann::json body = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || jsonString(body, "format") != SiteFolder::kFormat)
    return makeError(refusal + manifest + " is not ours); choose a new folder or remove it");
  return {};
}

// A staging folder left by a publish that was killed, with this process's id: ours to remove.
void removeStale(const std::string& staging) {
  struct stat status{};
  if (::lstat(staging.c_str(), &status) != 0) return;
  std::error_code ignored;
  if (S_ISDIR(status.st_mode))
    fs::remove_all(staging, ignored);  // does not follow links inside
  else
    ::unlink(staging.c_str());
}

Status syncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return makeError(systemError(path, errno));
  const bool synced = ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!synced) return makeError(systemError(path, error));
  return {};
}

}  // namespace

Status SiteFolder::checkTarget(const std::string& given) {
  if (given.empty()) return makeError("give a folder to write the page to");
  const std::string target = withoutTrailingSlash(given);
  const std::string name = fs::path(target).filename().string();
  if (name.empty() || name == "." || name == ".." || target == "/")
    return makeError(given + ": give the page's folder by its name (not . or .. or /)");
  struct stat status{};
  if (::lstat(target.c_str(), &status) != 0) {
    if (errno != ENOENT) return makeError(systemError(target, errno));
    const std::string parent = parentOf(target);
    struct stat parent_status{};
    if (::stat(parent.c_str(), &parent_status) != 0 || !S_ISDIR(parent_status.st_mode))
      return makeError(target + ": its folder " + parent + " does not exist; make it first");
    return {};
  }
  if (S_ISLNK(status.st_mode)) return makeError(target + ": a symbolic link; give the folder itself");
  if (!S_ISDIR(status.st_mode)) return makeError(target + ": exists and is not a folder");
  return checkEarlierPublish(target);
}

Result<std::vector<std::string>> SiteFolder::regularFiles(const std::string& folder, std::size_t max_files, bool skip_hidden) {
  std::vector<std::string> files;
  std::error_code error;
  fs::recursive_directory_iterator it(folder, fs::directory_options::none, error), end;
  for (; !error && it != end; it.increment(error)) {
    if (it.depth() >= 2) it.disable_recursion_pending();
    if (skip_hidden && it->path().filename().string().front() == '.') {
      if (it->is_directory(error)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(error) || !it->is_regular_file(error)) continue;
    if (files.size() == max_files) return makeError(folder + ": more than " + std::to_string(max_files) + " files");
    files.push_back(fs::relative(it->path(), folder, error).string());
  }
  if (error) return makeError(folder + ": " + error.message());
  std::sort(files.begin(), files.end());
  return files;
}

Result<SiteFolder> SiteFolder::create(const std::string& given) {
  if (Status target = checkTarget(given); !target) return makeError(target.error(), ErrorKind::Input);
  const std::string target = withoutTrailingSlash(given);
  // Not named after the target: a name of 255 bytes leaves no room for a suffix.
  const std::string staging =
      (fs::path(parentOf(target)) / (".streetgan-publish." + std::to_string(::getpid()) + ".tmp")).string();
  removeStale(staging);
  if (::mkdir(staging.c_str(), 0755) != 0) return makeError(systemError(staging, errno), ErrorKind::Machine);
  return SiteFolder(target, staging);
}

SiteFolder::SiteFolder(SiteFolder&& other) noexcept
    : target_(std::move(other.target_)), staging_(std::exchange(other.staging_, {})), bytes_(other.bytes_) {}

SiteFolder::~SiteFolder() {
  if (!staging_.empty()) removeStale(staging_);
}

Status SiteFolder::makeFolders(const std::string& relative) {
  std::string folder = staging_;
  for (const auto& part : fs::path(relative).parent_path()) {
    folder += "/" + part.string();
    if (::mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST) return makeError(systemError(folder, errno));
    struct stat status{};
    if (::lstat(folder.c_str(), &status) != 0 || !S_ISDIR(status.st_mode)) return makeError(folder + ": not a folder");
  }
  return {};
}

Status SiteFolder::writeFile(const std::string& relative, const std::string& bytes) {
  const fs::path normal = fs::path(relative).lexically_normal();
  if (relative.empty() || normal.is_absolute() || *normal.begin() == "..")
    return makeError("\"" + relative + "\": not a file name inside the page's folder");
  if (Status folders = makeFolders(relative); !folders) return folders;
  // The staging folder is ours and new: no file is replaced; its folders are never links.
  const std::string path = staging_ + "/" + normal.string();
  if (Status written = writeFileAtomically(path, bytes, FolderLinks::Refuse); !written) return written;
  bytes_ += static_cast<std::int64_t>(bytes.size());
  return {};
}

Status SiteFolder::commit() {
  if (staging_.empty()) return makeError("the page was already written");
  if (Status synced = syncPath(staging_, O_RDONLY | O_DIRECTORY); !synced) return synced;
  struct stat status{};
  const bool replacing = ::lstat(target_.c_str(), &status) == 0;
  if (replacing) {
    // Looked at again: the folder may have changed since checkTarget().
    if (Status earlier = checkTarget(target_); !earlier) return earlier;
    std::vector<std::string> carried;
    if (Status kept = carryOver(carried); !kept) return kept;
    if (Status swapped = swapIntoPlace(); !swapped) {
      carryBack(carried);
      return swapped;
    }
    // What was swapped out must be the folder checked: one put in its place meanwhile is left
    // where it now is, never removed.
    struct stat swapped{};
    if (::lstat(staging_.c_str(), &swapped) != 0 || swapped.st_dev != status.st_dev || swapped.st_ino != status.st_ino) {
      const std::string left = staging_;
      staging_.clear();
      return makeError(target_ + ": changed while the page was written; the new page is in place and what was there is at " + left);
    }
  } else if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) != 0) {
    // A file system without RENAME_NOREPLACE: rename() still refuses a folder or file that is not empty.
    if ((errno != EINVAL && errno != ENOSYS) || ::rename(staging_.c_str(), target_.c_str()) != 0)
      return makeError(systemError(target_, errno));
  }
  // After an exchange the staging name holds the earlier publish: removed by the destructor.
  if (!replacing) staging_.clear();
  return syncPath(parentOf(target_), O_RDONLY | O_DIRECTORY);
}

Status SiteFolder::carryOver(std::vector<std::string>& carried) {
  std::error_code error;
  std::vector<std::string> names;  // read whole first: the folder changes as they move
  for (fs::directory_iterator it(target_, error), end; !error && it != end; it.increment(error))
    names.push_back(it->path().filename().string());
  if (error) return makeError(target_ + ": " + error.message());
  for (const std::string& name : names) {
    struct stat ours{};
    if (::lstat((staging_ + "/" + name).c_str(), &ours) == 0) continue;  // the new page's: replaced
    if (::rename((target_ + "/" + name).c_str(), (staging_ + "/" + name).c_str()) != 0) {
      const int failure = errno;
      carryBack(carried);
      return makeError(systemError(target_ + "/" + name, failure));
    }
    carried.push_back(name);
  }
  return {};
}

void SiteFolder::carryBack(const std::vector<std::string>& carried) {
  for (const std::string& name : carried) ::rename((staging_ + "/" + name).c_str(), (target_ + "/" + name).c_str());
}

Status SiteFolder::swapIntoPlace() {
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) return {};
  if (errno != EINVAL && errno != ENOSYS) return makeError(systemError(target_, errno));
  // A file system without RENAME_EXCHANGE: the earlier publish is moved aside, then the new one in;
  // for a moment the folder is missing, never half written.
  const std::string aside = staging_ + ".old";
  removeStale(aside);
  if (::rename(target_.c_str(), aside.c_str()) != 0) return makeError(systemError(target_, errno));
  if (::rename(staging_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    ::rename(aside.c_str(), target_.c_str());
    return makeError(systemError(target_, error));
  }
  if (::rename(aside.c_str(), staging_.c_str()) != 0) removeStale(aside);
  return {};
}

}  // namespace streetgan::cli
