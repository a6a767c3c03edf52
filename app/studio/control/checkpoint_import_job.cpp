#include "app/studio/control/checkpoint_import_job.h"

#include "app/studio/control/run_checkpoints.h"

#include <QDir>
#include <QFileInfo>

namespace streetgan::studio {

CheckpointImportJob::CheckpointImportJob(QString program, QObject* parent)
    : ChildProcessJob(std::move(program), parent) {}

CheckpointImportJob::~CheckpointImportJob() = default;

QString CheckpointImportJob::runDirFor(const QString& runs_root, const QString& checkpoint) {
  const QString base = QDir(runs_root).absoluteFilePath(QFileInfo(checkpoint).completeBaseName() + "-imported");
  QString candidate = base;
  for (int n = 2; QFileInfo::exists(candidate); ++n) candidate = base + "-" + QString::number(n);
  return QDir::cleanPath(candidate);
}

Status CheckpointImportJob::start(const QString& checkpoint, const QString& run_dir) {
  if (isRunning()) return failure("A checkpoint is already being imported.");
  run_dir_ = QDir::cleanPath(run_dir);
  QDir().mkpath(QFileInfo(run_dir_).absolutePath());
  return startProcess({"import", checkpoint, "--run-dir", run_dir_, "--progress"});
}

ChildProcessJob::Outcome CheckpointImportJob::outcome(int exit_code, int) {
  if (exit_code == 0 && QFileInfo(runEventsPath(run_dir_)).isFile()) return {true, run_dir_};
  return {false, failureReason(exit_code)};
}

}  // namespace streetgan::studio
