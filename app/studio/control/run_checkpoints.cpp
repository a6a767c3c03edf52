#include "app/studio/control/run_checkpoints.h"

#include <QDir>

namespace streetgan::studio {

QStringList checkpointFiles(const QString& run_dir) {
  // Only finished checkpoints end in ".pt": a write in progress has a ".tmp" name.
  return QDir(run_dir + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name);
}

QString latestCheckpoint(const QString& run_dir) {
  const QStringList files = checkpointFiles(run_dir);
  return files.isEmpty() ? QString() : QDir(run_dir + "/checkpoints").filePath(files.last());
}

QFileInfoList runsWithCheckpoints(const QString& root) {
  QFileInfoList runs;
  for (const QFileInfo& run : QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time))
    if (!checkpointFiles(run.absoluteFilePath()).isEmpty()) runs.append(run);
  return runs;
}

}  // namespace streetgan::studio
