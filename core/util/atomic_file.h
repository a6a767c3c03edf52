#pragma once
// Files that appear whole or not at all. writeFileAtomically() writes to a temporary name in the
// same folder (ending ".tmp"), flushes it to disk (fsync), renames it over the final name and
// syncs the folder, so a crash or a SIGKILL leaves either the old file or the new one, never a
// half-written one. Failures (disk full, unwritable folder) come back as an Error naming the path.
// A path that is something other than a regular file (a device such as /dev/null, a FIFO, a
// folder, a link) is refused, not replaced.
// Once a file is in place, its temporary files left by processes that are gone (a SIGKILL) are
// removed; one of a process that still runs is left to it.
#include "core/util/result.h"

#include <string>
#include <utility>
#include <vector>

namespace streetgan {

/// The temporary name used for `path` while it is written: "<path>.<pid>.tmp".
std::string temporaryPathFor(const std::string& path);

/// Whether the folder of a file written atomically may be a symbolic link.
enum class FolderLinks {
  Follow,  ///< a folder the user named (`--out ~/link/grid.png`)
  /// A folder of a run's own (checkpoints/, samples/, evaluations/): opened without following a
  /// link, so one swapped in after makeOwnFolder() checked it is refused ("a symbolic link") at
  /// the moment of writing, and the file is created, synced and renamed relative to that open
  /// folder, never through a path that could change in between.
  Refuse,
};

/// Whether a file the user named may be written there, said before any work: an Error
/// "PATH: a symbolic link; give the file itself" or "PATH: not a regular file" (a folder, FIFO or
/// device), or "give a file to write" for an empty path. writeFileAtomically() refuses the same.
Status checkReplaceableFile(const std::string& path);
/// Writes `bytes` to `path` atomically, relative to its folder opened once.
Status writeFileAtomically(const std::string& path, const std::string& bytes, FolderLinks folder = FolderLinks::Follow);
/// Writes each of `files` (path, bytes) atomically, all of them or none: every temporary file is
/// written first and only then renamed into place, in order, so a failure to write (a full disk)
/// leaves every path as it was. Only a failed rename can leave the first ones written.
Status writeFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files);
/// Creates `temporary` for writing, new (O_EXCL) and never through a symbolic link (a leftover of
/// the name is removed first): a file descriptor, or −1 with errno set.
int createTemporaryFile(const std::string& temporary);

/// Makes an already written temporary file durable and renames it to `path`; removes it on failure.
Status commitTemporaryFile(const std::string& temporary, const std::string& path);

}  // namespace streetgan
