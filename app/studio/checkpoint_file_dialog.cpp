#include "app/studio/checkpoint_file_dialog.h"

#include "core/runs/run_directory.h"

#include <QFileInfo>

namespace streetgan::studio {

CheckpointFileDialog::CheckpointFileDialog(QWidget* parent, const QString& folder)
    : QFileDialog(parent, "Open Checkpoint", folder) {
  // Qt's own dialog on every platform: a native one cannot be told to open a folder as a whole.
  setOption(QFileDialog::DontUseNativeDialog);
  // AnyFile: a typed RUN@STEP names no file that exists.
  setFileMode(QFileDialog::AnyFile);
  setAcceptMode(QFileDialog::AcceptOpen);
  setNameFilters({"Checkpoints and runs (*.pt)", "All files (*)"});
  setLabelText(QFileDialog::FileName, "Checkpoint:");
  setToolTip("A checkpoint (.pt), a run folder (its newest checkpoint), or a run folder followed by @STEP "
             "(its newest checkpoint at or before STEP) or @latest");
}

void CheckpointFileDialog::accept() {
  const QStringList files = selectedFiles();
  const QString path = files.isEmpty() ? QString() : files.front();
  if (path.isEmpty()) return;
  if (QFileInfo(path).isDir() && !RunDirectory::isRun(path.toStdString())) {
    QFileDialog::accept();  // any other folder: go into it, as the dialog always does
    return;
  }
  chosen_ = path;
  QDialog::accept();  // a file, a run folder or RUN@STEP: chosen as it is
}

}  // namespace streetgan::studio
