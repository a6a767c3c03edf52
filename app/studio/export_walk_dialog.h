#pragma once
// ExportWalkDialog: exports the walk being previewed — GIF, MP4, WebM or a folder of PNG frames,
// its size (long side), quality and upscaling filter — through core's encoder on a worker
// thread, with a progress dialog (frames rendered and encoded) and Cancel, which leaves nothing
// behind. On success it offers to reveal the file.
#include "core/latent/latent_explorer.h"

#include <QDialog>
#include <QFutureWatcher>

#include <atomic>
#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressDialog;
class QSpinBox;

namespace streetgan::studio {

class ExportWalkDialog : public QDialog {
  Q_OBJECT
public:
  ExportWalkDialog(std::shared_ptr<LatentExplorer> explorer, WalkPlan plan, double fps, QWidget* parent = nullptr);
  ~ExportWalkDialog() override;

  void setPath(const QString& path);
  /// "gif", "mp4", "webm" or "png".
  void setFormat(const QString& format);
  void setLongSide(int pixels);
  /// Whether success asks to reveal the file (on by default; tests turn it off).
  void setOfferReveal(bool offer) { offer_reveal_ = offer; }
  /// Runs the export (progress dialog, cancel) and returns once it has ended; true on success.
  bool runExport();
  /// Cancels a running export (as the progress dialog's Cancel does).
  void cancel() { cancelled_ = true; }
  QString resultMessage() const { return message_; }
  QProgressDialog* progressDialog() const { return progress_; }

private:
  VideoExportOptions options() const;

  std::shared_ptr<LatentExplorer> explorer_;
  WalkPlan plan_;
  QLineEdit* path_ = nullptr;
  QComboBox* format_ = nullptr;
  QSpinBox* long_side_ = nullptr;
  QSpinBox* quality_ = nullptr;
  QComboBox* filter_ = nullptr;
  QDoubleSpinBox* fps_ = nullptr;
  QLabel* error_ = nullptr;
  QProgressDialog* progress_ = nullptr;
  std::atomic<bool> cancelled_{false};
  std::atomic<qint64> rendered_{0}, encoded_{0}, total_{0};
  bool offer_reveal_ = true;
  QString message_;
};

}  // namespace streetgan::studio
