#pragma once
// NearestImagesDialog: what findNearestImages() found (app/studio/nearest_images.h), one row per
// sample: the sample, then its nearest training photographs at the same display size, each
// captioned "distance 4.21 · city/0001.jpg" (the path relative to the data folder; the full path
// in its tooltip). A line above the grid says what was searched (every training image, or a
// seeded draw of so many of a larger set). A failed search shows its plain error instead.
#include "app/studio/nearest_images.h"

#include <QDialog>
#include <QString>
#include <QStringList>
#include <QVector>

class QLabel;

namespace streetgan::studio {

class NearestImagesDialog : public QDialog {
  Q_OBJECT
public:
  explicit NearestImagesDialog(const NearestImagesResult& result, QWidget* parent = nullptr);
  ~NearestImagesDialog() override;

  /// The line above the grid, or the error.
  QString headerText() const;
  /// Samples shown (rows of the grid).
  int rowCount() const { return static_cast<int>(captions_.size()); }
  /// The captions of a row's training images, nearest first.
  QStringList captions(int row) const { return captions_.value(row); }

private:
  QLabel* header_ = nullptr;
  QVector<QStringList> captions_;
};

}  // namespace streetgan::studio
