#include "app/studio/generator_exporter.h"

#include "app/studio/control/generator_export_job.h"
#include "core/latent/latent_explorer.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>

namespace streetgan::studio {

namespace {

const char kOnnxFilter[] = "ONNX model (*.onnx)";
const char kPyTorchFilter[] = "PyTorch state dict (*.pt)";

}  // namespace

GeneratorExporter::GeneratorExporter(QString program, QMainWindow* window)
    : QObject(window), program_(std::move(program)), window_(window) {}

void GeneratorExporter::chooseAndExport(const LatentExplorer* explorer) {
  QString from = explorer ? QString::fromStdString(explorer->checkpointPath()) : QString();
  if (from.isEmpty())
    from = QFileDialog::getOpenFileName(window_, "Export the Generator of a Checkpoint", QString(),
                                        "StreetGAN checkpoints (*.pt);;All files (*)");
  if (from.isEmpty()) return;
  QString filter = kOnnxFilter;
  const QString suggested = QFileInfo(from).absoluteDir().filePath(QFileInfo(from).completeBaseName() + "-G.onnx");
  QString out = QFileDialog::getSaveFileName(window_, "Export Generator", suggested,
                                             QString(kOnnxFilter) + ";;" + kPyTorchFilter, &filter);
  if (out.isEmpty()) return;
  // The name's own extension decides, as on the command line; a name without one takes the filter's.
  if (QFileInfo(out).suffix().isEmpty()) out += filter == kOnnxFilter ? ".onnx" : ".pt";
  const bool known = out.endsWith(".onnx", Qt::CaseInsensitive) || out.endsWith(".pt", Qt::CaseInsensitive);
  exportTo(from, out, known ? GeneratorExportJob::formatOf(out)
                            : filter == kOnnxFilter ? GeneratorExportJob::Format::Onnx : GeneratorExportJob::Format::PyTorch);
}

void GeneratorExporter::exportTo(const QString& checkpoint, const QString& out, GeneratorExportJob::Format format) {
  if (!job_) {
    job_ = new GeneratorExportJob(program_, this);
    connect(job_, &GeneratorExportJob::finished, this, [this](bool ok, const QString& message) {
      if (ok) {
        window_->statusBar()->showMessage("Wrote the generator to " + message, 15000);
      } else {
        window_->statusBar()->clearMessage();
        auto* box = new QMessageBox(QMessageBox::Warning, "Export Generator", "The generator was not exported.",
                                    QMessageBox::Ok, window_);
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
      }
      emit finished(ok, message);
    });
  }
  if (Status started = job_->start(checkpoint, out, format); !started) {
    window_->statusBar()->showMessage(errorText(started), 10000);
    emit finished(false, errorText(started));
    return;
  }
  window_->statusBar()->showMessage("Exporting the generator to " + QFileInfo(out).fileName() + " …");
}

}  // namespace streetgan::studio
