#include "core/util/own_folder.h"

#include <filesystem>

namespace streetgan {

namespace fs = std::filesystem;

Status refuseLinkedFolder(const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(path, ec)))
    return makeError(path + ": a symbolic link; a run writes only into folders of its own");
  return {};
}

Status makeOwnFolder(const std::string& path) {
  if (Status linked = refuseLinkedFolder(path); !linked) return linked;
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return makeError(path + ": cannot create the folder (" + ec.message() + ")");
  if (!fs::is_directory(fs::symlink_status(path, ec))) return makeError(path + ": not a folder");
  return {};
}

}  // namespace streetgan
