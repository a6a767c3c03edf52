#include "app/studio/control/training_transport_factory.h"

#include "app/studio/control/followed_run_transport.h"
#include "app/studio/control/local_process_transport.h"
#include "app/studio/control/remote_run_record.h"
#include "app/studio/control/remote_run_transport.h"

namespace streetgan::studio {

std::unique_ptr<TrainingTransport> TrainingTransportFactory::forRun(const QString& run_dir, bool attach) const {
  if (auto record = RemoteRunRecord::read(run_dir)) {
    auto transport = std::make_unique<RemoteRunTransport>(*record, ssh_control_dir_);
    transport->setAttachOnStart(attach);
    return transport;
  }
  if (attach) return std::make_unique<FollowedRunTransport>(run_dir);
  return std::make_unique<LocalProcessTransport>(program_);
}

}  // namespace streetgan::studio
