#include "app/studio/control/remote_nodes.h"

namespace streetgan::studio {

struct RemoteNodes::Node {
  int index = 0;  // 1 to N-1
  SshConnection connection;
  std::unique_ptr<SshCommand> launch, signal;
  Node(int i, const HostProfile& profile, const QString& control_dir) : index(i), connection(profile, control_dir) {}
  QString name() const { return "node " + QString::number(index) + " (" + connection.where() + ")"; }
};

RemoteNodes::RemoteNodes(const RemoteRunRecord& run, const QString& control_dir, QObject* parent)
    : QObject(parent), run_(run) {
  for (int i = 1; i < run_.nodeCount(); ++i)
    nodes_.push_back(std::make_unique<Node>(i, run_.more_hosts[i - 1], control_dir));
}

RemoteNodes::~RemoteNodes() = default;

void RemoteNodes::launch(const QStringList& arguments, const QByteArray& job_token) {
  for (auto& owned : nodes_) {
    Node* node = owned.get();
    node->launch = std::make_unique<SshCommand>();
    connect(node->launch.get(), &SshCommand::finished, this, [this, node](const SshResult& result) {
      if (!result.ok())
        emit message("Could not start " + node->name() + ": " + result.message + " " + result.error_output.trimmed());
    });
    const QStringList remote = QStringList{"remote", "launch", run_.remoteRunDirOn(node->index), "--job-token-stdin"} +
                               arguments + QStringList{"--node-rank", QString::number(node->index)};
    node->launch->setStandardInput(job_token + "\n");
    if (Status started = node->launch->start(node->connection, remote, false); !started) {
      emit message("Could not start " + node->name() + ": " + errorText(started));
      node->launch.reset();
    }
  }
}

void RemoteNodes::signal(const QString& which) {
  for (auto& owned : nodes_) {
    Node* node = owned.get();
    node->signal = std::make_unique<SshCommand>();
    connect(node->signal.get(), &SshCommand::finished, this, [this, node, which](const SshResult& result) {
      if (!result.ok()) emit message("Could not " + which + " " + node->name() + ": " + result.message);
    });
    const QStringList remote{"remote", "signal", run_.remoteRunDirOn(node->index), which};
    if (Status started = node->signal->start(node->connection, remote, false); !started)
      emit message("Could not " + which + " " + node->name() + ": " + errorText(started));
  }
}

}  // namespace streetgan::studio
