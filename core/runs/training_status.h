#pragma once
// TrainingStatus: what `streetgan train`'s live status line says about the run it is training,
// from the run's own typed events (run_started, step, epoch_end) and the time each arrived: the
// epoch and the step within it, the rate, the share of time spent waiting on data, the latest
// losses and D outputs, and the ETA of the epoch and of the run. It reads only what the events
// already carry (the trainer copies step statistics off the device at its log points), so
// following a run never costs a training step a host sync.
//
// The rate is measured over the steps of about the last `window_s` seconds, by their arrival
// times: step events that arrive in bursts (one per copy from a CUDA device) still average to the
// true rate, and the first steps' warm-up leaves the window. Times are seconds on any monotonic
// clock the caller chooses (tests pass their own). Nothing here throws; figures not known yet
// are NaN (and shown as "-").
#include "core/runs/run_event.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace streetgan {

/// "42s", "6m05s", "3h07m", "51h00m"; "-" for NaN, a negative or an impossible figure.
std::string formatDuration(double seconds);

class TrainingStatus {
public:
  /// `window_s`: the rate's window (default one minute; at least the last two steps are kept).
  explicit TrainingStatus(double window_s = 60.0);

  void onRunStarted(const events::RunStarted& started, double now_s);
  void onStep(const events::Step& step, double now_s);
  void onEpochEnd(const events::EpochEnd& end, double now_s);

  bool hasStep() const { return has_step_; }
  const events::Step& lastStep() const { return last_; }
  std::int64_t epochs() const { return epochs_; }
  /// Optimizer steps a second over the window; NaN until two steps arrived at different times.
  double stepsPerSecond() const;
  /// Training images a second over the window (the job's, with several ranks); NaN as above.
  double imagesPerSecond() const;
  /// Mean share of the window's steps spent waiting for data, 0 to 1; NaN without steps.
  double dataWaitFraction() const;
  /// Seconds until the epoch in progress ends, and until the run's last epoch ends; NaN while
  /// the rate or the run's length is unknown.
  double epochEtaSeconds() const;
  double runEtaSeconds() const;
  /// Seconds since run_started (since the first event seen, without one).
  double elapsedSeconds(double now_s) const;

  /// The terminal's status line, at most `width` characters (UTF-8 counted as characters), no
  /// newline or carriage return; the less important fields are left out first, whole:
  ///   epoch 12/25  [###.......]  3120/9375  412.3 img/s  data 3%  ETA 6m12s, run 1h02m
  ///   D 1.204 G 2.310  D(x) 0.61 D(G(z)) 0.32  elapsed 12m04s
  /// (one line; "ETA" is the epoch's, "run" the run's).
  std::string liveLine(double now_s, std::size_t width) const;
  /// The same figures as one plain line for a log file (no bar), for `--progress-every`.
  std::string plainLine(double now_s) const;

private:
  struct Sample {
    double time_s;
    std::int64_t step, images_seen;
    double data_wait;
  };
  void started(double now_s);

  double window_s_;
  bool has_start_ = false, has_step_ = false;
  double start_s_ = 0;
  std::int64_t epochs_ = 0;
  events::Step last_;
  std::deque<Sample> window_;
  double wait_sum_ = 0;
  std::size_t wait_count_ = 0;
};

}  // namespace streetgan
