#pragma once
// TrainingTransport: where a `streetgan train` process runs and how its bytes reach the studio.
// The session (TrainingSession) speaks only to this interface, so a run on this computer
// (LocalProcessTransport) and one on a remote host over SSH are one code path. A transport
// delivers the event stream's bytes as they come (any chunking), the process's diagnostics
// (stderr), and one ended() when the process is gone.
#include "app/studio/control/status_text.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

namespace streetgan::studio {

class TrainingTransport : public QObject {
  Q_OBJECT
public:
  using QObject::QObject;
  ~TrainingTransport() override = default;

  /// Starts `streetgan` with `arguments`, or says why it could not start.
  virtual Status start(const QStringList& arguments) = 0;
  /// Asks the run to stop (SIGINT: finish the step, write a checkpoint, exit).
  virtual void interrupt() = 0;
  /// Ends the process at once (SIGKILL).
  virtual void kill() = 0;
  /// Stops watching and leaves the process running.
  virtual void detach() = 0;
  virtual bool isRunning() const = 0;
  /// Where the run is, for labels: "this computer", "user@host".
  virtual QString where() const = 0;

signals:
  void eventBytes(const QByteArray& bytes);
  void diagnosticBytes(const QByteArray& bytes);
  /// The process ended: its exit code, or the signal that ended it (exit_code is then -1).
  void ended(int exit_code, int signal_number);
  /// The link to a remote process was lost (connected false: the transport is retrying, with the
  /// reason and when it tries next) or is back. Local transports never emit it.
  void connectionChanged(bool connected, const QString& message);
};

}  // namespace streetgan::studio
