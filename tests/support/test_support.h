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

/// Runs `program args...` to completion (up to `timeout_ms`; then killed, exit code -1).
CliResult runProgram(const QString& program, const QStringList& args, int timeout_ms = 600000);

/// Runs `streetgan args...` to completion (up to `timeout_ms`).
CliResult runCli(const QStringList& args, int timeout_ms = 600000);

/// A 32-image MSLS-layout demo data set in `dir`/data: rendered once per build of the engine, copied.
QString makeTinyDataset(const QString& dir);

/// A TCP port nothing listens on now on 127.0.0.1, for a store the test's ranks host.
int freeLoopbackPort();

/// testThreads() (test_device.h) as the value of `--threads` or the form's
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

/// A stand-in for `streetgan train` that speaks the event protocol at about 2,000 step events a
/// second for 5 s (10,000 steps: 100 at a time, then a 45 ms sleep) and ends the run; false when
/// it cannot be written. The load of the Train tab's flood test and of bench/bench_gui_stall.
bool writeEventFloodScript(const QString& path);

/// `count` finished runs of `steps` step events each, `dir`/earlier-0, earlier-1, ... (for a
/// comparison open beside a run); their folders, or nothing when one cannot be written.
QStringList writeLongRuns(const QString& dir, int count, int steps);

/// Folder for files a person may want to look at after the tests (screenshots, samples).
QString testOutputDir();

/// The child processes of `parent` (the ranks a launcher started), from /proc, sorted.
QList<qint64> childrenOf(qint64 parent);
/// Whether process `pid` has installed a handler for `signal_number` (SigCgt of /proc/PID/status):
/// a signal sent before then ends it as the default action does, not as the program would.
bool catchesSignal(qint64 pid, int signal_number);
/// A process's start time (field 22 of /proc/PID/stat): empty once it is gone, or when only its
/// zombie is left (killed, its new parent has not reaped it yet). Compared with the start time
/// seen earlier, so a pid reused meanwhile is not taken for the process.
QByteArray liveStartTime(qint64 pid);
/// Waits (a hang guard of 60 s, not a time limit) until none of `processes` (pid, start time)
/// is left; the pids of those still running. Whatever is left is then killed, so nothing
/// outlives the test.
QStringList waitUntilGone(const QList<QPair<qint64, QByteArray>>& processes);

}  // namespace streetgan::test
