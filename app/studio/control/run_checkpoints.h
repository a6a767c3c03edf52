#pragma once
// Finding runs and their checkpoints on disk, for the tabs that open a run's generator.
#include <QFileInfoList>
#include <QString>
#include <QStringList>

namespace streetgan::studio {

/// The finished checkpoint files of a run (names, oldest first).
QStringList checkpointFiles(const QString& run_dir);
/// The newest finished checkpoint of a run (a full path; empty when it has none).
QString latestCheckpoint(const QString& run_dir);
/// The run folders under `root` with at least one checkpoint, most recently changed first.
QFileInfoList runsWithCheckpoints(const QString& root);

}  // namespace streetgan::studio
