#include "bench/timer_lateness_probe.h"

#include <QEventLoop>
#include <QThread>

#include <algorithm>

namespace streetgan::bench {

TimerLatenessProbe::TimerLatenessProbe() {
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(10);
  QObject::connect(&timer_, &QTimer::timeout, [this] {
    const qint64 now = clock_.nsecsElapsed();
    if (ticks_++ > 0) worst_ns_ = std::max(worst_ns_, now - last_ns_ - 10'000'000);
    last_ns_ = now;
  });
}

TimerLatenessProbe::~TimerLatenessProbe() { stop(); }

void TimerLatenessProbe::start() {
  last_ns_ = worst_ns_ = 0;
  ticks_ = 0;
  control_worst_ns_ = 0;
  clock_.start();
  timer_.start();
  // The control: the same 10 ms timer in a thread that does nothing else.
  control_ = QThread::create([this] {
    QEventLoop loop;
    QTimer control;
    QElapsedTimer clock;
    qint64 last = 0;
    int ticks = 0;
    control.setTimerType(Qt::PreciseTimer);
    control.setInterval(10);
    QObject::connect(&control, &QTimer::timeout, [&] {
      const qint64 now = clock.nsecsElapsed();
      if (ticks++ > 0) control_worst_ns_ = std::max(control_worst_ns_.load(), now - last - 10'000'000);
      last = now;
      if (QThread::currentThread()->isInterruptionRequested()) loop.quit();
    });
    clock.start();
    control.start();
    loop.exec();
  });
  control_->start();
}

void TimerLatenessProbe::stop() {
  timer_.stop();
  if (control_) {
    control_->requestInterruption();
    control_->wait();
    delete control_;
    control_ = nullptr;
  }
}

}  // namespace streetgan::bench
