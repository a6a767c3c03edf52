#include "app/studio/control/cache_build_job.h"

#include "app/studio/control/child_process.h"

#include <QDir>
#include <QFileInfo>

#include <signal.h>

namespace streetgan::studio {

CacheBuildJob::CacheBuildJob(QString program, QObject* parent) : QObject(parent), program_(std::move(program)) {}

CacheBuildJob::~CacheBuildJob() {
  if (process_) process_->sendSignal(SIGTERM);  // the build removes its unfinished file
}

bool CacheBuildJob::start(const QString& dataroot, const QString& config, const QString& out, QString* error) {
  if (isRunning()) {
    *error = "A cache is already being built.";
    return false;
  }
  out_ = QDir::cleanPath(out);
  process_ = std::make_unique<ChildProcess>();
  stdout_.clear();
  stderr_.clear();
  connect(process_.get(), &ChildProcess::standardOutput, this, [this](const QByteArray& bytes) {
    stdout_ += bytes;
    // " 42%  420/1000 images": report the latest count.
    const int end = stdout_.lastIndexOf(" images\n");
    if (end < 0) return;
    const int begin = stdout_.lastIndexOf(' ', end - 1) + 1;
    const QList<QByteArray> parts = stdout_.mid(begin, end - begin).split('/');
    if (parts.size() == 2 && parts[1].toLongLong() > 0) emit progressChanged(parts[0].toLongLong(), parts[1].toLongLong());
    stdout_ = stdout_.mid(end);
  });
  connect(process_.get(), &ChildProcess::standardError, this, [this](const QByteArray& bytes) { stderr_ += bytes; });
  connect(process_.get(), &ChildProcess::finished, this, [this](int exit_code, int signal_number) {
    process_.release()->deleteLater();
    if (exit_code == 0 && signal_number == 0 && QFileInfo(out_).isFile()) {
      emit finished(true, out_);
      return;
    }
    emit finished(false, signal_number != 0 ? QString("cancelled") : ChildProcess::failureReason(stderr_, exit_code));
  });
  QDir().mkpath(QFileInfo(out_).absolutePath());
  if (!process_->start(program_, {"cache", "build", "--dataroot", dataroot, "--config", config, "--out", out_}, error)) {
    process_.reset();
    return false;
  }
  return true;
}

void CacheBuildJob::cancel() {
  if (process_) process_->sendSignal(SIGINT);
}

}  // namespace streetgan::studio
