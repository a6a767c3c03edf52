#include "widgets/augmentation_panel.h"

#include "core/data/augmented_variant_images.h"
#include "widgets/rgb_image.h"
#include "widgets/worker_pool.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QImageReader>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::widgets {

namespace {
constexpr int kVariants = 9;

// Sliders hold integers: each setting is slider value × its step.
constexpr double kShiftStep = 0.01, kCropStep = 0.1, kNoiseStep = 0.005, kRotateStep = 1.0, kZoomStep = 0.01;

QSlider* slider(int maximum, QWidget* parent) {
  auto* s = new QSlider(Qt::Horizontal, parent);
  s->setRange(0, maximum);
  return s;
}

QImage gridOf(const QVector<QImage>& tiles) {
  if (tiles.isEmpty()) return {};
  const int side = tiles.front().width(), pad = 2;
  QImage grid(3 * side + 4 * pad, 3 * side + 4 * pad, QImage::Format_RGB888);
  grid.fill(Qt::black);
  QPainter painter(&grid);
  for (int i = 0; i < tiles.size(); ++i) painter.drawImage(pad + (i % 3) * (side + pad), pad + (i / 3) * (side + pad), tiles[i]);
  return grid;
}
}  // namespace

AugmentationPanel::AugmentationPanel(QWidget* parent) : QWidget(parent) {
  shift_ = slider(50, this);
  crop_ = slider(80, this);
  crop_->setMinimum(10);
  noise_ = slider(60, this);
  rotate_ = slider(45, this);
  zoom_ = slider(50, this);
  flip_ = new QCheckBox("Random horizontal flip", this);
  size_ = new QComboBox(this);
  size_->addItems({"64", "128"});
  values_ = new QLabel(this);
  values_->setWordWrap(true);
  original_view_ = new QLabel(this);
  original_view_->setAlignment(Qt::AlignCenter);
  variants_view_ = new QLabel(this);
  variants_view_->setAlignment(Qt::AlignCenter);
  status_ = new QLabel("Select an image to see it as training sees it.", this);
  status_->setWordWrap(true);
  auto* use = new QPushButton("Use These Settings in the Train Tab", this);
  auto* form = new QFormLayout();
  form->addRow("Shift", shift_);
  form->addRow("Crop scale", crop_);
  form->addRow("Noise", noise_);
  form->addRow("Rotation", rotate_);
  form->addRow("Zoom", zoom_);
  form->addRow("", flip_);
  form->addRow("Image size", size_);
  form->addRow(values_);
  form->addRow(use);
  auto* images = new QHBoxLayout();
  images->addWidget(original_view_, 1);
  images->addWidget(variants_view_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(images, 1);
  layout->addWidget(status_);
  layout->addLayout(form);

  for (QSlider* s : {shift_, crop_, noise_, rotate_, zoom_}) connect(s, &QSlider::valueChanged, this, &AugmentationPanel::render);
  connect(flip_, &QCheckBox::toggled, this, &AugmentationPanel::render);
  connect(size_, &QComboBox::currentTextChanged, this, &AugmentationPanel::render);
  connect(use, &QPushButton::clicked, this, &AugmentationPanel::useSettings);
  connect(&watcher_, &QFutureWatcher<RenderedImages>::finished, this, [this] {
    if (std::exchange(again_, false)) return render();  // settings changed meanwhile: render those
    const RenderedImages result = watcher_.result();
    const QString error = QString::fromStdString(result.error());
    variants_ = result ? *result : QVector<QImage>();
    const QImage grid = gridOf(variants_);
    variants_view_->setPixmap(QPixmap::fromImage(grid.scaled(grid.size() * (imageSize() == 64 ? 2 : 1))));
    status_->setText(result ? "Left: the photograph. Right: nine variants, as training draws them." : error);
    emit rendered(error);
  });
  setSettings(AugmentConfig(), 64);
}

AugmentationPanel::~AugmentationPanel() { watcher_.waitForFinished(); }

void AugmentationPanel::setImage(const QString& path) {
  path_ = path;
  QImageReader reader(path);
  reader.setAutoTransform(true);
  const QSize size = reader.size();
  if (size.isValid()) reader.setScaledSize(size.scaled(320, 320, Qt::KeepAspectRatio));
  original_ = reader.read();
  original_view_->setPixmap(QPixmap::fromImage(original_));
  render();
}

void AugmentationPanel::setSettings(const AugmentConfig& augment, int img_size) {
  {
    const QSignalBlocker a(shift_), b(crop_), c(noise_), d(rotate_), e(zoom_), f(flip_), g(size_);
    shift_->setValue(static_cast<int>(std::lround(augment.shift / kShiftStep)));
    crop_->setValue(static_cast<int>(std::lround(augment.crop_scale / kCropStep)));
    noise_->setValue(static_cast<int>(std::lround(augment.noise_std / kNoiseStep)));
    rotate_->setValue(static_cast<int>(std::lround(augment.rotate_deg / kRotateStep)));
    zoom_->setValue(static_cast<int>(std::lround(augment.scale_jitter / kZoomStep)));
    flip_->setChecked(augment.flip);
    size_->setCurrentText(QString::number(img_size));
  }
  render();
}

AugmentConfig AugmentationPanel::settings() const {
  AugmentConfig augment;
  augment.shift = shift_->value() * kShiftStep;
  augment.crop_scale = crop_->value() * kCropStep;
  augment.noise_std = noise_->value() * kNoiseStep;
  augment.rotate_deg = rotate_->value() * kRotateStep;
  augment.scale_jitter = zoom_->value() * kZoomStep;
  augment.flip = flip_->isChecked();
  return augment;
}

int AugmentationPanel::imageSize() const { return size_->currentText().toInt(); }

void AugmentationPanel::useSettings() { emit settingsChosen(settings(), imageSize()); }

void AugmentationPanel::render() {
  const AugmentConfig augment = settings();
  values_->setText(QString("shift ±%1 of the width, crop %2 × the image size, noise σ %3, rotation ±%4°, zoom ±%5%6")
                       .arg(augment.shift).arg(augment.crop_scale).arg(augment.noise_std).arg(augment.rotate_deg)
                       .arg(augment.scale_jitter).arg(augment.flip ? ", flipped at random" : ""));
  if (path_.isEmpty()) return;
  if (watcher_.isRunning()) {
    again_ = true;
    return;
  }
  const std::string path = path_.toStdString();
  const int size = imageSize();
  watcher_.setFuture(QtConcurrent::run(studioWorkers(), [augment, size, path] {
    return toRenderedImages(augmentedVariantImages(augment, size, 3, true, path, kVariants, 0));
  }));
}

}  // namespace streetgan::widgets
