#include "app/studio/projection_dialog.h"

#include "app/studio/control/status_text.h"
#include "widgets/rgb_image.h"
#include "widgets/worker_pool.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QMutexLocker>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

namespace streetgan::studio {
namespace {

constexpr int kView = 256;  // pixels each image is shown at (nearest-neighbour, so pixels stay pixels)

// |a − b| per channel, ×4 so that small errors show; black where they agree.
QImage difference(const QImage& a, const QImage& b) {
  const QImage x = a.convertToFormat(QImage::Format_RGB888), y = b.convertToFormat(QImage::Format_RGB888);
  if (x.size() != y.size()) return {};
  QImage out(x.size(), QImage::Format_RGB888);
  for (int row = 0; row < x.height(); ++row) {
    const uchar *p = x.constScanLine(row), *q = y.constScanLine(row);
    uchar* o = out.scanLine(row);
    for (int i = 0; i < x.width() * 3; ++i) o[i] = static_cast<uchar>(std::min(255, 4 * std::abs(int(p[i]) - int(q[i]))));
  }
  return out;
}

QLabel* imageView(const QString& tooltip, QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setFixedSize(kView, kView);
  label->setAlignment(Qt::AlignCenter);
  label->setStyleSheet("background: #202020; color: #a0a0a0;");
  label->setToolTip(tooltip);
  return label;
}

}  // namespace

ProjectionDialog::ProjectionDialog(QString photo, QString checkpoint, QString device, streetgan::GeneratorChoice generator,
                                   bool batch_statistics, QWidget* parent)
    : QDialog(parent), photo_(std::move(photo)), checkpoint_(std::move(checkpoint)), device_(std::move(device)),
      generator_(generator), batch_statistics_(batch_statistics), latest_(std::make_shared<Latest>()) {
  setWindowTitle("Find in Latent Space — " + QFileInfo(photo_).fileName());
  photo_view_ = imageView("The photograph as the model sees it: its training crop, at its size", this);
  reconstruction_view_ = imageView("The generated image of the best latent so far", this);
  difference_view_ = imageView("|photograph − reconstruction|, four times brighter", this);
  auto* images = new QGridLayout();
  images->addWidget(new QLabel("Photograph", this), 0, 0);
  images->addWidget(new QLabel("Reconstruction", this), 0, 1);
  images->addWidget(new QLabel("Difference (×4)", this), 0, 2);
  images->addWidget(photo_view_, 1, 0);
  images->addWidget(reconstruction_view_, 1, 1);
  images->addWidget(difference_view_, 1, 2);

  steps_ = new QSpinBox(this);
  steps_->setRange(10, 100000);
  steps_->setValue(500);
  steps_->setToolTip("Adam steps from each start");
  restarts_ = new QSpinBox(this);
  restarts_->setRange(1, 256);
  restarts_->setValue(8);
  restarts_->setToolTip("Random starts, optimised together; the best is kept");
  auto* form = new QFormLayout();
  form->addRow("Steps", steps_);
  form->addRow("Random starts", restarts_);
  form->addRow("BatchNorm", new QLabel(batch_statistics_ ? "this batch's statistics (each start alone)" : "running statistics",
                                       this));

  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  progress_->setValue(0);
  status_ = new QLabel("Press Start to find the latent nearest this photograph.", this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  start_ = new QPushButton("Start", this);
  cancel_ = new QPushButton("Cancel", this);
  cancel_->setEnabled(false);
  add_ = new QPushButton("Add as Keyframe", this);
  add_->setEnabled(false);
  add_->setToolTip("Add the latent to the walk's keyframes: a walk from one photograph to another");
  auto* close = new QPushButton("Close", this);
  auto* buttons = new QHBoxLayout();
  buttons->addWidget(start_);
  buttons->addWidget(cancel_);
  buttons->addStretch(1);
  buttons->addWidget(add_);
  buttons->addWidget(close);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(images);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addLayout(buttons);

  connect(start_, &QPushButton::clicked, this, &ProjectionDialog::start);
  connect(cancel_, &QPushButton::clicked, this, &ProjectionDialog::cancel);
  connect(close, &QPushButton::clicked, this, &ProjectionDialog::reject);
  connect(add_, &QPushButton::clicked, this, [this] {
    if (result_) emit keyframeRequested(result_->latent, reconstruction_image_);
  });
  connect(&watcher_, &QFutureWatcher<Result<PhotoProjection>>::finished, this, &ProjectionDialog::finished);
  poll_.setInterval(100);
  connect(&poll_, &QTimer::timeout, this, &ProjectionDialog::pollProgress);
}

ProjectionDialog::~ProjectionDialog() {
  cancel();
  watcher_.waitForFinished();
}

void ProjectionDialog::setSteps(int steps) { steps_->setValue(steps); }
void ProjectionDialog::setRestarts(int restarts) { restarts_->setValue(restarts); }

void ProjectionDialog::start() {
  if (running_) return;
  running_ = true;
  result_.reset();
  start_->setEnabled(false);
  cancel_->setEnabled(true);
  add_->setEnabled(false);
  progress_->setValue(0);
  setStatus("Opening the generator …");
  stop_ = std::make_shared<std::atomic<bool>>(false);
  {
    QMutexLocker lock(&latest_->mutex);
    latest_->update.reset();
    latest_->photo = {};
  }
  ProjectionSettings settings;
  settings.steps = steps_->value();
  settings.restarts = restarts_->value();
  const auto stop = stop_;
  const auto latest = latest_;
  const std::string photo = photo_.toStdString(), checkpoint = checkpoint_.toStdString(), device = device_.toStdString();
  const bool batch_statistics = batch_statistics_;
  const streetgan::GeneratorChoice generator = generator_;
  watcher_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [=] {
    try {
      // A generator of its own: the Explore page keeps rendering meanwhile.
      auto explorer = LatentExplorer::open(checkpoint, device, generator);
      if (!explorer) return Result<PhotoProjection>(makeError(explorer.error(), explorer.errorKind()));
      (*explorer)->setBatchStatistics(batch_statistics);
      auto seen = (*explorer)->photoAtModelSize(photo);
      if (!seen) return Result<PhotoProjection>(makeError(seen.error(), seen.errorKind()));
      {
        QMutexLocker lock(&latest->mutex);
        latest->photo = *seen;
      }
      return (*explorer)->projectPhoto(
          photo, settings,
          [&](const ProjectionUpdate& update) {
            QMutexLocker lock(&latest->mutex);
            latest->update = update;
            return !stop->load();
          },
          [stop] { return stop->load(); });
    } catch (const std::exception& e) {  // the worker's boundary
      return Result<PhotoProjection>(makeError(std::string("projection: ") + e.what(), ErrorKind::Machine));
    }
  }));
  poll_.start();
}

