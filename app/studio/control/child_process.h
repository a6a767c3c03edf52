#pragma once
// ChildProcess: a program started in a session of its own (setsid), its stdout and stderr read
// through pipes on the Qt event loop. Unlike QProcess it can let go of a running child: detach()
// stops reading and leaves the process running — a training run the user chose to leave running
// when closing the studio keeps writing its run directory. The child starts with default signal
// handling and /dev/null as stdin; its exit is noticed by polling waitpid() for its pid only, so
// it never takes QProcess's children. finished() comes after the output that was in the pipes.
// Being a session leader, the child leads its own process group too (pgid = its pid), which the
// processes it starts join — the ranks of `streetgan train --nproc N`: signalGroup() reaches them
// all.
#include "app/studio/control/status_text.h"

#include <QByteArray>
#include <QObject>
#include <QSocketNotifier>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <sys/types.h>

#include <memory>

namespace streetgan::studio {

class ChildProcess : public QObject {
  Q_OBJECT
public:
  explicit ChildProcess(QObject* parent = nullptr);
  /// A child still attached is killed (SIGKILL, with its process group) and reaped; a detached
  /// one runs on.
  ~ChildProcess() override;

  /// Starts `program` (searched in PATH) with `arguments`, or says why it cannot.
  Status start(const QString& program, const QStringList& arguments);
  /// What the next start() gives the child on its standard input (at most 4096 bytes, then end of
  /// file); by default none (/dev/null).
  void setStandardInput(const QByteArray& bytes) { standard_input_ = bytes.left(4096); }
  bool isRunning() const { return pid_ > 0; }
  qint64 pid() const { return pid_; }
  /// Sends `signal_number` to the child; false when it is not running.
  bool sendSignal(int signal_number);
  /// Sends `signal_number` to the child's process group (the child and what it started that is
  /// still in its group); false when the child is not running.
  bool signalGroup(int signal_number);
  /// Stops reading and watching; the child runs on (writes to its stdout then fail with EPIPE).
  void detach();
  /// Why a `streetgan` command failed, for a message: the last line it wrote to stderr (its
  /// one-line error), or "exit code N" when it wrote none.
  static QString failureReason(const QByteArray& standard_error, int exit_code);

signals:
  void standardOutput(const QByteArray& bytes);
  void standardError(const QByteArray& bytes);
  /// The child ended: its exit code, or the signal that ended it (then exit_code is -1).
  void finished(int exit_code, int signal_number);

private:
  /// Reads what the pipe holds (up to 1 MiB); true when it stopped at that cap.
  bool readAvailable(int& fd, std::unique_ptr<QSocketNotifier>& notifier, bool is_stdout);
  void drain(int& fd, bool is_stdout);  // everything in the pipe now, past the per-wake-up cap
  void pollExit();
  void closePipes();

  pid_t pid_ = -1;
  QByteArray standard_input_;
  int out_fd_ = -1, err_fd_ = -1;
  std::unique_ptr<QSocketNotifier> out_notifier_, err_notifier_;
  QTimer exit_poll_;
};

}  // namespace streetgan::studio
