#pragma once
// DatasetPicker: chooses the data set folder of a run — typed, browsed for, or the demo street
// scenes — and says at once what the run would train on: the layout, the images left after the
// data-pipeline filters (each filter's count), and the held-out part; or, in red beside the
// field, why the folder cannot be used (missing, empty, a filter that matches nothing). The
// folder is listed off the GUI thread, again whenever the folder or the filters change.
#include "core/config/data_config.h"

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;

namespace streetgan::widgets {

/// What listing a data folder found (or why it could not).
struct DatasetCount {
  bool ok = false;
  QString text;    ///< one line to show: the counts, or the error
  qint64 images = 0;
  qint64 held_out = 0;
  QString crop_warning;  ///< most images are smaller than the training crop (core/data/crop_fit.h); empty if not
};

/// The training crop the count checks the images against: augment.crop_scale × img_size.
struct DatasetCrop {
  double crop_scale = 4;
  int img_size = 64;
  bool operator==(const DatasetCrop& other) const {
    return crop_scale == other.crop_scale && img_size == other.img_size;
  }
};

class DatasetPicker : public QWidget {
  Q_OBJECT
public:
  explicit DatasetPicker(QWidget* parent = nullptr);
  ~DatasetPicker() override;

  QString path() const;
  void setPath(const QString& path);
  /// The filters to count with (the config's data keys); recounts when they change.
  void setFilter(const DatasetFilter& filter);
  /// The crop to check the images against; recounts when it changes.
  void setCrop(const DatasetCrop& crop);
  bool isCounting() const { return counting_ || pending_.isActive(); }
  /// The last count (valid once counted() was emitted).
  const DatasetCount& lastCount() const { return count_; }
  QPushButton& demoButton() { return *demo_; }

  /// Lists `root` with `filter` and checks its images against `crop` (blocking; the picker runs it
  /// on a worker thread).
  static DatasetCount count(const QString& root, const DatasetFilter& filter, const DatasetCrop& crop = {});

signals:
  /// The user chose another folder.
  void pathChosen(const QString& path);
  void demoRequested();
  /// A count finished for the current folder and filters.
  void counted(bool ok);

private:
  void recount();
  void startCount();

  QLineEdit* path_ = nullptr;
  QPushButton* demo_ = nullptr;
  QLabel* result_ = nullptr;
  DatasetFilter filter_;
  DatasetCrop crop_;
  DatasetCount count_;
  QTimer pending_;  // coalesces typing and filter edits into one listing
  QFutureWatcher<DatasetCount> watcher_;
  bool counting_ = false;
  bool again_ = false;  // the folder or filters changed while counting
};

}  // namespace streetgan::widgets
