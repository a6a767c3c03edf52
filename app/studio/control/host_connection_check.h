#pragma once
// HostConnectionCheck: the host dialog's "Test connection": reaches the host through SshConnection,
// runs the remote `streetgan --version`, then `streetgan info --json` for its devices, and
// reports one result. Runs on the event loop; a failure names the step and carries the SSH
// failure kind (an unknown host key is for the caller to show with its fingerprint).
#include "app/studio/control/ssh_command.h"

#include <QObject>
#include <QStringList>

#include <memory>

namespace streetgan::studio {

struct HostCheckResult {
  SshFailure failure = SshFailure::None;
  QString message;      ///< the failure, or a one-line summary
  QString version;      ///< "streetgan 0.8.0"
  QStringList devices;  ///< "cpu", "cuda:0", …
  int threads = 0;
  qint64 milliseconds = 0;
  bool ok() const { return failure == SshFailure::None; }
};

class HostConnectionCheck : public QObject {
  Q_OBJECT
public:
  explicit HostConnectionCheck(QObject* parent = nullptr);
  ~HostConnectionCheck() override;
  void start(const HostProfile& profile, const QString& control_dir = {});
  bool isRunning() const { return command_ != nullptr; }

signals:
  void finished(const streetgan::studio::HostCheckResult& result);

private:
  void finish();

  std::unique_ptr<SshConnection> connection_;
  std::unique_ptr<SshCommand> command_;
  HostCheckResult result_;
  qint64 started_ms_ = 0;
};

}  // namespace streetgan::studio

Q_DECLARE_METATYPE(streetgan::studio::HostCheckResult)
