#pragma once
// CheckpointImportJob: imports a checkpoint of the original PyTorch tool into a new run directory
// with a `streetgan import --progress` child process (docs/interop.md), and ends with one
// finished() holding the run directory or the program's one-line reason. The run is named after
// the file, with a number added when that name is taken. Qt Core only.
#include "app/studio/control/child_process_job.h"

#include <QString>

namespace streetgan::studio {

class CheckpointImportJob : public ChildProcessJob {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit CheckpointImportJob(QString program, QObject* parent = nullptr);
  ~CheckpointImportJob() override;

  /// A run folder under `runs_root` for `checkpoint` that does not exist yet:
  /// "<file name>-imported", then "-imported-2", "-imported-3", ….
  static QString runDirFor(const QString& runs_root, const QString& checkpoint);
  /// Starts importing `checkpoint` into `run_dir`, or says why it cannot
  /// (the program does not start, or an import is already running).
  Status start(const QString& checkpoint, const QString& run_dir);

  // finished(ok, run_dir_or_reason): ok with the run directory, or not with why (naming the file).

private:
  Outcome outcome(int exit_code, int signal_number) override;

  QString run_dir_;
};

}  // namespace streetgan::studio
