#pragma once
// ChildProcessJob: what every studio job that runs one `streetgan` command shares — the
// ChildProcess, its stdout and stderr, start, cancel and isRunning, and one finished(ok, message)
// when the command has ended. The jobs pass `--progress`, and the command's progress lines
// (core/util/progress_line.h, docs/events.md) are parsed here, the one place the studio reads
// them: each becomes progressReported() and the job's onProgress(), and none of them is kept in
// the stderr a failure's reason is taken from. A job derives from it and keeps only what is its
// own: its arguments, how it judges the ended command (outcome()), and its result.
//
// A job destroyed while its command runs kills the command (ChildProcess's destructor). Qt Core
// only.
#include "app/studio/control/status_text.h"
#include "core/util/progress_line.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace streetgan::studio {

class ChildProcess;

class ChildProcessJob : public QObject {
  Q_OBJECT
public:
  ~ChildProcessJob() override;

  bool isRunning() const { return process_ != nullptr; }
  /// Asks the command to stop (SIGINT); finished() follows. A job that set a cancel kill delay
  /// kills a command still running that long after.
  void cancel();

signals:
  /// One progress line of the command: `done` of `total` units of `task`, working on `detail`.
  void progressReported(const QString& task, qint64 done, qint64 total, const QString& detail);
  /// The command ended: ok with the job's message (its result's path, or empty), or not with why.
  void finished(bool ok, const QString& message);

protected:
  /// `program`: the `streetgan` executable.
  explicit ChildProcessJob(QString program, QObject* parent = nullptr);

  /// The job's verdict on the ended command, carried by finished().
  struct Outcome {
    bool ok = false;
    QString message;
  };
  /// Called once the command has ended and all its output has been read (isRunning() is then
  /// false): its exit code, or the signal that ended it (exit_code is then -1).
  virtual Outcome outcome(int exit_code, int signal_number) = 0;
  /// A progress line of the command, parsed; called after progressReported().
  virtual void onProgress(const ProgressLine& line);

  const QString& program() const { return program_; }
  /// Starts the program with `arguments` (stdout and stderr start empty), or gives
  /// ChildProcess's reason it cannot.
  Status startProcess(const QStringList& arguments);
  /// Sends `signal_number` to the running command; false when none runs.
  bool signalProcess(int signal_number);
  /// cancel() kills a command that has not ended `ms` after its SIGINT; negative (the default):
  /// it waits however long the command takes.
  void setCancelKillDelay(int ms) { cancel_kill_ms_ = ms; }
  /// Everything the command wrote to stdout.
  const QByteArray& standardOutput() const { return stdout_; }
  /// Why the command failed, for a message: its last stderr line that is not a progress line (its
  /// one-line error), or "exit code N".
  QString failureReason(int exit_code) const;

private:
  void onStandardError(const QByteArray& bytes);
  void onProcessFinished(int exit_code, int signal_number);
  /// One whole stderr line (without its newline): a progress line is reported, anything else kept.
  void takeLine(const QByteArray& line);
  void keepDiagnostic(const QByteArray& bytes);

  QString program_;
  std::unique_ptr<ChildProcess> process_;
  QByteArray stdout_;
  QByteArray stderr_;   // the diagnostics: stderr without its progress lines, the last 64 KiB
  QByteArray partial_;  // the stderr line being received
  bool in_long_line_ = false;  // partial_ continues a line too long to be progress, already kept
  int cancel_kill_ms_ = -1;
};

}  // namespace streetgan::studio
