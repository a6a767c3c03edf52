#pragma once
// SiteFolder: the folder `streetgan publish` writes, all of it or nothing. The page is written into
// a staging folder beside the target (".streetgan-publish.PID.tmp") and renamed into place at the
// end; an earlier publish there is swapped out in one rename (RENAME_EXCHANGE) and then removed, so
// a visitor (or a static host syncing the folder) sees the old page or the new one, never half of
// one. What the earlier publish held besides the page's own names (a .git, a CNAME) is moved into
// the new one first. A target
// that exists and is not an earlier publish (no scenes.json of ours), a symbolic link, a FIFO or a
// file is refused before anything is written. The staging folder is removed by the destructor
// unless commit() succeeded.
#include "core/util/result.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streetgan::cli {

class SiteFolder {
public:
  /// The file in every publish that says what wrote it: {"format": kFormat, ...}.
  static constexpr const char* kManifest = "scenes.json";
  static constexpr const char* kFormat = "streetgan-site";
  /// The largest scenes.json read back when deciding whether a folder is an earlier publish.
  static constexpr std::int64_t kMaxManifestBytes = std::int64_t(64) << 20;

  /// Whether `target` may be written: absent with an existing parent folder, or an earlier publish
  /// (a real folder holding a regular scenes.json whose "format" is kFormat). An Error names it.
  static Status checkTarget(const std::string& target);
  /// The regular files of `folder` (relative paths, sorted), at most two folders deep and
  /// `max_files` of them; symbolic links are not followed, and hidden names (.git) are left out
  /// with `skip_hidden`. An Error names the folder.
  static Result<std::vector<std::string>> regularFiles(const std::string& folder, std::size_t max_files, bool skip_hidden);
  /// Checks `target` and makes the staging folder beside it.
  static Result<SiteFolder> create(const std::string& target);

  SiteFolder(SiteFolder&& other) noexcept;
  SiteFolder& operator=(SiteFolder&&) = delete;
  SiteFolder(const SiteFolder&) = delete;
  SiteFolder& operator=(const SiteFolder&) = delete;
  ~SiteFolder();

  /// The staging folder, where the files are written before commit().
  const std::string& staging() const { return staging_; }
  const std::string& target() const { return target_; }
  /// Writes `bytes` as the file `relative` ("ort/LICENSE": its folders are made) in the staging
  /// folder, synced; never through a link.
  Status writeFile(const std::string& relative, const std::string& bytes);
  /// Total bytes written so far.
  std::int64_t bytes() const { return bytes_; }
  /// Syncs the files and puts the staging folder in the target's place; the earlier publish, if
  /// any, is removed after the swap.
  Status commit();

private:
  SiteFolder(std::string target, std::string staging) : target_(std::move(target)), staging_(std::move(staging)) {}
  Status makeFolders(const std::string& relative);
  Status swapIntoPlace();  // the staging folder and an earlier publish change places
  // What the earlier publish holds besides a page (a .git, a CNAME) moves into the new one, and
  // back when the swap fails.
  Status carryOver(std::vector<std::string>& carried);
  void carryBack(const std::vector<std::string>& carried);

  std::string target_;
  std::string staging_;  // empty once committed or moved from
  std::int64_t bytes_ = 0;
};

}  // namespace streetgan::cli
