#pragma once
// Imports a checkpoint of the original PyTorch tool (reference_checkpoint.h) as a run directory
// that the studio opens in Explore and Evaluate and that `streetgan train --resume` continues:
//   config.json   the inferred nz/ngf/ndf/nc/img_size, the optimizer's lr, betas and weight decay
//   events.jsonl  run_started (with "imported_from"), one step event per logged loss pair, one
//                 samples event per img_list grid, the checkpoint event and run_finished
//   samples/      the img_list grids as PNG, spread evenly over the imported steps
//   checkpoints/  one checkpoint with G, D and both optimizers' moments where the file has them
//                 (a net or optimizer it lacks starts as a new run's would)
// Everything is written into a staging folder beside `run_dir` and renamed into place at the end,
// so a failure leaves nothing behind. Failures come back as one line naming the file.
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct CheckpointImportOptions {
  std::string checkpoint;          ///< the original tool's torch.save file
  std::string run_dir;             ///< the run to create; must not exist, or be an empty folder
  std::int64_t batch_size = 128;   ///< the batch the original run used (its default): images seen = steps × batch
  std::string dataroot;            ///< the images the run trained on, for --resume and Evaluate ("" = unknown)
};

struct CheckpointImportReport {
  std::string checkpoint_path;     ///< the run's checkpoint
  int img_size = 64;
  int nz = 0, ngf = 0, ndf = 0, nc = 0;
  std::int64_t epochs = 0;         ///< epochs completed (the file's epoch + 1)
  std::int64_t steps = 0;          ///< loss pairs imported as step events
  std::int64_t samples = 0;        ///< img_list grids written
  bool has_discriminator = false;
  bool has_optimizers = false;     ///< both optimizers' moments: --resume continues exactly
  bool ddp_prefixed = false;
};

/// Reads `options.checkpoint` and writes the run directory.
Result<CheckpointImportReport> importReferenceCheckpoint(const CheckpointImportOptions& options);

}  // namespace streetgan
