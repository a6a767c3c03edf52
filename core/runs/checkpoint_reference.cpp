#include "core/runs/checkpoint_reference.h"

#include "core/runs/run_directory.h"

#include <filesystem>
#include <system_error>
#include <vector>

namespace streetgan {
namespace fs = std::filesystem;

namespace {

struct StepFile {
  std::string path;
  std::int64_t step = 0;
};

// The run's finished checkpoints that are files (a folder named like one is left out), oldest
// first. RunDirectory::checkpoints() only lists names of exactly "step-" + 10 digits + ".pt".
std::vector<StepFile> stepFiles(const std::string& run) {
  std::vector<StepFile> files;
  for (const std::string& path : RunDirectory(run).checkpoints()) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    const std::string name = fs::path(path).filename().string();
    files.push_back({path, std::stoll(name.substr(5, 10))});
  }
  return files;
}

bool isRunFolder(const std::string& folder) {
  std::error_code ec;
  return fs::is_directory(fs::path(folder) / "checkpoints", ec) || fs::exists(fs::path(folder) / "events.jsonl", ec);
}

Result<ResolvedCheckpoint> chooseIn(const std::string& run, const std::string& given, std::int64_t at_most) {
  // RUN@STEP's messages start with the text as given; a plain folder's name the folder once.
  const std::string lead = given == run ? "" : given + ": ";
  if (!isRunFolder(run))
    return makeError(lead + run + " is a folder, but not a run folder (it has no checkpoints/ and no events.jsonl)");
  const std::vector<StepFile> files = stepFiles(run);
  if (files.empty())
    return makeError(lead + "the run " + run + " has no checkpoint yet (checkpoints/ holds no step-*.pt); "
                     "give it time to save one, or give a checkpoint file");
  const StepFile* chosen = nullptr;
  for (const StepFile& file : files)
    if (file.step <= at_most) chosen = &file;
  if (chosen == nullptr)
    return makeError(lead + "the run " + run + " has no checkpoint at or before step " + std::to_string(at_most) +
                     " (its first is at step " + std::to_string(files.front().step) + ")");
  return ResolvedCheckpoint{chosen->path, true, chosen->step};
}

}  // namespace

Result<ResolvedCheckpoint> resolveCheckpointReference(const std::string& text) {
  if (text.empty()) return makeError("an empty checkpoint: give a .pt file, a run folder, RUN@STEP or RUN@latest");
  std::error_code ec;
  const fs::file_status status = fs::status(text, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) return ResolvedCheckpoint{text, false, -1};
    return chooseIn(text, text, kMaxReferencedStep);
  }
  const std::size_t at = text.rfind('@');
  // No "@": a file that is not there; its loader says so, as for any checkpoint file.
  if (at == std::string::npos) return ResolvedCheckpoint{text, false, -1};
  const std::string run = text.substr(0, at), suffix = text.substr(at + 1);
  std::int64_t at_most = kMaxReferencedStep;
  if (suffix != "latest") {
    if (suffix.empty() || suffix.size() > 10 || suffix.find_first_not_of("0123456789") != std::string::npos)
      return makeError(text + ": '" + suffix + "' after '@' is not allowed; allowed: a step (0 to " +
                       std::to_string(kMaxReferencedStep) + ") or latest");
    at_most = std::stoll(suffix);
  }
  if (run.empty()) return makeError(text + ": no run folder before '@'");
  if (!fs::is_directory(run, ec))
    return makeError(text + ": there is no run folder " + run + (fs::exists(run, ec) ? " (it is a file)" : ""));
  return chooseIn(run, text, at_most);
}

}  // namespace streetgan
