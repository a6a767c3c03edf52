#pragma once
// AugmentationPanel: one photograph beside a 3 × 3 grid of the variants training would make of it
// (core's SamplePipeline, rendered on a worker), with sliders for the augmentation settings —
// shift, crop scale, noise, flip, rotation, zoom — that redraw the variants as they move. "Use
// These Settings" hands them to the Train tab's config.
#include "core/config/train_config.h"
#include "widgets/rendered_images.h"

#include <QFutureWatcher>
#include <QImage>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace streetgan::widgets {

class AugmentationPanel : public QWidget {
  Q_OBJECT
public:
  explicit AugmentationPanel(QWidget* parent = nullptr);
  ~AugmentationPanel() override;

  void setImage(const QString& path);
  QString imagePath() const { return path_; }
  void setSettings(const AugmentConfig& augment, int img_size);
  AugmentConfig settings() const;
  int imageSize() const;
  bool isRendering() const { return watcher_.isRunning(); }
  QImage original() const { return original_; }
  QVector<QImage> variants() const { return variants_; }
  /// Clicks "Use These Settings".
  void useSettings();

signals:
  void rendered(const QString& error);
  void settingsChosen(const streetgan::AugmentConfig& augment, int img_size);

private:
  void render();

  QString path_;
  QSlider* shift_ = nullptr;
  QSlider* crop_ = nullptr;
  QSlider* noise_ = nullptr;
  QSlider* rotate_ = nullptr;
  QSlider* zoom_ = nullptr;
  QCheckBox* flip_ = nullptr;
  QComboBox* size_ = nullptr;
  QLabel* values_ = nullptr;
  QLabel* original_view_ = nullptr;
  QLabel* variants_view_ = nullptr;
  QLabel* status_ = nullptr;
  QImage original_;
  QVector<QImage> variants_;
  QFutureWatcher<RenderedImages> watcher_;
  bool again_ = false;
};

}  // namespace streetgan::widgets
