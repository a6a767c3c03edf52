#pragma once
// TrainingTransportFactory: chooses how the studio reaches a run. A run directory holding a
// remote run's record (RemoteRunRecord) goes over SSH (RemoteRunTransport); otherwise a run
// being opened is followed through its events.jsonl (FollowedRunTransport), and a run being
// started or resumed is a local `streetgan train` process (LocalProcessTransport). The caller
// owns the transport it gets. Qt Core only.
#include "app/studio/control/training_transport.h"

#include <QString>

#include <memory>

namespace streetgan::studio {

class TrainingTransportFactory {
public:
  /// `program`: the local `streetgan` executable.
  explicit TrainingTransportFactory(QString program) : program_(std::move(program)) {}

  /// The SSH shared-connection folder for remote runs (empty: the default).
  void setSshControlDir(const QString& dir) { ssh_control_dir_ = dir; }
  /// The transport for `run_dir`: `attach` to a run that exists (opened from the Runs tab), or
  /// not to start or resume one.
  std::unique_ptr<TrainingTransport> forRun(const QString& run_dir, bool attach) const;

private:
  QString program_, ssh_control_dir_;
};

}  // namespace streetgan::studio
