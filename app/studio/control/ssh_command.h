#pragma once
// SshCommand: one command run on a host through SshConnection, on the Qt event loop (never blocks
// the GUI thread). Its stdout arrives as it comes (output()) and, unless streaming, is also kept
// whole for finished(); stderr is kept for the failure message. Destroying a running command
// kills its local ssh client (the remote command then sees its connection close).
#include "app/studio/control/child_process.h"
#include "app/studio/control/ssh_connection.h"
#include "app/studio/control/status_text.h"

#include <QByteArray>
#include <QObject>

#include <csignal>
#include <optional>

namespace streetgan::studio {

struct SshResult {
  int exit_code = -1;
  int signal_number = 0;
  QByteArray output;       ///< stdout (empty when streamed)
  QString error_output;    ///< stderr
  SshFailure failure = SshFailure::None;
  QString message;         ///< describeFailure(); empty on success
  bool ok() const { return failure == SshFailure::None; }
};

class SshCommand : public QObject {
  Q_OBJECT
public:
  explicit SshCommand(QObject* parent = nullptr);

  /// Runs `streetgan args...` on the connection's host. `stream`: stdout only through output().
  /// A failure (with finished() not emitted) when ssh cannot be started or the profile fails
  /// HostProfile::validateConnection(), saying why.
  Status start(const SshConnection& connection, const QStringList& args, bool stream = false);
  /// What the next start() sends the remote command on its standard input (a secret that must not
  /// be on a command line); none by default.
  void setStandardInput(const QByteArray& bytes) { process_.setStandardInput(bytes); }
  bool isRunning() const { return process_.isRunning(); }
  /// Kills the local ssh client (SIGKILL); finished() follows.
  void abort() { process_.sendSignal(SIGKILL); }
  qint64 pid() const { return process_.pid(); }

  /// Runs a command and waits for it in a local event loop (for tests and tools, not the GUI).
  static SshResult runAndWait(const SshConnection& connection, const QStringList& args, int timeout_ms = 60000);

signals:
  void output(const QByteArray& bytes);
  void finished(const streetgan::studio::SshResult& result);

private:
  ChildProcess process_;
  std::optional<SshConnection> connection_;
  SshResult result_;
  bool stream_ = false;
};

}  // namespace streetgan::studio

Q_DECLARE_METATYPE(streetgan::studio::SshResult)
