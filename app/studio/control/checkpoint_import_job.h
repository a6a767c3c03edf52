#pragma once
// CheckpointImportJob: imports a checkpoint of the original PyTorch tool into a new run directory
// with a `streetgan import` child process (docs/interop.md), and ends with one finished() holding
// the run directory or the program's one-line reason. The run is named after the file, with a
// number added when that name is taken. Qt Core only.
#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

namespace streetgan::studio {

class ChildProcess;

class CheckpointImportJob : public QObject {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable.
  explicit CheckpointImportJob(QString program, QObject* parent = nullptr);
  ~CheckpointImportJob() override;

  /// A run folder under `runs_root` for `checkpoint` that does not exist yet:
  /// "<file name>-imported", then "-imported-2", "-imported-3", ….
  static QString runDirFor(const QString& runs_root, const QString& checkpoint);
  /// Starts importing `checkpoint` into `run_dir`; false with the reason in `error` when the
  /// program cannot start or an import is already running.
  bool start(const QString& checkpoint, const QString& run_dir, QString* error);
  bool isRunning() const { return process_ != nullptr; }

signals:
  /// Ended: ok with the run directory, or not with why (naming the file).
  void finished(bool ok, const QString& run_dir_or_reason);

private:
  QString program_, run_dir_;
  std::unique_ptr<ChildProcess> process_;
  QByteArray stderr_;
};

}  // namespace streetgan::studio
