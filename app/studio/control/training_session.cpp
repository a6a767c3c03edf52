#include "app/studio/control/training_session.h"

#include "core/runs/event_fields.h"

#include <cstring>

namespace streetgan::studio {

namespace {
constexpr int kStderrKeep = 64 * 1024;
}

TrainingSession::TrainingSession(std::unique_ptr<TrainingTransport> transport, QObject* parent)
    : QObject(parent), transport_(std::move(transport)) {
  connect(transport_.get(), &TrainingTransport::eventBytes, this, &TrainingSession::onEventBytes);
  connect(transport_.get(), &TrainingTransport::diagnosticBytes, this, &TrainingSession::onDiagnostics);
  connect(transport_.get(), &TrainingTransport::ended, this, &TrainingSession::onEnded);
  connect(transport_.get(), &TrainingTransport::connectionChanged, this, &TrainingSession::onConnectionChanged);
}

TrainingSession::~TrainingSession() = default;

QStringList TrainingSession::argumentsFor(const TrainingRequest& request) {
  QStringList arguments{"train", "--run-dir", request.run_dir, "--events", "-"};
  if (request.resume) arguments << "--resume";
  if (!request.dataroot.isEmpty()) arguments << "--dataroot" << request.dataroot;
  if (!request.config_file.isEmpty()) arguments << "--config" << request.config_file;
  return arguments + request.extra_arguments;
}

QString TrainingSession::stateName(SessionState state) {
  switch (state) {
    case SessionState::Idle: return "idle";
    case SessionState::Starting: return "starting";
    case SessionState::Running: return "running";
    case SessionState::Stopping: return "stopping";
    case SessionState::Reconnecting: return "reconnecting";
    case SessionState::Completed: return "completed";
    case SessionState::Stopped: return "stopped";
    case SessionState::Failed: return "failed";
    case SessionState::Detached: return "running without the studio";
  }
  return "?";
}

bool TrainingSession::isActive() const {
  return state_ == SessionState::Starting || state_ == SessionState::Running || state_ == SessionState::Stopping ||
         state_ == SessionState::Reconnecting;
}

bool TrainingSession::start(const TrainingRequest& request) {
  if (isActive()) {
    error_ = "a run is already in progress in this session";
    return false;
  }
  reader_ = EventStreamReader();
  finished_status_.clear();
  error_.clear();
  stderr_.clear();
  if (Status started = transport_->start(argumentsFor(request)); !started) {
    error_ = errorText(started);
    setState(SessionState::Failed);
    emit finished(state_, error_);
    return false;
  }
  setState(SessionState::Starting);
  return true;
}

void TrainingSession::stop() {
  if (state_ == SessionState::Reconnecting && state_before_reconnecting_ != SessionState::Stopping) {
    state_before_reconnecting_ = SessionState::Stopping;  // the transport tries once the link is back
    transport_->interrupt();
    return;
  }
  if (state_ != SessionState::Starting && state_ != SessionState::Running) return;
  setState(SessionState::Stopping);
  transport_->interrupt();
}

void TrainingSession::onConnectionChanged(bool connected, const QString& message) {
  connection_message_ = message;
  if (!connected && isActive() && state_ != SessionState::Reconnecting) {
    state_before_reconnecting_ = state_;
    setState(SessionState::Reconnecting);
  } else if (connected && state_ == SessionState::Reconnecting) {
    setState(state_before_reconnecting_);
  }
  emit connectionChanged(connected, message);
}

void TrainingSession::kill() {
  if (isActive()) transport_->kill();
}

void TrainingSession::detach() {
  if (!isActive()) return;
  transport_->detach();
  setState(SessionState::Detached);
}

QString TrainingSession::stderrTail(int lines) const {
  QList<QByteArray> all = stderr_.split('\n');
  while (!all.isEmpty() && all.last().trimmed().isEmpty()) all.removeLast();
  const int first = std::max(0, static_cast<int>(all.size()) - lines);
  QStringList tail;
  for (int i = first; i < all.size(); ++i) tail << QString::fromUtf8(all[i]);
  return tail.join('\n');
}

void TrainingSession::onEventBytes(const QByteArray& bytes) {
  handle(reader_.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size()))));
}

void TrainingSession::onDiagnostics(const QByteArray& bytes) {
  stderr_ += bytes;
  if (stderr_.size() > kStderrKeep) stderr_.remove(0, stderr_.size() - kStderrKeep);
}

void TrainingSession::handle(std::vector<StreamEvent> batch) {
  if (batch.empty()) return;
  for (const StreamEvent& event : batch) {
    if (std::holds_alternative<events::RunStarted>(event.event)) {
      // A log read from its start holds every process of the run: only the last one's end counts.
      finished_status_.clear();
      error_.clear();
      if (state_ == SessionState::Starting) setState(SessionState::Running);
      if (state_ == SessionState::Reconnecting && state_before_reconnecting_ == SessionState::Starting)
        state_before_reconnecting_ = SessionState::Running;
    } else if (const auto* error = std::get_if<events::Error>(&event.event)) {
      error_ = QString::fromStdString(error->message);
    } else if (const auto* finished = std::get_if<events::RunFinished>(&event.event)) {
      finished_status_ = QString::fromStdString(finished->status);
      if (!finished->message.empty()) error_ = QString::fromStdString(finished->message);
    }
  }
  emit eventsReceived(batch);
}

void TrainingSession::onEnded(int exit_code, int signal_number) {
  handle(reader_.finish());
  SessionState final_state = SessionState::Failed;
  QString message;
  if (finished_status_ == events::status::kCompleted) {
    final_state = SessionState::Completed;
    message = "training completed";
  } else if (finished_status_ == events::status::kStopped) {
    final_state = SessionState::Stopped;
    message = "training stopped; resume continues from its checkpoint";
  } else if (finished_status_ == events::status::kFailed) {
    message = error_.isEmpty() ? QString("training failed") : "training failed: " + error_;
  } else if (signal_number != 0) {
    message = QString("the training process was killed by signal %1 (%2)")
                  .arg(signal_number)
                  .arg(QString::fromUtf8(strsignal(signal_number)));
  } else if (exit_code != 0) {
    message = QString("the training process exited with code %1 before finishing the run").arg(exit_code);
    if (!error_.isEmpty()) message += ": " + error_;
  } else {
    message = "the training process ended without finishing the run";
  }
  if (final_state == SessionState::Failed) {
    error_ = message;
    const QString tail = stderrTail(5);
    if (!tail.isEmpty()) message += "\n" + tail;
  }
  setState(final_state);
  emit finished(final_state, message);
}

void TrainingSession::setState(SessionState state) {
  if (state == state_) return;
  state_ = state;
  emit stateChanged(state);
}

}  // namespace streetgan::studio
