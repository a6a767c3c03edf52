#include "app/studio/control/remote_run_transport.h"

#include "app/studio/control/run_checkpoints.h"
#include "core/runs/event_fields.h"
#include "core/runs/event_stream_reader.h"
#include "core/runs/run_relative_path.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSaveFile>

namespace streetgan::studio {

namespace {

constexpr qint64 kReplayChunk = 256 * 1024;

}  // namespace

RemoteRunTransport::RemoteRunTransport(RemoteRunRecord run, QString control_dir, QObject* parent)
    : TrainingTransport(parent), run_(std::move(run)), control_dir_(std::move(control_dir)),
      connection_(run_.host, control_dir_) {
  retry_.setSingleShot(true);
  connect(&retry_, &QTimer::timeout, this, &RemoteRunTransport::checkStatus);
  // Each remote command starts a `streetgan` (most of a CPU second on the host, which is training):
  // sample grids are fetched together, at most one command a second.
  fetch_delay_.setSingleShot(true);
  fetch_delay_.setInterval(1000);
  connect(&fetch_delay_, &QTimer::timeout, this, &RemoteRunTransport::nextFetch);
  mirror_.setFileName(runEventsPath(run_.local_run_dir));
  if (run_.nodeCount() > 1) {
    nodes_ = std::make_unique<RemoteNodes>(run_, control_dir_, this);
    connect(nodes_.get(), &RemoteNodes::message, this, [this](const QString& text) { emit diagnosticBytes((text + "\n").toUtf8()); });
  }
}

RemoteRunTransport::~RemoteRunTransport() = default;

void RemoteRunTransport::setRetryDelays(int first_ms, int max_ms) {
  first_retry_ms_ = retry_ms_ = first_ms;
  max_retry_ms_ = max_ms;
}

qint64 RemoteRunTransport::followClientPid() const { return follow_ && follow_->isRunning() ? follow_->pid() : 0; }

Status RemoteRunTransport::start(const QStringList& arguments) {
  if (attach_on_start_) return attach();
  // The record may have come from a remote.json that was edited or copied from elsewhere.
  if (const QString invalid = run_.validate(); !invalid.isEmpty()) return failure(invalid, ErrorKind::Input);
  QStringList remote{"remote", "launch", run_.remote_run_dir};
  QStringList train;
  for (int i = 0; i < arguments.size(); ++i) {
    const QString& arg = arguments[i];
    if (i == 0 && arg == "train") continue;
    if (arg == "--run-dir" && i + 1 < arguments.size()) {
      ++i;  // the remote run directory takes its place
    } else if (arg == "--events" && i + 1 < arguments.size()) {
      ++i;  // the log is followed instead
    } else if (arg == "--config" && i + 1 < arguments.size()) {
      QFile config(arguments[++i]);
      if (!config.open(QIODevice::ReadOnly))
        return failure(config.fileName() + ": cannot read the config (" + config.errorString() + ")");
      remote << "--config-json" << QString::fromUtf8(config.readAll());
    } else {
      train << arg;
    }
  }
  // A run on several hosts: the same command on each, node 0 here and the others through nodes_.
  if (run_.nodeCount() > 1)
    train << "--nnodes" << QString::number(run_.nodeCount()) << "--master-addr" << run_.masterAddress()
          << "--master-port" << QString::number(run_.master_port);
  // --config-json must come right after the run directory.
  const QStringList after_dir = remote.mid(3) + train;
  remote += train;
  // A job on several hosts shares a secret its ranks prove to rank 0's store (docs/distributed.md);
  // it reaches each host on the launch's standard input, never on a command line.
  QByteArray job_token;
  if (run_.nodeCount() > 1) {
    remote << "--node-rank" << "0";
    remote.insert(3, "--job-token-stdin");
    for (int i = 0; i < 4; ++i) job_token += QByteArray::number(QRandomGenerator::system()->generate64(), 16).rightJustified(16, '0');
  }
  if (const QString failed = run_.write(); !failed.isEmpty()) return failure(failed);
  mirror_.close();
  if (!mirror_.open(QIODevice::WriteOnly | QIODevice::Append))
    return failure(mirror_.fileName() + ": cannot write it (" + mirror_.errorString() + ")");
  offset_ = mirror_.size();
  launch_ = std::make_unique<SshCommand>();
  if (!job_token.isEmpty()) launch_->setStandardInput(job_token + "\n");
  connect(launch_.get(), &SshCommand::finished, this, [this](const SshResult& result) {
    if (!result.ok()) {
      endWith(result.exit_code, 0, result.message + "\n" + result.error_output);
      return;
    }
    emit launched(QString::fromUtf8(result.output).trimmed().toLongLong());
    follow();
  });
  if (Status started = launch_->start(connection_, remote, false); !started) return started;
  active_ = true;
  if (nodes_) nodes_->launch(after_dir, job_token);
  return {};
}

Status RemoteRunTransport::attach() {
  if (const QString invalid = run_.validate(); !invalid.isEmpty()) return failure(invalid, ErrorKind::Input);
  mirror_.close();
  if (!mirror_.open(QIODevice::ReadWrite | QIODevice::Append))
    return failure(mirror_.fileName() + ": cannot open it (" + mirror_.errorString() + ")");
  offset_ = mirror_.size();
  replayed_ = 0;
  active_ = true;
  QTimer::singleShot(0, this, &RemoteRunTransport::replayMirror);
  return {};
}

void RemoteRunTransport::replayMirror() {
  if (!active_) return;
  if (replayed_ < offset_) {
    // The mirror was opened for appending: read it through a second handle.
    QFile reader(mirror_.fileName());
    if (reader.open(QIODevice::ReadOnly) && reader.seek(replayed_)) {
      const QByteArray bytes = reader.read(std::min(kReplayChunk, offset_ - replayed_));
      if (!bytes.isEmpty()) {
        replayed_ += bytes.size();
        emit eventBytes(bytes);
        scanFileEvents(bytes);  // grids a closed studio had not fetched yet
        QTimer::singleShot(0, this, &RemoteRunTransport::replayMirror);
        return;
      }
    }
  }
  checkStatus();
}

void RemoteRunTransport::follow() {
  if (!active_) return;
  follow_ = std::make_unique<SshCommand>();
  connect(follow_.get(), &SshCommand::output, this, &RemoteRunTransport::onFollowOutput);
  connect(follow_.get(), &SshCommand::finished, this, &RemoteRunTransport::onFollowFinished);
  const QStringList follow{"remote", "follow", run_.remote_run_dir, "--offset", QString::number(offset_)};
  if (Status started = follow_->start(connection_, follow, true); !started) endWith(-1, 0, errorText(started));
}

void RemoteRunTransport::onFollowOutput(const QByteArray& bytes) {
  if (!active_) return;
  if (mirror_.write(bytes) != bytes.size() || !mirror_.flush()) {
    endWith(-1, 0, mirror_.fileName() + ": cannot write the local copy of the log (" + mirror_.errorString() + ")");
    return;
  }
  offset_ += bytes.size();
  retry_ms_ = first_retry_ms_;
  emit eventBytes(bytes);
  scanFileEvents(bytes);
}

void RemoteRunTransport::scanFileEvents(const QByteArray& bytes) {
  line_ += bytes;
  qsizetype start = 0;
  for (qsizetype end; (end = line_.indexOf('\n', start)) >= 0; start = end + 1) {
    const QByteArray line = line_.mid(start, end - start);
    // Most lines are steps: only those that can name a file are parsed.
    static const QByteArray samples_type = QByteArray("\"") + events::type::kSamples + '"';
    static const QByteArray checkpoint_type = QByteArray("\"") + events::type::kCheckpoint + '"';
    if (!line.contains(samples_type) && !line.contains(checkpoint_type)) continue;
    EventStreamReader parser;
    const auto event = parser.parse(std::string_view(line.constData(), static_cast<std::size_t>(line.size())));
    if (!event) continue;
    if (const auto* checkpoint = std::get_if<events::Checkpoint>(&event->event); checkpoint && !checkpoint->path.empty())
      latest_checkpoint_ = QString::fromStdString(checkpoint->path);
    const auto* samples = std::get_if<events::Samples>(&event->event);
    const QString path = samples ? QString::fromStdString(samples->path) : QString();
    if (!samples || path.isEmpty() || fetch_queue_.contains(path)) continue;
    const auto local = resolveInsideRunDirectory(run_.local_run_dir.toStdString(), path.toStdString());
    if (local && QFile::exists(QString::fromStdString(*local))) continue;  // fetched before
    fetch_queue_ << path;
    if (!fetch_ && !fetch_delay_.isActive()) fetch_delay_.start();
  }
  line_.remove(0, start);
}

void RemoteRunTransport::onFollowFinished(const SshResult& result) {
  follow_.release()->deleteLater();
  if (!active_) return;
  if (result.ok()) {
    checkStatus();  // the process ended, or the stream must be picked up again
  } else if (result.failure == SshFailure::ConnectionLost || result.failure == SshFailure::Unreachable) {
    connectionLost(result.message);
  } else {
    endWith(result.exit_code, 0, result.message);
  }
}

void RemoteRunTransport::checkStatus() {
  if (!active_) return;
  status_ = std::make_unique<SshCommand>();
  connect(status_.get(), &SshCommand::finished, this, &RemoteRunTransport::onStatus);
  if (Status started = status_->start(connection_, {"remote", "status", run_.remote_run_dir}, false); !started)
    endWith(-1, 0, errorText(started));
}

void RemoteRunTransport::onStatus(const SshResult& result) {
  status_.release()->deleteLater();
  if (!active_) return;
  if (result.failure == SshFailure::ConnectionLost || result.failure == SshFailure::Unreachable) {
    connectionLost(result.message);
    return;
  }
  if (!result.ok()) {
    endWith(result.exit_code, 0, result.message);
    return;
  }
  if (!connected_) {
    connected_ = true;
    attempts_ = 0;
    retry_ms_ = first_retry_ms_;
    emit connectionChanged(true, "Connected to " + where() + " again; reading from byte " + QString::number(offset_) + ".");
    if (!pending_signal_.isEmpty()) sendSignal(std::exchange(pending_signal_, QString()));
    nextFetch();
  }
  const QJsonObject status = QJsonDocument::fromJson(result.output.trimmed().split('\n').last()).object();
  const qint64 remote_bytes = status.value("events_bytes").toInteger();
  if (remote_bytes > offset_ || status.value("running").toBool()) {
    follow();
  } else if (!status.value("launched").toBool()) {
    endWith(-1, 0, "No training process was launched in " + run_.remote_run_dir + " on " + where() + ".");
  } else {
    const QString tail = status.value("stderr_tail").toString();
    if (status.contains("signal")) endWith(-1, status.value("signal").toInt(), tail);
    else endWith(status.value("exit_code").toInt(-1), 0, status.value("exit_code").toInt(-1) == 0 ? QString() : tail);
  }
}

void RemoteRunTransport::connectionLost(const QString& message) {
  ++attempts_;
  connected_ = false;
  emit connectionChanged(false, message + QString(" Reconnecting (attempt %1, next in %2 s)…")
                                             .arg(attempts_)
                                             .arg(retry_ms_ / 1000.0, 0, 'f', 1));
  retry_.start(retry_ms_);
  retry_ms_ = std::min(retry_ms_ * 2, max_retry_ms_);
}

void RemoteRunTransport::endWith(int exit_code, int signal_number, const QString& diagnostic) {
  if (!active_) return;
  active_ = false;
  retry_.stop();
  if (!diagnostic.isEmpty()) emit diagnosticBytes(diagnostic.toUtf8() + (diagnostic.endsWith('\n') ? "" : "\n"));
  mirror_.close();
  emit ended(exit_code, signal_number);
}

void RemoteRunTransport::sendSignal(const QString& which) {
  signal_ = std::make_unique<SshCommand>();
  connect(signal_.get(), &SshCommand::finished, this, [this, which](const SshResult& result) {
    if (result.failure == SshFailure::ConnectionLost || result.failure == SshFailure::Unreachable)
      pending_signal_ = which;  // sent again once the connection is back
    else if (!result.ok())
      emit diagnosticBytes((result.message + "\n").toUtf8());
  });
  if (Status started = signal_->start(connection_, {"remote", "signal", run_.remote_run_dir, which}, false); !started)
    emit diagnosticBytes((errorText(started) + "\n").toUtf8());
}

// On several hosts every node is told: a stop reaches every rank through node 0 as well (they stop
// together at one step), but a kill does not, and a node still joining would wait for its timeout.
void RemoteRunTransport::interrupt() {
  sendSignal("stop");
  if (nodes_) nodes_->signal("stop");
}

void RemoteRunTransport::kill() {
  sendSignal("kill");
  if (nodes_) nodes_->signal("kill");
}

void RemoteRunTransport::detach() {
  active_ = false;
  fetch_delay_.stop();
  retry_.stop();
  follow_.reset();  // kills the local client; the remote follower sees its connection go
  status_.reset();
  mirror_.close();
}

void RemoteRunTransport::fetchFile(const QString& relative) {
  if (fetch_batch_.mid(fetch_index_).contains(relative) || fetch_queue_.contains(relative)) return;
  fetch_queue_ << relative;
  if (!fetch_) nextFetch();  // asked for by the user: at once
}

void RemoteRunTransport::nextFetch() {
  if (fetch_ || fetch_queue_.isEmpty() || !connected_) return;
  // Every queued file in one command: one remote process for many sample grids.
  QStringList batch;
  while (!fetch_queue_.isEmpty() && batch.size() < 64) {
    const QString relative = fetch_queue_.takeFirst();
    const auto local = resolveInsideRunDirectory(run_.local_run_dir.toStdString(), relative.toStdString());
    if (local) batch << relative;
    else emit fetchFailed(relative, QString::fromStdString(local.error()));
  }
  if (batch.isEmpty()) return;
  fetch_batch_ = batch;
  fetch_index_ = 0;
  fetch_pending_.clear();
  fetch_data_.clear();
  fetch_total_ = -1;
  fetch_ = std::make_unique<SshCommand>();
  connect(fetch_.get(), &SshCommand::output, this, &RemoteRunTransport::onFetchOutput);
  connect(fetch_.get(), &SshCommand::finished, this, &RemoteRunTransport::onFetchFinished);
  if (Status started = fetch_->start(connection_, QStringList{"remote", "get", run_.remote_run_dir} + batch, true);
      !started) {
    fetch_.reset();
    for (const auto& relative : batch) emit fetchFailed(relative, errorText(started));
    fetch_batch_.clear();
  }
}

void RemoteRunTransport::onFetchOutput(const QByteArray& bytes) {
  fetch_pending_ += bytes;
  while (fetch_index_ < fetch_batch_.size()) {
    const QString& relative = fetch_batch_[fetch_index_];
    if (fetch_total_ < 0) {
      const qsizetype newline = fetch_pending_.indexOf('\n');
      if (newline < 0) return;
      const QByteArray header = fetch_pending_.left(newline);
      fetch_pending_.remove(0, newline + 1);
      if (header.startsWith("size ")) {
        fetch_total_ = header.mid(5).toLongLong();
        fetch_data_.clear();
      } else {
        emit fetchFailed(relative, QString::fromUtf8(header.startsWith("error ") ? header.mid(6) : header));
        ++fetch_index_;
        continue;
      }
    }
    const qint64 take = std::min<qint64>(fetch_total_ - fetch_data_.size(), fetch_pending_.size());
    fetch_data_ += fetch_pending_.left(take);
    fetch_pending_.remove(0, take);
    emit fetchProgress(relative, fetch_data_.size(), fetch_total_);
    if (fetch_data_.size() < fetch_total_) return;
    const QString path = QString::fromStdString(
        resolveInsideRunDirectory(run_.local_run_dir.toStdString(), relative.toStdString()).value());
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile file(path);
    if (file.open(QIODevice::WriteOnly) && file.write(fetch_data_) == fetch_data_.size() && file.commit())
      emit fileFetched(relative, path);
    else
      emit fetchFailed(relative, path + ": cannot write it (" + file.errorString() + ")");
    fetch_data_.clear();
    fetch_total_ = -1;
    ++fetch_index_;
  }
}

void RemoteRunTransport::onFetchFinished(const SshResult& result) {
  fetch_.release()->deleteLater();
  const QStringList unfinished = fetch_batch_.mid(fetch_index_);
  fetch_batch_.clear();
  fetch_data_.clear();
  if (!unfinished.isEmpty()) {
    if (result.failure == SshFailure::ConnectionLost || result.failure == SshFailure::Unreachable) {
      fetch_queue_ = unfinished + fetch_queue_;  // again once the connection is back
      return;
    }
    for (const auto& relative : unfinished)
      emit fetchFailed(relative, result.ok() ? "the transfer of " + relative + " was cut short" : result.message);
  }
  if (!fetch_queue_.isEmpty()) fetch_delay_.start();
}

}  // namespace streetgan::studio
