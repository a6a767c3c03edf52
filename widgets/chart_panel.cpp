#include "widgets/chart_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QSaveFile>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace streetgan::widgets {

ChartPanel::ChartPanel(int columns, QWidget* parent) : QWidget(parent), columns_(std::max(1, columns)) {
  smoothing_ = new QSlider(Qt::Horizontal, this);
  smoothing_->setRange(0, 999);
  smoothing_->setValue(600);
  smoothing_->setMaximumWidth(160);
  smoothing_->setToolTip("Exponential smoothing weight of every chart's line (left: raw points; the faint line "
                         "is always the raw points)");
  log_box_ = new QCheckBox("Log scale", this);
  log_box_->setToolTip("Logarithmic y axis (values at or below zero are left out)");
  x_box_ = new QComboBox(this);
  x_box_->addItems({"Images seen", "Epochs", "Time"});
  x_box_->setToolTip("What the x axis counts: images trained on, epochs, or seconds since the run started");
  readout_ = new QLabel(this);
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  readout_->setMinimumWidth(40);
  readout_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

  toolbar_ = new QHBoxLayout();
  toolbar_->setContentsMargins(0, 0, 0, 0);
  toolbar_->addWidget(new QLabel("Smoothing", this));
  toolbar_->addWidget(smoothing_);
  toolbar_->addWidget(log_box_);
  toolbar_->addWidget(new QLabel("X axis", this));
  toolbar_->addWidget(x_box_);
  toolbar_->addSpacing(12);
  toolbar_->addWidget(readout_, 1);

  grid_ = new QGridLayout();
  grid_->setContentsMargins(0, 0, 0, 0);
  grid_->setSpacing(4);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(toolbar_);
  layout->addLayout(grid_, 1);

  connect(smoothing_, &QSlider::valueChanged, this, [this](int value) { setSmoothing(value / 1000.0); });
  connect(log_box_, &QCheckBox::toggled, this, &ChartPanel::setLogY);
  connect(x_box_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setXAxis(static_cast<TrainingChart::XAxis>(index)); });
  turns_.setInterval(60);
  connect(&turns_, &QTimer::timeout, this, [this] {
    if (charts_.isEmpty()) return;
    charts_[next_chart_++ % charts_.size()]->redrawIfChanged();
  });
  turns_.start();
}

ChartPanel::~ChartPanel() = default;

void ChartPanel::addCell(QWidget* widget) {
  const int index = static_cast<int>(cells_.size());
  widget->setParent(this);
  grid_->addWidget(widget, index / columns_, index % columns_);
  cells_ << widget;
  if (maximized_) widget->hide();
}

void ChartPanel::addChart(TrainingChart* chart, bool follows_smoothing) {
  charts_ << chart;
  follows_smoothing_ << follows_smoothing;
  chart->setRedrawInterval(0);  // the panel's turns redraw it
  chart->setLogY(logY());
  chart->setXAxis(xAxis());
  if (follows_smoothing) chart->setSmoothing(smoothing());
  connect(chart, &TrainingChart::readoutChanged, readout_, &QLabel::setText);
  connect(chart, &TrainingChart::maximizeRequested, this, [this, chart] { maximize(maximized_ ? nullptr : chart); });
  connect(chart, &TrainingChart::exportImageRequested, this, [this, chart] { saveChartImage(chart); });
  connect(chart, &TrainingChart::exportCsvRequested, this, [this, chart] { saveChartCsv(chart); });
  addCell(chart);
}

void ChartPanel::setSmoothing(double weight) {
  const int position = static_cast<int>(std::lround(std::clamp(weight, 0.0, 0.999) * 1000));
  if (smoothing_->value() != position) smoothing_->setValue(position);  // comes back here
  for (int i = 0; i < charts_.size(); ++i)
    if (follows_smoothing_[i]) charts_[i]->setSmoothing(weight);
}

double ChartPanel::smoothing() const { return smoothing_->value() / 1000.0; }

void ChartPanel::setLogY(bool log_y) {
  if (log_box_->isChecked() != log_y) log_box_->setChecked(log_y);
  for (TrainingChart* chart : charts_) chart->setLogY(log_y);
}

bool ChartPanel::logY() const { return log_box_->isChecked(); }

void ChartPanel::setXAxis(TrainingChart::XAxis axis) {
  const int index = static_cast<int>(axis);
  if (x_box_->currentIndex() != index) x_box_->setCurrentIndex(index);
  for (TrainingChart* chart : charts_) chart->setXAxis(axis);
}

TrainingChart::XAxis ChartPanel::xAxis() const { return static_cast<TrainingChart::XAxis>(x_box_->currentIndex()); }

QString ChartPanel::readoutText() const { return readout_->text(); }

void ChartPanel::maximize(QWidget* cell) {
  maximized_ = cells_.contains(cell) ? cell : nullptr;
  for (QWidget* other : cells_) other->setVisible(!maximized_ || other == maximized_);
}

void ChartPanel::redrawAll() {
  for (TrainingChart* chart : charts_) chart->redraw();
}

void ChartPanel::saveChartImage(TrainingChart* chart) {
  const QString path = QFileDialog::getSaveFileName(this, "Save Chart Image", chart->title() + ".png", "PNG image (*.png)");
  if (path.isEmpty()) return;
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || !chart->image().save(&file, "PNG") || !file.commit())
    QMessageBox::warning(this, "Save Chart Image", "Cannot write " + path + ": " + file.errorString());
}

void ChartPanel::saveChartCsv(TrainingChart* chart) {
  const QString path = QFileDialog::getSaveFileName(this, "Save Chart Data", chart->title() + ".csv", "CSV (*.csv)");
  if (path.isEmpty()) return;
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(chart->csv().toUtf8()) < 0 || !file.commit())
    QMessageBox::warning(this, "Save Chart Data", "Cannot write " + path + ": " + file.errorString());
}

}  // namespace streetgan::widgets
