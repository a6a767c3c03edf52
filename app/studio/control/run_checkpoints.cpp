#include "app/studio/control/run_checkpoints.h"

#include "core/runs/run_directory.h"

#include <QDir>

namespace streetgan::studio {

QString runEventsPath(const QString& run_dir) {
  return QString::fromStdString(RunDirectory(run_dir.toStdString()).eventsPath());
}

QString runConfigPath(const QString& run_dir) {
  return QString::fromStdString(RunDirectory(run_dir.toStdString()).configPath());
}

QString runCheckpointsDir(const QString& run_dir) {
  return QString::fromStdString(RunDirectory(run_dir.toStdString()).checkpointsDir());
}

QString runEvaluationsDir(const QString& run_dir) {
  return QString::fromStdString(RunDirectory(run_dir.toStdString()).evaluationsDir());
}

QStringList checkpointFiles(const QString& run_dir) {
  // Only finished checkpoints end in ".pt": a write in progress has a ".tmp" name.
  return QDir(runCheckpointsDir(run_dir)).entryList({"*.pt"}, QDir::Files, QDir::Name);
}

QString latestCheckpoint(const QString& run_dir) {
  const QStringList files = checkpointFiles(run_dir);
  return files.isEmpty() ? QString() : QDir(runCheckpointsDir(run_dir)).filePath(files.last());
}

QFileInfoList runsWithCheckpoints(const QString& root) {
  QFileInfoList runs;
  for (const QFileInfo& run : QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time))
    if (!checkpointFiles(run.absoluteFilePath()).isEmpty()) runs.append(run);
  return runs;
}

}  // namespace streetgan::studio
