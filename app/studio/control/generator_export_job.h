#pragma once
// GeneratorExportJob: writes a checkpoint's generator for other tools with a `streetgan export`
// child process, as a PyTorch state dict (and its sidecar) or as an ONNX model
// (docs/interop.md), and ends with one finished() holding the file written or the program's
// one-line reason. Qt Core only.
#include "app/studio/control/child_process_job.h"

#include <QString>

namespace streetgan::studio {

class GeneratorExportJob : public ChildProcessJob {
  Q_OBJECT
public:
  /// What the file is: the program's --format names.
  enum class Format { PyTorch, Onnx };

  /// `program`: the `streetgan` executable.
  explicit GeneratorExportJob(QString program, QObject* parent = nullptr);
  ~GeneratorExportJob() override;

  /// The format a file name asks for: ONNX for a name ending in .onnx, else PyTorch.
  static Format formatOf(const QString& path);
  /// Starts writing the generator of `checkpoint` (a file or a run folder) to `out` in `format`,
  /// `generator` "ema", "raw" or "" (the checkpoint's default); or says why it cannot (the program
  /// does not start, or an export is already running).
  Status start(const QString& checkpoint, const QString& out, Format format, const QString& generator = {});

  // finished(ok, path_or_reason): ok with the file written, or not with why (naming the file).

private:
  Outcome outcome(int exit_code, int signal_number) override;

  QString out_;
};

}  // namespace streetgan::studio
