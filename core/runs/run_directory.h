#pragma once
// RunDirectory: the layout of one run on disk (docs/events.md, "The run directory"), the one
// place its names are spelled: config.json, events.jsonl, checkpoints/step-<n>.pt,
// samples/step-<n>.png, and the folders other commands write into (evaluations/, tensorboard/,
// directions/, launch/). It also holds the one rule for "this folder is a run" and the one rule
// for "the run this checkpoint belongs to".
// Only finished checkpoints carry the final ".pt" name (they are renamed into place), so
// checkpoints() never lists a half-written one; leftovers of a killed writer end in ".tmp" and
// are removed by removeTemporaryFiles().
#include "core/util/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

class RunDirectory {
public:
  explicit RunDirectory(std::string path);

  /// Creates the folder and its checkpoints/ and samples/ subfolders; either of them being a
  /// symbolic link is an Error naming it.
  Status create() const;
  /// True when `folder` is a run: it holds config.json, events.jsonl or a checkpoints/ folder (of
  /// any kind: one that cannot be listed is reported where it is used).
  static bool isRun(const std::string& folder);
  /// What isRun() looks for, for messages: "config.json, events.jsonl or checkpoints/".
  static std::string whatMakesARun();
  /// The run folder a checkpoint file belongs to: the folder above the checkpoints/ folder that
  /// holds it, as an absolute path with its links resolved; nothing when the file is kept
  /// elsewhere (or its path cannot be made absolute).
  static std::optional<RunDirectory> ofCheckpoint(const std::string& checkpoint);
  /// The run whose own files `path` would be (its config.json or events.jsonl, or anything in its
  /// checkpoints/, samples/, evaluations/, tensorboard/, directions/ or launch/): what a command
  /// that writes a file the user names must not replace. Nothing for any other path (a file beside
  /// them in the run folder, such as runs/first/G.onnx, is the user's).
  static std::optional<RunDirectory> owning(const std::string& path);
  /// What of isRun()'s list the folder holds, for messages: "config.json, checkpoints/ without a
  /// finished checkpoint"; empty when none.
  std::string contents() const;

  /// isRun() of this folder.
  bool holdsRun() const;

  const std::string& path() const { return path_; }
  std::string configPath() const;
  std::string eventsPath() const;
  std::string checkpointsDir() const;
  std::string samplesDir() const;
  std::string evaluationsDir() const;
  std::string tensorboardDir() const;
  std::string directionsDir() const;
  /// launch/: a detached run's launch record (core/runs/run_launch.h).
  std::string launchDir() const;
  /// The folder's own name ("first" for runs/first, and for "." inside it).
  std::string name() const;
  std::string checkpointPath(std::int64_t step) const;
  /// Path relative to the run directory of the sample grid for `step` ("samples/step-….png").
  std::string sampleRelativePath(std::int64_t step) const;

  /// Finished checkpoints, oldest (lowest step) first.
  std::vector<std::string> checkpoints() const;
  /// Deletes all but the newest `keep` checkpoints: regular files only, and none when checkpoints/
  /// is a link.
  void pruneCheckpoints(int keep) const;
  /// Deletes the ".tmp" leftovers of writes that never finished; returns how many.
  int removeTemporaryFiles() const;

private:
  std::vector<std::string> present() const;

  std::string path_;
};

}  // namespace streetgan
