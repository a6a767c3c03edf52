#include "widgets/dataset_picker.h"

#include "widgets/worker_pool.h"

#include "core/data/crop_fit.h"
#include "core/data/image_dataset.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

#include <tuple>

namespace streetgan::widgets {

DatasetPicker::DatasetPicker(QWidget* parent) : QWidget(parent) {
  path_ = new QLineEdit(this);
  path_->setPlaceholderText("folder of images (plain tree or MSLS layout)");
  auto* browse = new QPushButton("Browse…", this);
  demo_ = new QPushButton("Use Demo Data", this);
  demo_->setToolTip("Procedural street scenes (MSLS layout), rendered once on this computer");
  result_ = new QLabel("No data set chosen.", this);
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(path_, 0, 0);
  layout->addWidget(browse, 0, 1);
  layout->addWidget(demo_, 1, 0, 1, 2);
  layout->addWidget(result_, 2, 0, 1, 2);

  pending_.setSingleShot(true);
  pending_.setInterval(300);
  connect(&pending_, &QTimer::timeout, this, &DatasetPicker::startCount);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, "Data set folder", path_->text());
    if (dir.isEmpty()) return;
    setPath(dir);
    emit pathChosen(dir);
  });
  connect(demo_, &QPushButton::clicked, this, &DatasetPicker::demoRequested);
  connect(path_, &QLineEdit::textEdited, this, &DatasetPicker::recount);
  connect(path_, &QLineEdit::editingFinished, this, [this] { emit pathChosen(path_->text()); });
  connect(&watcher_, &QFutureWatcher<DatasetCount>::finished, this, [this] {
    counting_ = false;
    if (again_) {
      again_ = false;
      startCount();
      return;
    }
    count_ = watcher_.result();
    result_->setText(count_.crop_warning.isEmpty() ? count_.text : count_.text + "\nWarning: " + count_.crop_warning);
    result_->setStyleSheet(count_.ok ? (count_.crop_warning.isEmpty() ? QString() : "color: #b9770e;") : "color: #c0392b;");
    emit counted(count_.ok);
  });
}

DatasetPicker::~DatasetPicker() { watcher_.waitForFinished(); }

QString DatasetPicker::path() const { return path_->text(); }

void DatasetPicker::setPath(const QString& path) {
  if (path_->text() != path) path_->setText(path);
  recount();
}

void DatasetPicker::setFilter(const DatasetFilter& filter) {
  // Compare what matters to the count; the form sends every edit of any key.
  auto key = [](const DatasetFilter& f) {
    return std::tie(f.cities, f.exclude_cities, f.msls_split, f.subset, f.drop_panoramas, f.time_of_day,
                    f.max_per_sequence, f.holdout_cities, f.holdout_fraction, f.holdout_seed);
  };
  if (key(filter) == key(filter_)) return;
  filter_ = filter;
  recount();
}

void DatasetPicker::setCrop(const DatasetCrop& crop) {
  if (crop == crop_) return;
  crop_ = crop;
  recount();
}

void DatasetPicker::recount() {
  if (path_->text().trimmed().isEmpty()) {
    pending_.stop();
    count_ = DatasetCount{false, "No data set chosen.", 0, 0, {}};
    result_->setText(count_.text);
    result_->setStyleSheet(QString());
    return;
  }
  result_->setText("Counting the images …");
  result_->setStyleSheet(QString());
  pending_.start();
}

void DatasetPicker::startCount() {
  if (counting_) {
    again_ = true;
    return;
  }
  counting_ = true;
  watcher_.setFuture(QtConcurrent::run(studioWorkers(), &DatasetPicker::count, path_->text().trimmed(), filter_, crop_));
}

DatasetCount DatasetPicker::count(const QString& root, const DatasetFilter& filter, const DatasetCrop& crop) {
  const QFileInfo info(root);
  if (!info.exists()) return {false, root + " does not exist.", 0, 0, {}};
  if (!info.isDir()) return {false, root + " is not a folder.", 0, 0, {}};
  auto dataset = ImageDataset::open(root.toStdString(), filter, DatasetPart::Train);
  if (!dataset) return {false, QString::fromStdString(dataset.error()), 0, 0, {}};
  const QLocale locale;
  QStringList steps;
  for (const FilterStep& step : dataset->filterSteps())
    steps << QString("%1 %2").arg(QString::fromStdString(step.name), locale.toString(qint64(step.remaining)));
  DatasetCount result;
  result.ok = true;
  result.images = static_cast<qint64>(dataset->size());
  result.held_out = dataset->otherPartSize();
  result.text = QString("%1 layout: %2 images to train on").arg(layoutName(dataset->layout()), locale.toString(result.images));
  if (result.held_out > 0) result.text += QString(", %1 held out").arg(locale.toString(result.held_out));
  if (steps.size() > 1) result.text += " (" + steps.join(" → ") + ")";
  result.text += ".";
  const CropFit fit = measureCropFit(*dataset, crop.crop_scale, crop.img_size);
  result.crop_warning = QString::fromStdString(cropFitWarning(fit, crop.crop_scale, crop.img_size));
  return result;
}

}  // namespace streetgan::widgets
