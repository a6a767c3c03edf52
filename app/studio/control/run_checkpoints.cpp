#include "app/studio/control/run_checkpoints.h"

#include "core/runs/run_directory.h"

#include <QDir>
#include <QFileInfo>

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
  // RunDirectory's finished checkpoints (a write in progress has a ".tmp" name), files only.
  QStringList names;
  for (const std::string& path : RunDirectory(run_dir.toStdString()).checkpoints()) {
    const QFileInfo file(QString::fromStdString(path));
    if (file.isFile()) names << file.fileName();
  }
  return names;
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
