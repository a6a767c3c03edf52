#pragma once
// File ▸ Export Generator…: which checkpoint (the one Explore shows, else one the user picks),
// where, and as what (the save dialog's filter: an ONNX model or a PyTorch state dict), then a
// GeneratorExportJob; the file written goes to the status bar, a failure to a message box.
#include "app/studio/control/generator_export_job.h"

#include <QObject>
#include <QString>

class QMainWindow;

namespace streetgan {
class LatentExplorer;
}

namespace streetgan::studio {

class GeneratorExporter : public QObject {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable; `window`: the dialogs' parent and its status bar.
  GeneratorExporter(QString program, QMainWindow* window);

  /// Exports the checkpoint `explorer` shows, or asks for one when it is null; asks for the file.
  void chooseAndExport(const LatentExplorer* explorer);
  /// Exports `checkpoint` to `out` in `format` (no dialogs).
  void exportTo(const QString& checkpoint, const QString& out, GeneratorExportJob::Format format);

signals:
  /// The export ended: ok with the file written, or not with why.
  void finished(bool ok, const QString& message);

private:
  QString program_;
  QMainWindow* window_;
  GeneratorExportJob* job_ = nullptr;
};

}  // namespace streetgan::studio
