#include "core/runs/run_relative_path.h"

#include <filesystem>

namespace streetgan {

namespace fs = std::filesystem;

Result<std::string> resolveInsideRunDirectory(const std::string& run_dir, const std::string& relative) {
  const auto refuse = [&](const std::string& why) {
    return makeError("'" + relative + "' is not a path inside the run directory (" + why + ")");
  };
  if (relative.empty()) return refuse("it is empty");
  for (unsigned char c : relative)
    if (c < 0x20 || c == 0x7f) return refuse("it holds a control character");
  const fs::path path(relative);
  if (path.is_absolute() || relative.front() == '/' || relative.front() == '~') return refuse("it is absolute");
  for (const auto& part : path)
    if (part == "..") return refuse("it climbs out with '..'");
  const fs::path joined = fs::path(run_dir) / path;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(joined, ec)) || fs::exists(joined, ec)) {
    const fs::path real_run = fs::weakly_canonical(run_dir, ec);
    const fs::path real_file = fs::weakly_canonical(joined, ec);
    if (ec) return refuse("it cannot be resolved: " + ec.message());
    auto run_it = real_run.begin();
    auto file_it = real_file.begin();
    for (; run_it != real_run.end(); ++run_it, ++file_it) {
      if (file_it == real_file.end() || *file_it != *run_it) return refuse("a link leads out of the run directory");
    }
  }
  return joined.string();
}

}  // namespace streetgan
