#pragma once
// TensorBoardRecorder: the event stream of docs/events.md as TensorBoard sees it, written by a
// TensorBoardWriter into `<run>/tensorboard/`. Fed one event at a time (the trainer's own events
// as it writes them, or a finished run's events.jsonl by `streetgan tensorboard`):
//   run_started → a new event file at the first one, and a SessionLog START at its images_seen
//                 (so TensorBoard drops what a killed predecessor logged past its checkpoint);
//   step        → the original tool's scalars G_loss, D_loss, D_X, D_G_z1, D_G_z2, and
//                 throughput/images_per_s, throughput/data_wait_fraction;
//   parzen      → parzen/mean_ll, parzen/stderr;
//   samples     → the PNG grid as the image summary `samples`.
// The step of every record is images seen, as the original tool logged it. A sample grid that
// cannot be read is skipped (the caller's log already names it); a write that fails comes back.
#include "core/runs/tensorboard_writer.h"
#include "core/util/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace streetgan {

class TensorBoardRecorder {
public:
  /// Records go under `out_dir` (normally `<run_dir>/tensorboard`); sample paths are relative to
  /// `run_dir`.
  TensorBoardRecorder(std::string run_dir, std::string out_dir);

  /// One event: `event` holds "type", "time" and the event's fields.
  Status record(const nlohmann::json& event);
  /// The event file being written (empty before the first run_started).
  std::string path() const { return writer_ ? writer_->path() : std::string(); }

private:
  std::string run_dir_, out_dir_;
  std::optional<TensorBoardWriter> writer_;
};

}  // namespace streetgan
