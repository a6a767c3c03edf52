#include "widgets/sigma_curve_chart.h"

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScatterSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>

namespace streetgan::widgets {

SigmaCurveChart::SigmaCurveChart(QWidget* parent) : QWidget(parent) {
  chart_ = new QChart();
  chart_->setTitle("σ cross-validation (validation split)");
  chart_->legend()->setAlignment(Qt::AlignBottom);
  line_ = new QLineSeries();
  line_->setName("mean log-likelihood");
  chosen_marker_ = new QScatterSeries();
  chosen_marker_->setName("chosen σ");
  chosen_marker_->setMarkerSize(11);
  chart_->addSeries(line_);
  chart_->addSeries(chosen_marker_);
  auto* x = new QLogValueAxis();
  x->setTitleText("σ");
  x->setLabelFormat("%g");
  auto* y = new QValueAxis();
  y->setTitleText("mean log-likelihood");
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  for (auto* series : {static_cast<QXYSeries*>(line_), static_cast<QXYSeries*>(chosen_marker_)}) {
    series->attachAxis(x);
    series->attachAxis(y);
  }
  view_ = new QChartView(chart_, this);
  auto* save_image = new QPushButton("Save Image…", this);
  auto* save_csv = new QPushButton("Save CSV…", this);
  auto* buttons = new QHBoxLayout();
  buttons->addStretch(1);
  buttons->addWidget(save_image);
  buttons->addWidget(save_csv);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(buttons);
  layout->addWidget(view_, 1);
  connect(save_image, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save Chart Image", QString(), "PNG image (*.png)");
    QSaveFile file(path);
    if (!path.isEmpty() && (!file.open(QIODevice::WriteOnly) || !image().save(&file, "PNG") || !file.commit()))
      QMessageBox::warning(this, "Save Chart Image", "Cannot write " + path + ": " + file.errorString());
  });
  connect(save_csv, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save Chart Data", QString(), "CSV (*.csv)");
    QSaveFile file(path);
    if (!path.isEmpty() && (!file.open(QIODevice::WriteOnly) || file.write(csv().toUtf8()) < 0 || !file.commit()))
      QMessageBox::warning(this, "Save Chart Data", "Cannot write " + path + ": " + file.errorString());
  });
}

void SigmaCurveChart::setCurve(const std::vector<std::pair<double, double>>& curve, double chosen_sigma) {
  curve_ = curve;
  chosen_ = chosen_sigma;
  QList<QPointF> points;
  double lo = 1e300, hi = -1e300, chosen_ll = 0;
  for (const auto& [sigma, mean] : curve) {
    points.append(QPointF(sigma, mean));
    lo = std::min(lo, mean);
    hi = std::max(hi, mean);
    if (sigma == chosen_sigma) chosen_ll = mean;
  }
  line_->replace(points);
  chosen_marker_->clear();
  if (curve.empty()) return;
  chosen_marker_->append(chosen_sigma, chosen_ll);
  auto* x = static_cast<QLogValueAxis*>(chart_->axes(Qt::Horizontal).first());
  auto* y = static_cast<QValueAxis*>(chart_->axes(Qt::Vertical).first());
  x->setRange(curve.front().first * 0.8, curve.back().first * 1.25);
  const double pad = std::max(1.0, (hi - lo) * 0.1);
  y->setRange(lo - pad, hi + pad);
}

QString SigmaCurveChart::csv() const {
  QString out = "sigma,valid_mean_ll,chosen\n";
  for (const auto& [sigma, mean] : curve_)
    out += QString("%1,%2,%3\n").arg(sigma, 0, 'g', 17).arg(mean, 0, 'g', 17).arg(sigma == chosen_ ? 1 : 0);
  return out;
}

QImage SigmaCurveChart::image() { return view_->grab().toImage(); }

}  // namespace streetgan::widgets
