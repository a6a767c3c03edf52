#include "app/studio/control/generator_export_job.h"

#include <QFileInfo>

namespace streetgan::studio {

GeneratorExportJob::GeneratorExportJob(QString program, QObject* parent) : ChildProcessJob(std::move(program), parent) {}

GeneratorExportJob::~GeneratorExportJob() = default;

GeneratorExportJob::Format GeneratorExportJob::formatOf(const QString& path) {
  return path.endsWith(".onnx", Qt::CaseInsensitive) ? Format::Onnx : Format::PyTorch;
}

Status GeneratorExportJob::start(const QString& checkpoint, const QString& out, Format format, const QString& generator) {
  if (isRunning()) return failure("A generator is already being exported.");
  out_ = out;
  QStringList arguments{"export", "--checkpoint", checkpoint, "--out", out, "--format",
                        format == Format::Onnx ? "onnx" : "pytorch"};
  if (!generator.isEmpty()) arguments << "--generator" << generator;
  return startProcess(arguments);
}

ChildProcessJob::Outcome GeneratorExportJob::outcome(int exit_code, int) {
  if (exit_code == 0 && QFileInfo(out_).isFile()) return {true, out_};
  return {false, failureReason(exit_code)};
}

}  // namespace streetgan::studio
