#pragma once
// ProjectionDialog: "Find in Latent Space…" for one photograph (docs/explore.md). The photograph
// as the model sees it (its training crop, at its size), the reconstruction improving live while
// LatentExplorer::projectPhoto runs on a worker (its own copy of the generator, opened from the
// same checkpoint and device, so the Explore page stays live), the difference, and the final
// error and BatchNorm mode. Cancel stops the worker; "Add as Keyframe" hands the latent to the
// walk (keyframeRequested). Closing the dialog cancels a running projection and waits for it.
#include "core/latent/latent_explorer.h"

#include <QDialog>
#include <QFutureWatcher>
#include <QImage>
#include <QMutex>
#include <QTimer>

#include <atomic>
#include <memory>
#include <optional>

class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace streetgan::studio {

class ProjectionDialog : public QDialog {
  Q_OBJECT
public:
  /// `checkpoint` and `device` open the worker's generator; `batch_statistics` is the Explore
  /// tab's BatchNorm mode, used for the projection and said in the result.
  ProjectionDialog(QString photo, QString checkpoint, QString device, streetgan::GeneratorChoice generator,
                   bool batch_statistics, QWidget* parent = nullptr);
  ~ProjectionDialog() override;

  void setSteps(int steps);
  void setRestarts(int restarts);
  /// Starts the projection on a worker (nothing when one runs).
  void start();
  void cancel();
  bool isRunning() const { return running_; }
  /// The finished projection (none before, or after a failure or Cancel).
  const std::optional<PhotoProjection>& result() const { return result_; }
  QString statusText() const;
  QImage photoImage() const { return photo_image_; }
  QImage reconstructionImage() const { return reconstruction_image_; }
  QImage differenceImage() const { return difference_image_; }

signals:
  /// "Add as Keyframe": the projected latent and its image.
  void keyframeRequested(const streetgan::Latent& latent, const QImage& image);

protected:
  void reject() override;

private:
  void pollProgress();
  void finished();
  void showImage(QLabel* label, const QImage& image);
  void setStatus(const QString& text, bool error = false);

  QString photo_, checkpoint_, device_;
  streetgan::GeneratorChoice generator_;
  bool batch_statistics_;
  QLabel *photo_view_ = nullptr, *reconstruction_view_ = nullptr, *difference_view_ = nullptr;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QSpinBox *steps_ = nullptr, *restarts_ = nullptr;
  QPushButton *start_ = nullptr, *cancel_ = nullptr, *add_ = nullptr;
  QImage photo_image_, reconstruction_image_, difference_image_;
  std::optional<PhotoProjection> result_;
  bool running_ = false;
  std::shared_ptr<std::atomic<bool>> stop_;
  // The worker's latest update, read by the GUI's timer.
  struct Latest {
    QMutex mutex;
    std::optional<ProjectionUpdate> update;
    RgbImage photo;
  };
  std::shared_ptr<Latest> latest_;
  QFutureWatcher<Result<PhotoProjection>> watcher_;  // what the worker leaves: the projection, or why not
  QTimer poll_;
};

}  // namespace streetgan::studio
