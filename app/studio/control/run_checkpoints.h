#pragma once
// A run folder in Qt's types: its paths (RunDirectory, core/runs/run_directory.h, owns the names)
// and its checkpoints on disk, for the tabs and controllers that read runs.
#include <QFileInfoList>
#include <QString>
#include <QStringList>

namespace streetgan::studio {

/// RunDirectory's paths of the run in `run_dir`.
QString runEventsPath(const QString& run_dir);
QString runConfigPath(const QString& run_dir);
QString runCheckpointsDir(const QString& run_dir);
QString runEvaluationsDir(const QString& run_dir);

/// The finished checkpoint files of a run (names, oldest first).
QStringList checkpointFiles(const QString& run_dir);
/// The newest finished checkpoint of a run (a full path; empty when it has none).
QString latestCheckpoint(const QString& run_dir);
/// The run folders under `root` with at least one checkpoint, most recently changed first.
QFileInfoList runsWithCheckpoints(const QString& root);

}  // namespace streetgan::studio
