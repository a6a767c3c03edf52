#pragma once
// LocalProcessTransport: runs `streetgan` on this computer as a child process (ChildProcess) and
// passes on its stdout (the event stream, `--events -`) and stderr. interrupt() signals the
// process (a `--nproc N` launcher passes it on to its ranks); kill() its whole process group, so
// a launcher's ranks end with it.
#include "app/studio/control/child_process.h"
#include "app/studio/control/training_transport.h"

namespace streetgan::studio {

class LocalProcessTransport : public TrainingTransport {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable to run.
  explicit LocalProcessTransport(QString program, QObject* parent = nullptr);

  Status start(const QStringList& arguments) override;
  void interrupt() override;
  void kill() override;
  void detach() override;
  bool isRunning() const override { return process_.isRunning(); }
  QString where() const override { return "this computer"; }
  qint64 pid() const { return process_.pid(); }

private:
  QString program_;
  ChildProcess process_;
};

}  // namespace streetgan::studio
