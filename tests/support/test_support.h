#pragma once
// Helpers shared by the tests that drive the real `streetgan` program.
#include <QElapsedTimer>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>

#include <atomic>

namespace streetgan::test {

struct CliResult {
  int exit_code = -1;
  QString out;
  QString err;
};

/// Runs `streetgan args...` to completion (up to `timeout_ms`).
CliResult runCli(const QStringList& args, int timeout_ms = 600000);

/// A 32-image MSLS-layout demo data set, rendered once per test process into `dir`.
QString makeTinyDataset(const QString& dir);

/// testThreads() (STREETGAN_TEST_THREADS, default 2) as the value of `--threads` or the form's
/// `threads`.
QString testThreadsText();

/// The arguments of a tiny, fast training run (batch 8, ngf/ndf 8, nz 16).
QStringList tinyTrainArgs(const QString& dataroot, const QString& run_dir, int epochs);

/// The form entries (key, text) of the same tiny run, for the Train tab's ConfigForm.
QList<QPair<QString, QString>> tinyFormEntries(int epochs);

/// A file's bytes (empty when it cannot be read).
QByteArray readFileBytes(const QString& path);

/// Every event line of a run's events.jsonl, parsed.
QVector<QJsonObject> readEvents(const QString& run_dir);
/// Only the events of `type`.
QVector<QJsonObject> eventsOfType(const QVector<QJsonObject>& events, const QString& type);

/// Writes an executable shell script (a stand-in program for a test); false when it cannot.
bool writeScript(const QString& path, const QByteArray& body);

/// How late a 10 ms timer on the GUI thread fires while something runs: the GUI-stall probe. A
/// control timer on an idle thread of its own measures the same at the same time: when it is late
/// too, the machine (another tenant of a shared VM) stalled, not the GUI.
class TimerLatenessProbe {
public:
  TimerLatenessProbe();
  ~TimerLatenessProbe();
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
  class QThread* control_ = nullptr;
  std::atomic<qint64> control_worst_ns_{0};
};

/// Folder for files a person may want to look at after the tests (screenshots, samples).
QString testOutputDir();

}  // namespace streetgan::test
