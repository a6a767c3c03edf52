#pragma once
// TrainProgressPrinter: what `streetgan train` (rank 0) writes on stderr while it trains, from the
// run's events (the trainer's on_event hook, on the training thread):
//   Live      stderr is a terminal: one status line redrawn in place ("\r", at most 4 times a
//             second; core/runs/training_status.h) under the lines that stay: the epoch
//             summaries, warnings and restarts.
//   Periodic  anything else (a log file, nohup, the remote launcher, the studio): the same lines
//             that stay, and a plain status line every `every_s` seconds; never a "\r".
//   Quiet     --quiet: nothing; the command's final line and errors are printed by the caller.
// The printer owns no thread and no file: it writes to the stream it is given.
#include "core/runs/run_event.h"
#include "core/runs/training_status.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace streetgan::cli {

struct TrainProgressOptions {
  enum class Mode { Live, Periodic, Quiet };
  Mode mode = Mode::Periodic;
  double every_s = 30;          ///< Periodic: seconds between status lines (--progress-every)
  double redraw_s = 0.25;       ///< Live: the least time between two redraws
  std::FILE* stream = stderr;   ///< where the lines go (not owned)
};

class TrainProgressPrinter {
public:
  explicit TrainProgressPrinter(TrainProgressOptions options);
  /// Clears the status line: an exception's one-line error (command_boundary.h) starts its own row.
  ~TrainProgressPrinter();
  TrainProgressPrinter(const TrainProgressPrinter&) = delete;
  TrainProgressPrinter& operator=(const TrainProgressPrinter&) = delete;

  /// The mode for `stream`: Live on a terminal, Periodic otherwise, Quiet with `quiet`.
  static TrainProgressOptions::Mode modeFor(std::FILE* stream, bool quiet);

  /// One event of the run, as the trainer emits it.
  void onEvent(const events::RunEvent& event);
  /// A line that stays (the caller's "device:", "training completed"): the status line is
  /// cleared first, so the two never share a row. Quiet prints these too; the caller decides.
  void printLine(const std::string& line);
  /// Clears the status line (before the process ends or prints an error).
  void clear();

private:
  double now() const;
  void redraw(double now_s, bool force);
  std::size_t terminalWidth() const;

  TrainProgressOptions options_;
  TrainingStatus status_;
  std::chrono::steady_clock::time_point origin_;
  double last_draw_s_ = -1e9, last_plain_s_ = 0;
  std::size_t drawn_ = 0;  ///< characters of the status line on screen now (Live)
};

}  // namespace streetgan::cli
