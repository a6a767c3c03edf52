#pragma once
// RemoteNodes: the hosts after the first of a run on several hosts (RemoteRunRecord::more_hosts).
// launch() starts the same `streetgan train` on each, detached (`streetgan remote launch` in that
// host's own run directory, with --node-rank i), over one SSH connection per host; signal() passes
// a stop or a kill on to every one. They are not followed: rank 0, on node 0 (RemoteRunTransport),
// writes the whole log. A host that cannot be reached or launched is said in message(); node 0's
// ranks then fail after --dist-timeout, naming the node that never joined. Qt Core only.
#include "app/studio/control/remote_run_record.h"
#include "app/studio/control/ssh_command.h"

#include <QObject>
#include <QStringList>

#include <memory>
#include <vector>

namespace streetgan::studio {

class RemoteNodes : public QObject {
  Q_OBJECT
public:
  /// `control_dir`: the shared-connection socket folder (empty: SshConnection's default).
  RemoteNodes(const RemoteRunRecord& run, const QString& control_dir, QObject* parent = nullptr);
  ~RemoteNodes() override;

  /// Launches node i (1 to N-1): `streetgan remote launch <its run dir> --job-token-stdin
  /// <arguments> --node-rank i`, the job's token on its standard input. `arguments` are those of
  /// node 0 after its run directory and token option (--config-json first, then train's).
  void launch(const QStringList& arguments, const QByteArray& job_token);
  /// "stop" or "kill" to every node's run.
  void signal(const QString& which);

signals:
  /// A node's launch or signal failed: one line naming the node and its host.
  void message(const QString& text);

private:
  struct Node;
  RemoteRunRecord run_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace streetgan::studio
