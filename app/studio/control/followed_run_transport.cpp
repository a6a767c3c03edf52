#include "app/studio/control/followed_run_transport.h"

#include <QDir>

#include <signal.h>

namespace streetgan::studio {

FollowedRunTransport::FollowedRunTransport(QString run_dir, QString program_name, QObject* parent)
    : TrainingTransport(parent), run_dir_(std::move(run_dir)), program_name_(std::move(program_name)),
      summary_(run_dir_.toStdString()) {
  poll_.setInterval(250);
  poll_.setSingleShot(true);
  connect(&poll_, &QTimer::timeout, this, &FollowedRunTransport::poll);
}

bool FollowedRunTransport::start(const QStringList&, QString* error) {
  file_.setFileName(QDir(run_dir_).filePath("events.jsonl"));
  if (!file_.open(QIODevice::ReadOnly)) {
    if (error) *error = "cannot read " + file_.fileName() + ": " + file_.errorString();
    return false;
  }
  following_ = true;
  gone_seen_ = false;
  QTimer::singleShot(0, this, &FollowedRunTransport::poll);
  return true;
}

void FollowedRunTransport::poll() {
  if (!following_) return;
  const QByteArray bytes = file_.read(chunk_bytes_);
  if (!bytes.isEmpty()) {
    summary_.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    emit eventBytes(bytes);
    if (!following_) return;  // a receiver detached
    if (bytes.size() == chunk_bytes_) {
      QTimer::singleShot(0, this, &FollowedRunTransport::poll);  // more to read: go on at once
      return;
    }
  }
  if (summary_.finished()) return end();
  const bool alive = trainingProcessAlive(summary_.pid(), program_name_.toStdString());
  if (!alive) {
    // The process may have written its last lines between the read and the check: read once more.
    if (gone_seen_) return end();
    gone_seen_ = true;
    QTimer::singleShot(0, this, &FollowedRunTransport::poll);
    return;
  }
  poll_.start();
}

void FollowedRunTransport::end() {
  following_ = false;
  poll_.stop();
  file_.close();
  emit ended(0, 0);
}

void FollowedRunTransport::interrupt() {
  if (following_ && trainingProcessAlive(summary_.pid(), program_name_.toStdString()))
    ::kill(static_cast<pid_t>(summary_.pid()), SIGINT);
}

void FollowedRunTransport::kill() {
  if (following_ && trainingProcessAlive(summary_.pid(), program_name_.toStdString()))
    ::kill(static_cast<pid_t>(summary_.pid()), SIGKILL);
}

void FollowedRunTransport::detach() {
  following_ = false;
  poll_.stop();
  file_.close();
}

}  // namespace streetgan::studio
