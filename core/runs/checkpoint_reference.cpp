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

// The run's finished checkpoints that are files, oldest first, and how many names of finished
// checkpoints were something else (a folder, a FIFO, a dangling link): RunDirectory::checkpoints()
// lists names of exactly "step-" + 10 digits + ".pt". A checkpoints/ that cannot be listed is an
// error, not an empty run.
struct StepFiles {
  std::vector<StepFile> files;
  std::size_t not_files = 0;
};

Result<StepFiles> stepFiles(const std::string& run) {
  const fs::path dir = RunDirectory(run).checkpointsDir();
  std::error_code ec;
  const bool named = fs::exists(fs::symlink_status(dir, ec));
  if (!named) return StepFiles{};  // a run that has written only its log so far
  const fs::file_status status = fs::status(dir, ec);
  if (ec) return makeError("cannot list " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(status)) return makeError(dir.string() + " is not a folder");
  fs::directory_iterator probe(dir, ec);
  if (ec) return makeError("cannot list " + dir.string() + ": " + ec.message());
  StepFiles out;
  for (const std::string& path : RunDirectory(run).checkpoints()) {
    if (!fs::is_regular_file(path, ec)) {
      ++out.not_files;
      continue;
    }
    const std::string name = fs::path(path).filename().string();
    out.files.push_back({path, std::stoll(name.substr(5, 10))});
  }
  return out;
}

Result<ResolvedCheckpoint> chooseIn(const std::string& run, const std::string& given, std::int64_t at_most) {
  // RUN@STEP's messages start with the text as given; a plain folder's name the folder once.
  const std::string lead = given == run ? "" : given + ": ";
  if (!RunDirectory::isRun(run))
    return makeError(lead + run + " is a folder, but not a run folder (it has no " + RunDirectory::whatMakesARun() +
                     ")");
  auto listed = stepFiles(run);
  if (!listed) return makeError(lead + listed.error());
  const std::vector<StepFile>& files = listed->files;
  if (files.empty())
    return makeError(lead + "the run " + run + " has no checkpoint yet (checkpoints/ holds no step-*.pt file" +
                     (listed->not_files > 0 ? ", only " + std::to_string(listed->not_files) + " name(s) of one that are not files" : "") +
                     "); give it time to save one, or give a checkpoint file");
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
