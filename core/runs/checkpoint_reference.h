#pragma once
// resolveCheckpointReference: what a researcher may give where a checkpoint is asked for
// (`--checkpoint`, the studio's Open File…), turned into one checkpoint file:
//
//   runs/first/checkpoints/step-0000000096.pt   that file, as given
//   runs/first                                  the run's newest finished checkpoint
//   runs/first@latest                           the same
//   runs/first@50                               the newest checkpoint at or before step 50
//
// A path that exists is always taken for what it is (a file named "a@3" stays a file); "@" is
// only read when the whole text names nothing. A file is returned as given, unread: its loader
// reports what is wrong with it. A folder is a run folder when RunDirectory::isRun() says so;
// one without a finished checkpoint (an empty run, one still at its first steps) is
// an error, and so is a step before the run's first checkpoint. Errors are one line naming the
// text as given. Nothing is written; the folder is only listed (RunDirectory::checkpoints()).
#include "core/util/result.h"

#include <cstdint>
#include <string>

namespace streetgan {

struct ResolvedCheckpoint {
  std::string path;        ///< the checkpoint file: `text` itself, or one in the run's checkpoints/
  bool from_run = false;   ///< chosen in a run folder (say which: "using <path>")
  std::int64_t step = -1;  ///< from_run: the checkpoint's step
};

/// The largest step a reference may name (RUN@STEP): the checkpoint names' 10 digits.
inline constexpr std::int64_t kMaxReferencedStep = 9'999'999'999;

/// `text` as a checkpoint file, a run folder, RUN@STEP or RUN@latest (above).
Result<ResolvedCheckpoint> resolveCheckpointReference(const std::string& text);

}  // namespace streetgan
