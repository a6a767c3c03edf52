#pragma once
// Imports a checkpoint of the original PyTorch tool (reference_checkpoint.h) as a run directory
// that the studio opens in Explore and Evaluate and that `streetgan train --resume` continues:
//   config.json   the inferred nz/ngf/ndf/nc/img_size, the optimizer's lr, betas and weight decay
//   events.jsonl  run_started (with "imported_from"); the logged loss pairs compactly, as
//                 `imported_losses` events of up to kImportedLossesPerEvent pairs each and the last
//                 pair as one `step` event (docs/events.md); one samples event per img_list grid;
//                 the checkpoint event and run_finished
//   samples/      the img_list grids as PNG, spread evenly over the imported steps
//   checkpoints/  one checkpoint with G, D and both optimizers' moments where the file has them
//                 (a net or optimizer it lacks starts as a new run's would)
// Everything is written into a new staging folder beside `run_dir` (`<run>.importing-XXXXXX`,
// made by mkdtemp: never one an earlier import left) and renamed into place at the end, so a
// failure or a cancellation leaves nothing behind. Failures come back as one line naming the file.
#include "core/util/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace streetgan {

/// The largest `epoch` a file may hold: a run has at most 1,000,000 epochs (config "epochs").
inline constexpr std::int64_t kMaxImportedEpoch = 999'999;
/// The most values losses["_G"] or losses["_D"] may hold (the pickle reader makes at most
/// 4,194,304 values in all, so two lists of two million fit).
inline constexpr std::int64_t kMaxImportedLosses = 2'000'000;

/// Loss pairs per `imported_losses` event (a line of about 200 KB).
inline constexpr std::int64_t kImportedLossesPerEvent = 4096;

struct CheckpointImportOptions {
  std::string checkpoint;          ///< the original tool's torch.save file
  std::string run_dir;             ///< the run to create; must not exist, or be an empty folder
  std::int64_t batch_size = 128;   ///< the batch the original run used (its default): images seen = steps × batch
  std::string dataroot;            ///< the images the run trained on, for --resume and Evaluate ("" = unknown)
  std::int64_t max_losses = kMaxImportedLosses;  ///< values accepted in each of losses["_G"] and losses["_D"]
  /// Asked between the steps of the import (SIGINT/SIGTERM in the CLI): true stops it, the staging
  /// folder is removed and nothing is written. Empty: never cancelled.
  std::function<bool()> cancelled;
};

struct CheckpointImportReport {
  std::string run_dir;             ///< the run created: absolute, normalised, no trailing separator
  std::string checkpoint_path;     ///< the run's checkpoint, relative to run_dir
  int img_size = 64;
  int nz = 0, ngf = 0, ndf = 0, nc = 0;
  std::int64_t epochs = 0;         ///< epochs completed (the file's epoch + 1)
  std::int64_t steps = 0;          ///< loss pairs imported
  std::int64_t samples = 0;        ///< img_list grids written
  bool has_discriminator = false;
  bool has_optimizers = false;     ///< both optimizers' moments: --resume continues exactly
  bool ddp_prefixed = false;
};

/// The run folder `run_dir` names, as import creates it: absolute, lexically normal and without
/// trailing separators ("runs/x/" and "runs/x//" both name runs/x). Empty when it names no folder
/// that could be created (the root, an empty string).
std::string importRunFolder(const std::string& run_dir);

/// Reads `options.checkpoint` and writes the run directory.
Result<CheckpointImportReport> importReferenceCheckpoint(const CheckpointImportOptions& options);

}  // namespace streetgan
