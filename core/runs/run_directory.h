#pragma once
// RunDirectory: the layout of one run on disk (docs/events.md, "The run directory"):
//   config.json, events.jsonl, checkpoints/step-<n>.pt, samples/step-<n>.png.
// Only finished checkpoints carry the final ".pt" name (they are renamed into place), so
// checkpoints() never lists a half-written one; leftovers of a killed writer end in ".tmp" and
// are removed by removeTemporaryFiles().
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

class RunDirectory {
public:
  explicit RunDirectory(std::string path);

  /// Creates the folder and its checkpoints/ and samples/ subfolders; either of them being a
  /// symbolic link is an Error naming it.
  Status create() const;
  /// True when the folder already holds a run (an event log or a checkpoint).
  bool holdsRun() const;

  const std::string& path() const { return path_; }
  std::string configPath() const;
  std::string eventsPath() const;
  std::string checkpointsDir() const;
  std::string samplesDir() const;
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
  std::string path_;
};

}  // namespace streetgan