void ProjectionDialog::cancel() {
  if (stop_) stop_->store(true);
}

void ProjectionDialog::reject() {
  cancel();
  QDialog::reject();
}

void ProjectionDialog::pollProgress() {
  std::optional<ProjectionUpdate> update;
  RgbImage photo;
  {
    QMutexLocker lock(&latest_->mutex);
    update = latest_->update;
    photo = latest_->photo;
  }
  if (photo_image_.isNull() && !photo.pixels.empty()) {
    photo_image_ = widgets::toQImage(photo);
    showImage(photo_view_, photo_image_);
  }
  if (!update) return;
  progress_->setValue(update->steps > 0 ? 100 * update->step / update->steps : 0);
  reconstruction_image_ = widgets::toQImage(update->reconstruction);
  showImage(reconstruction_view_, reconstruction_image_);
  if (!photo_image_.isNull()) {
    difference_image_ = difference(photo_image_, reconstruction_image_);
    showImage(difference_view_, difference_image_);
  }
  setStatus(QString("Step %1 of %2: loss %3").arg(update->step).arg(update->steps).arg(update->loss, 0, 'f', 4));
}

void ProjectionDialog::finished() {
  poll_.stop();
  pollProgress();
  running_ = false;
  start_->setEnabled(true);
  cancel_->setEnabled(false);
  Result<PhotoProjection> outcome = watcher_.result();
  if (!outcome && outcome.error() == "projection: cancelled")  // LatentExplorer passes a cancel on as it is
    return setStatus("Cancelled; nothing was kept.");
  if (!outcome) return setStatus(errorText(outcome), true);
  result_ = std::move(*outcome);
  photo_image_ = widgets::toQImage(result_->photo);
  reconstruction_image_ = widgets::toQImage(result_->reconstruction);
  difference_image_ = difference(photo_image_, reconstruction_image_);
  showImage(photo_view_, photo_image_);
  showImage(reconstruction_view_, reconstruction_image_);
  showImage(difference_view_, difference_image_);
  progress_->setValue(100);
  add_->setEnabled(true);
  setStatus(QString("Found: loss %1, pixel RMSE %2 of 255, MS-SSIM %3 (start %4 of %5, %6 steps; BatchNorm: %7 statistics).")
                .arg(result_->loss, 0, 'f', 4)
                .arg(result_->pixel_rmse, 0, 'f', 2)
                .arg(result_->ms_ssim, 0, 'f', 4)
                .arg(result_->restart + 1)
                .arg(restarts_->value())
                .arg(result_->steps)
                .arg(result_->batch_statistics ? "batch" : "running"));
}

void ProjectionDialog::showImage(QLabel* label, const QImage& image) {
  if (image.isNull()) return;
  label->setPixmap(QPixmap::fromImage(image.scaled(kView, kView, Qt::KeepAspectRatio, Qt::FastTransformation)));
}

QString ProjectionDialog::statusText() const { return status_->text(); }

void ProjectionDialog::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? "color: #c0392b;" : QString());
}

}  // namespace streetgan::studio
