#include "app/studio/control/followed_run_transport.h"

#include "app/studio/control/run_checkpoints.h"
#include "core/runs/process_identity.h"

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

Status FollowedRunTransport::start(const QStringList&) {
  file_.setFileName(runEventsPath(run_dir_));
  if (!file_.open(QIODevice::ReadOnly)) return failure("cannot read " + file_.fileName() + ": " + file_.errorString());
  following_ = true;
  gone_seen_ = false;
  QTimer::singleShot(0, this, &FollowedRunTransport::poll);
  return {};
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
  const bool alive = trainingProcessAlive(summary_.pid(), program_name_.toStdString(), summary_.pidStartTime());
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

void FollowedRunTransport::interrupt() { sendSignal(SIGINT); }

void FollowedRunTransport::kill() { sendSignal(SIGKILL); }

void FollowedRunTransport::sendSignal(int signal_number) {
  if (!following_) return;
  // Stop or Kill may come before the first poll has read the log: read what it holds now.
  for (QByteArray bytes = file_.read(chunk_bytes_); !bytes.isEmpty(); bytes = file_.read(chunk_bytes_)) {
    summary_.feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    emit eventBytes(bytes);
    if (!following_) return;  // a receiver detached
  }
  if (summary_.pid() == 0) {
    emit diagnosticBytes(QByteArray::fromStdString(run_dir_.toStdString() +
                                                   ": its log names no training process yet; nothing was signalled\n"));
    return;
  }
  // The pid comes from events.jsonl, a file anyone could have edited or copied from elsewhere: it
  // is signalled only when it is a valid pid of the run's own process (its logged start time,
  // for runs that log one), and the process that writes this very log, never as it is read.
  const Status sent = signalTrainingProcess(summary_.pid(), program_name_.toStdString(), summary_.pidStartTime(),
                                            signal_number, {}, file_.fileName().toStdString());
  if (!sent) emit diagnosticBytes(QByteArray::fromStdString(run_dir_.toStdString() + ": " + sent.error() + "\n"));
}

void FollowedRunTransport::detach() {
  following_ = false;
  poll_.stop();
  file_.close();
}

}  // namespace streetgan::studio
