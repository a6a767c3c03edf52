#include "app/studio/control/local_process_transport.h"

#include <signal.h>

namespace streetgan::studio {

LocalProcessTransport::LocalProcessTransport(QString program, QObject* parent)
    : TrainingTransport(parent), program_(std::move(program)) {
  connect(&process_, &ChildProcess::standardOutput, this, &TrainingTransport::eventBytes);
  connect(&process_, &ChildProcess::standardError, this, &TrainingTransport::diagnosticBytes);
  connect(&process_, &ChildProcess::finished, this, &TrainingTransport::ended);
}

Status LocalProcessTransport::start(const QStringList& arguments) { return process_.start(program_, arguments); }

void LocalProcessTransport::interrupt() { process_.sendSignal(SIGINT); }
// The whole process group: a `--nproc N` launcher's ranks are in it, and would otherwise train on
// (they also end by themselves when their launcher dies: PR_SET_PDEATHSIG in rank_launcher.cpp).
void LocalProcessTransport::kill() { process_.signalGroup(SIGKILL); }
void LocalProcessTransport::detach() { process_.detach(); }

}  // namespace streetgan::studio
