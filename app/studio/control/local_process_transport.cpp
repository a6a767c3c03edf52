#include "app/studio/control/local_process_transport.h"

#include <signal.h>

namespace streetgan::studio {

LocalProcessTransport::LocalProcessTransport(QString program, QObject* parent)
    : TrainingTransport(parent), program_(std::move(program)) {
  connect(&process_, &ChildProcess::standardOutput, this, &TrainingTransport::eventBytes);
  connect(&process_, &ChildProcess::standardError, this, &TrainingTransport::diagnosticBytes);
  connect(&process_, &ChildProcess::finished, this, &TrainingTransport::ended);
}

bool LocalProcessTransport::start(const QStringList& arguments, QString* error) {
  return process_.start(program_, arguments, error);
}

void LocalProcessTransport::interrupt() { process_.sendSignal(SIGINT); }
void LocalProcessTransport::kill() { process_.sendSignal(SIGKILL); }
void LocalProcessTransport::detach() { process_.detach(); }

}  // namespace streetgan::studio
