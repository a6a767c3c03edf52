#include "app/studio/control/run_launcher.h"

#include "app/studio/control/remote_run_record.h"
#include "app/studio/control/remote_run_transport.h"

#include <QDateTime>
#include <QRandomGenerator>
#include <QDir>
#include <QFileInfo>

#include <nlohmann/json.hpp>

namespace streetgan::studio {

RunLauncher::RunLauncher(QString program, QObject* parent) : QObject(parent), transports_(std::move(program)) {}

RunLauncher::~RunLauncher() = default;

void RunLauncher::setRunDefaults(const QString& device, int threads, int processes) {
  device_ = device;
  threads_ = threads;
  processes_ = processes;
}

Result<std::unique_ptr<QTemporaryFile>> RunLauncher::writeTemporaryConfig(const TrainConfig& config,
                                                                          const QString& name_template) {
  auto file = std::make_unique<QTemporaryFile>(QDir::temp().filePath(name_template));
  if (!file->open() || file->write(QByteArray::fromStdString(configToJson(config).dump(2))) < 0 || !file->flush())
    return failure("Cannot write the config file: " + file->errorString());
  return file;
}

Result<TrainingRequest> RunLauncher::prepareNewRun(const TrainConfig& config, const QString& runs_root,
                                                   const std::optional<HostProfile>& host,
                                                   const QList<HostProfile>& more_hosts) {
  if (host && config.dataroot.empty())
    return failure("Enter the data set folder on " + host->label() + " first.", ErrorKind::Input);
  if (!host && (config.dataroot.empty() || !QFileInfo(QString::fromStdString(config.dataroot)).isDir()))
    return failure("Choose a data set folder first (it must exist).", ErrorKind::Input);
  QDir().mkpath(runs_root);
  // A fresh run directory: <root>/<name>-<date-time>-<4 random hex digits>. The time alone was not
  // unique: two runs started in one second on one remote host got one folder there, and the
  // second was refused ("this folder already holds a run").
  const QString name = QString::fromStdString(config.name) + "-" +
                       QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + "-" +
                       QString::number(QRandomGenerator::global()->bounded(0x10000), 16).rightJustified(4, '0');
  TrainingRequest request;
  request.run_dir = QDir(runs_root).filePath(name);
  auto config_file = writeTemporaryConfig(config, "streetgan-config-XXXXXX.json");
  if (!config_file) return makeError(config_file.error(), config_file.errorKind());
  config_file_ = std::move(*config_file);
  request.config_file = config_file_->fileName();
  if (host) {
    // The local run directory mirrors the remote one; its record says where the run trains.
    RemoteRunRecord record;
    record.host = *host;
    record.remote_run_dir = RemoteRunRecord::remoteRunDirFor(*host, name);
    record.local_run_dir = request.run_dir;
    record.more_hosts = more_hosts;
    if (const QString invalid = record.validate(); !more_hosts.isEmpty() && !invalid.isEmpty())
      return failure(invalid, ErrorKind::Input);
    if (const QString failed = record.write(); !failed.isEmpty()) return failure(failed);
  }
  return request;
}

TrainingSession& RunLauncher::newSession(const QString& run_dir, bool attach) {
  attached_ = attach;
  session_ = std::make_unique<TrainingSession>(transports_.forRun(run_dir, attach));
  // The temporary config goes once the run has ended; not when a session being replaced ends (the
  // new run's config may be written already).
  connect(session_.get(), &TrainingSession::finished, this, [this, session = session_.get()] {
    if (session_.get() == session) config_file_.reset();
  });
  if (auto* transport = remote()) {
    connect(transport, &RemoteRunTransport::fileFetched, this, &RunLauncher::fileFetched);
    connect(transport, &RemoteRunTransport::fetchProgress, this, &RunLauncher::fetchProgress);
    connect(transport, &RemoteRunTransport::fetchFailed, this, &RunLauncher::fetchFailed);
  }
  return *session_;
}

bool RunLauncher::start(const TrainingRequest& request, const TrainConfig& config) {
  if (!session_) return false;
  TrainingRequest full = request;
  if (!attached_) {
    if (const RemoteRunTransport* transport = remote()) {
      // On a host: its profile's device and threads (never this computer's Settings), unless the
      // form's config sets its own.
      full.extra_arguments << transport->record().host.deviceArguments(QString::fromStdString(config.device), config.threads);
    } else {
      if (!device_.isEmpty()) full.extra_arguments << "--device" << device_;
      if (threads_ > 0) full.extra_arguments << "--threads" << QString::number(threads_);
      if (processes_ > 1) full.extra_arguments << "--nproc" << QString::number(processes_);
    }
  }
  return session_->start(full);
}

QString RunLauncher::where() const { return session_ ? session_->transport().where() : QString("this computer"); }

QString RunLauncher::latestCheckpoint() const {
  // The transport has read the whole log (replayed or followed): no second read here.
  const RemoteRunTransport* transport = remote();
  return transport ? transport->latestCheckpoint() : QString();
}

bool RunLauncher::fetchFile(const QString& relative) {
  RemoteRunTransport* transport = remote();
  if (!transport) return false;
  transport->fetchFile(relative);
  return true;
}

RemoteRunTransport* RunLauncher::remote() const {
  return session_ ? qobject_cast<RemoteRunTransport*>(&session_->transport()) : nullptr;
}

}  // namespace streetgan::studio
