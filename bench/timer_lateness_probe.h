#pragma once
// TimerLatenessProbe: how late a 10 ms timer on the GUI thread fires while something runs (the
// GUI-stall figure of bench_gui_stall). A control timer on an idle thread of its own measures the
// same at the same time: when it is late too, the machine (another tenant of a shared VM, a build
// beside it) stalled, not the GUI. Moved here from the tests' support library when the stall
// figures left the tests (issue 31: no timed assertions in tests).
#include <QElapsedTimer>
#include <QTimer>

#include <atomic>

class QThread;

namespace streetgan::bench {

class TimerLatenessProbe {
public:
  TimerLatenessProbe();
  ~TimerLatenessProbe();
  TimerLatenessProbe(const TimerLatenessProbe&) = delete;
  TimerLatenessProbe& operator=(const TimerLatenessProbe&) = delete;

  void start();
  void stop();
  /// The worst lateness so far, in milliseconds: on the GUI thread, and on the idle control thread.
  double worstMs() const { return worst_ns_ / 1e6; }
  double controlWorstMs() const { return control_worst_ns_.load() / 1e6; }
  int ticks() const { return ticks_; }
  double seconds() const { return clock_.nsecsElapsed() / 1e9; }

private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 last_ns_ = 0, worst_ns_ = 0;
  int ticks_ = 0;
  QThread* control_ = nullptr;
  std::atomic<qint64> control_worst_ns_{0};
};

}  // namespace streetgan::bench
