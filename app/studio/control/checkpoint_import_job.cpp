#include "app/studio/control/checkpoint_import_job.h"

#include "app/studio/control/child_process.h"

#include <QDir>
#include <QFileInfo>

namespace streetgan::studio {

CheckpointImportJob::CheckpointImportJob(QString program, QObject* parent)
    : QObject(parent), program_(std::move(program)) {}

CheckpointImportJob::~CheckpointImportJob() = default;

QString CheckpointImportJob::runDirFor(const QString& runs_root, const QString& checkpoint) {
  const QString base = QDir(runs_root).absoluteFilePath(QFileInfo(checkpoint).completeBaseName() + "-imported");
  QString candidate = base;
  for (int n = 2; QFileInfo::exists(candidate); ++n) candidate = base + "-" + QString::number(n);
  return QDir::cleanPath(candidate);
}

bool CheckpointImportJob::start(const QString& checkpoint, const QString& run_dir, QString* error) {
  if (isRunning()) {
    *error = "A checkpoint is already being imported.";
    return false;
  }
  run_dir_ = QDir::cleanPath(run_dir);
  process_ = std::make_unique<ChildProcess>();
  stderr_.clear();
  connect(process_.get(), &ChildProcess::standardError, this, [this](const QByteArray& bytes) { stderr_ += bytes; });
  connect(process_.get(), &ChildProcess::finished, this, [this](int exit_code, int) {
    process_.release()->deleteLater();
    if (exit_code == 0 && QFileInfo(run_dir_ + "/events.jsonl").isFile()) {
      emit finished(true, run_dir_);
      return;
    }
    emit finished(false, ChildProcess::failureReason(stderr_, exit_code));
  });
  QDir().mkpath(QFileInfo(run_dir_).absolutePath());
  if (!process_->start(program_, {"import", checkpoint, "--run-dir", run_dir_}, error)) {
    process_.reset();
    return false;
  }
  return true;
}

}  // namespace streetgan::studio
