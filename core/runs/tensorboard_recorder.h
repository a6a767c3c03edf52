#pragma once
// TensorBoardRecorder: the event stream of docs/events.md as TensorBoard sees it, written by a
// TensorBoardWriter into `<run>/tensorboard/`. Fed one event at a time (the trainer's own events
// as it writes them, or a finished run's events.jsonl by `streetgan tensorboard`):
//   run_started → a new event file at the first one, and a SessionLog START at its images_seen
//                 (so TensorBoard drops what a killed predecessor logged past its checkpoint);
//   step        → the original tool's scalars G_loss, D_loss, D_X, D_G_z1, D_G_z2, and
//                 throughput/images_per_s, throughput/data_wait_fraction;
//   imported_losses → G_loss and D_loss of each pair `streetgan import` packed into it;
//   parzen      → parzen/mean_ll, parzen/stderr;
//   samples     → the PNG grid as the image summary `samples`.
// The step of every record is images seen, as the original tool logged it. A write that fails
// comes back. The event stream may come from another host (a remote run's copy), so a sample
// grid is read only from inside the run directory (resolveInsideRunDirectory), only when it is a
// regular file (never a link, a FIFO or a device, which could hang or never end) of at most
// kMaxSampleBytes, and only when it is a PNG; any other is skipped with a warning naming the run
// and the path, and recording goes on.
#include "core/runs/event_stream_reader.h"
#include "core/runs/tensorboard_writer.h"
#include "core/util/result.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace streetgan {

class TensorBoardRecorder {
public:
  /// The largest sample grid read (a 64 px grid of 64 is about 1 MiB).
  static constexpr std::int64_t kMaxSampleBytes = std::int64_t(64) << 20;
  /// Receives one line per skipped sample grid: "<run_dir>: sample grid skipped: <why>".
  using WarningSink = std::function<void(const std::string&)>;

  /// Records go under `out_dir` (normally `<run_dir>/tensorboard`); sample paths are relative to
  /// `run_dir`. Without `warn` a skipped sample grid is skipped silently.
  TensorBoardRecorder(std::string run_dir, std::string out_dir, WarningSink warn = {});

  /// Bounds the bytes of all sample grids written (-1: no bound, as for the trainer, which names
  /// only grids it wrote). An event stream from elsewhere may name one large PNG a million times;
  /// grids past the bound are skipped, with one warning.
  void setSampleBudget(std::int64_t bytes) { sample_budget_ = bytes; }

  /// One event, as an EventStreamReader read it.
  Status record(const StreamEvent& event);
  /// One event as the trainer makes it, at `time` (unix seconds).
  Status record(const events::RunEvent& event, double time);
  /// The event file being written (empty before the first run_started).
  std::string path() const { return writer_ ? writer_->path() : std::string(); }
  /// Sample grids skipped so far (one warning may stand for many: those past the budget).
  std::int64_t skippedSamples() const { return skipped_samples_; }

private:
  std::string run_dir_, out_dir_;
  WarningSink warn_;
  std::optional<TensorBoardWriter> writer_;
  std::int64_t sample_budget_ = -1;
  std::int64_t sample_bytes_ = 0;   // written so far
  bool budget_warned_ = false;
  std::int64_t skipped_samples_ = 0;
};

}  // namespace streetgan
