#include "core/runs/run_directory.h"

#include "core/util/own_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <regex>

namespace streetgan {

namespace fs = std::filesystem;

namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kEventsFile[] = "events.jsonl";
constexpr char kCheckpointsFolder[] = "checkpoints";
constexpr char kSamplesFolder[] = "samples";
constexpr char kEvaluationsFolder[] = "evaluations";
constexpr char kTensorBoardFolder[] = "tensorboard";
constexpr char kDirectionsFolder[] = "directions";
constexpr char kLaunchFolder[] = "launch";

std::string stepName(std::int64_t step, const char* extension) {
  char name[64];
  std::snprintf(name, sizeof name, "step-%010lld%s", static_cast<long long>(step), extension);
  return name;
}

}  // namespace

RunDirectory::RunDirectory(std::string path) : path_(std::move(path)) {}

Status RunDirectory::create() const {
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) return makeError(path_ + ": cannot create the run folder (" + ec.message() + ")");
  // A linked folder inside the run would take its files elsewhere, and the pruning of old
  // checkpoints would delete another run's. The folders made later are checked now too.
  for (const auto& dir : {checkpointsDir(), samplesDir()})
    if (Status made = makeOwnFolder(dir); !made) return made;
  for (const auto& later : {evaluationsDir(), tensorboardDir(), directionsDir()})
    if (Status linked = refuseLinkedFolder(later); !linked) return linked;
  return {};
}

// The names of isRun()'s list that `run` holds: config.json and events.jsonl as files (followed
// through a link), checkpoints/ of any kind.
std::vector<std::string> RunDirectory::present() const {
  std::error_code ec;
  std::vector<std::string> found;
  if (fs::exists(configPath(), ec)) found.emplace_back(kConfigFile);
  if (fs::exists(eventsPath(), ec)) found.emplace_back(kEventsFile);
  if (fs::exists(fs::symlink_status(checkpointsDir(), ec))) found.push_back(std::string(kCheckpointsFolder) + "/");
  return found;
}

bool RunDirectory::isRun(const std::string& folder) { return !RunDirectory(folder).present().empty(); }

std::string RunDirectory::whatMakesARun() {
  return std::string(kConfigFile) + ", " + kEventsFile + " or " + kCheckpointsFolder + "/";
}

// The folder that holds the file as the system finds it: made absolute, with its links and ".."
// resolved by the file system rather than by the text (a ".." after a link leaves the link's
// target, not the folder the link is in).
std::optional<RunDirectory> RunDirectory::ofCheckpoint(const std::string& checkpoint) {
  std::error_code ec;
  const fs::path file = fs::absolute(checkpoint, ec);
  if (ec) return std::nullopt;  // no current folder to resolve a relative path against
  const fs::path folder = fs::weakly_canonical(file.parent_path(), ec);
  if (ec || folder.filename() != kCheckpointsFolder) return std::nullopt;
  const fs::path run = folder.parent_path();
  if (run == run.root_path()) return std::nullopt;  // "/checkpoints/…": no folder above it
  return RunDirectory(run.string());
}

std::optional<RunDirectory> RunDirectory::owning(const std::string& path) {
  std::error_code ec;
  const fs::path file = fs::absolute(path, ec);
  if (ec || !file.has_filename()) return std::nullopt;
  const fs::path resolved = fs::weakly_canonical(file.parent_path(), ec) / file.filename();
  if (ec) return std::nullopt;
  // Each folder above the file that is a run: the first part of the file's path inside it.
  for (fs::path folder = resolved.parent_path(); folder != folder.root_path() && !folder.empty(); folder = folder.parent_path()) {
    if (!isRun(folder.string())) continue;
    const fs::path inside = resolved.lexically_relative(folder);
    const std::string first = inside.begin()->string();
    const bool single = std::next(inside.begin()) == inside.end();
    if ((single && (first == kConfigFile || first == kEventsFile)) ||
        (!single && (first == kCheckpointsFolder || first == kSamplesFolder || first == kEvaluationsFolder ||
                     first == kTensorBoardFolder || first == kDirectionsFolder || first == kLaunchFolder)))
      return RunDirectory(folder.string());
  }
  return std::nullopt;
}

std::string RunDirectory::contents() const {
  std::string found;
  for (const std::string& name : present()) found += (found.empty() ? "" : ", ") + name;
  // checkpoints/ comes last in present()'s list.
  if (!found.empty() && found.back() == '/' && checkpoints().empty()) found += " without a finished checkpoint";
  return found;
}

bool RunDirectory::holdsRun() const { return isRun(path_); }

std::string RunDirectory::configPath() const { return (fs::path(path_) / kConfigFile).string(); }
std::string RunDirectory::eventsPath() const { return (fs::path(path_) / kEventsFile).string(); }
std::string RunDirectory::checkpointsDir() const { return (fs::path(path_) / kCheckpointsFolder).string(); }
std::string RunDirectory::samplesDir() const { return (fs::path(path_) / kSamplesFolder).string(); }
std::string RunDirectory::evaluationsDir() const { return (fs::path(path_) / kEvaluationsFolder).string(); }
std::string RunDirectory::tensorboardDir() const { return (fs::path(path_) / kTensorBoardFolder).string(); }
std::string RunDirectory::directionsDir() const { return (fs::path(path_) / kDirectionsFolder).string(); }
std::string RunDirectory::launchDir() const { return (fs::path(path_) / kLaunchFolder).string(); }
std::string RunDirectory::name() const {
  std::error_code ec;
  fs::path folder = fs::absolute(path_, ec);
  if (ec) folder = path_;  // no current folder: the name as given
  folder = folder.lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();  // "runs/first/"
  return folder.filename().string();
}

std::string RunDirectory::checkpointPath(std::int64_t step) const {
  return (fs::path(checkpointsDir()) / stepName(step, ".pt")).string();
}

std::string RunDirectory::sampleRelativePath(std::int64_t step) const {
  return std::string(kSamplesFolder) + "/" + stepName(step, ".png");
}

std::vector<std::string> RunDirectory::checkpoints() const {
  static const std::regex finished("step-[0-9]{10}\\.pt");
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(checkpointsDir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (std::regex_match(name, finished)) found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Relative to the checkpoints folder opened once without following a link: a link swapped in for
// the folder, or for one of its files, is never followed to delete another folder's files.
void RunDirectory::pruneCheckpoints(int keep) const {
  const int folder = ::open(checkpointsDir().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (folder < 0) return;
  const auto all = checkpoints();
  for (std::size_t i = 0; i + static_cast<std::size_t>(std::max(keep, 1)) < all.size(); ++i) {
    const std::string name = fs::path(all[i]).filename().string();
    struct stat file {};
    if (::fstatat(folder, name.c_str(), &file, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(file.st_mode))
      ::unlinkat(folder, name.c_str(), 0);
  }
  ::close(folder);
}

int RunDirectory::removeTemporaryFiles() const {
  int removed = 0;
  for (const auto& dir : {checkpointsDir(), samplesDir(), path_}) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".tmp" && fs::remove(it->path(), ec)) ++removed;
    }
  }
  return removed;
}

}  // namespace streetgan
