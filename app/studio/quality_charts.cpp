#include "app/studio/quality_charts.h"
#include "core/runs/quality_evaluation_file.h"

#include <QCheckBox>
#include <QHBoxLayout>

#include <cmath>
#include <string_view>
#include <utility>

namespace streetgan::studio {

namespace {

/// The figure `name` of a metrics event, or NaN when it has none.
double figureOf(const events::Metrics& metrics, std::string_view name) {
  for (const auto& [figure, value] : metrics.figures)
    if (figure == name) return value;
  return std::nan("");
}

double countOfSeries(const events::Count& value) { return value ? static_cast<double>(*value) : std::nan(""); }

const char kDistanceTitle[] = "Distance to the data";

}  // namespace

QualityCharts::QualityCharts(widgets::ChartPanel& panel, QObject* parent) : QObject(parent), panel_(panel) {
  quality_ = new widgets::TrainingChart("Quality", &panel);
  msssim_samples_ = quality_->addSeries("MS-SSIM of samples", QColor(31, 119, 180));
  msssim_train_ = quality_->addSeries("MS-SSIM of training images", QColor(31, 119, 180, 140), Qt::DashLine);
  ndb_ = quality_->addSeries("NDB share of bins", QColor(44, 160, 44));
  copy_rate_ = quality_->addSeries("copy rate", QColor(214, 39, 40));
  rt_ = quality_->addSeries("r_t", QColor(148, 103, 189));
  ada_p_ = quality_->addSeries("ADA's p", QColor(227, 119, 194), Qt::DashLine);
  spread_ = quality_->addSeries("spread of samples ÷ of training images", QColor(23, 190, 207));
  quality_->setSmoothing(0);
  quality_->setEmptyText("No quality figures yet. r_t comes with every step (and ADA's p with ADA on); the others "
                         "with each quality "
                         "evaluation, which is off unless metrics.every_epochs or metrics.every_images is set.");
  distance_ = new widgets::TrainingChart(kDistanceTitle, &panel);
  swd_ = distance_->addSeries("SWD ×10³", QColor(255, 127, 14));
  fid_ = distance_->addSeries("FID", QColor(140, 86, 75));
  distance_->setSmoothing(0);
  distance_->setEmptyText("No SWD or FID yet. Quality metrics are off unless metrics.every_epochs or "
                          "metrics.every_images is set.");
  panel.addChart(quality_, false);
  panel.addChart(distance_, false);

  show_ = new QCheckBox("Quality charts", &panel);
  show_->setToolTip("Show the charts of the quality metrics (MS-SSIM, NDB, copy rate, r_t, SWD, FID) in a third "
                    "row; a run's first quality evaluation shows them");
  panel.toolbar()->addWidget(show_);
  connect(show_, &QCheckBox::toggled, this, [this](bool shown) {
    // Hiding a chart that has the whole area gives every cell its place back first.
    QWidget* whole = panel_.maximizedCell();
    if (!shown && (whole == quality_ || whole == distance_)) panel_.maximize(nullptr);
    updateVisibility();
  });
  // The panel shows every cell when a chart gives the whole area back (its own connection, made
  // when the chart was added, runs first): these two follow the box again.
  for (widgets::TrainingChart* chart : panel.charts())
    connect(chart, &widgets::TrainingChart::maximizeRequested, this, &QualityCharts::updateVisibility);
  updateVisibility();
}

void QualityCharts::addStep(const events::Step& step, double images_seen, double epoch, double seconds) {
  if (!std::isfinite(images_seen)) return;
  if (std::isfinite(step.rt)) quality_->append(rt_, images_seen, epoch, step.rt, seconds);
  if (step.ada_p && std::isfinite(*step.ada_p)) quality_->append(ada_p_, images_seen, epoch, *step.ada_p, seconds);
}

void QualityCharts::addMetrics(const events::Metrics& metrics, double seconds) {
  const double images = countOfSeries(metrics.images_seen), epoch = countOfSeries(metrics.epoch);
  if (!std::isfinite(images)) return;  // nowhere to place it
  for (const auto& [series, name] : {std::pair{msssim_samples_, quality_figure::kMsSsimSamples},
                                     std::pair{msssim_train_, quality_figure::kMsSsimTrain},
                                     std::pair{ndb_, quality_figure::kNdbFraction},
                                     std::pair{copy_rate_, quality_figure::kCopyRate},
                                     std::pair{spread_, quality_figure::kSpreadRatio}}) {
    const double value = figureOf(metrics, name);
    if (std::isfinite(value)) quality_->append(series, images, epoch, value, seconds);
  }
  const double swd = figureOf(metrics, quality_figure::kSwd);
  if (std::isfinite(swd)) distance_->append(swd_, images, epoch, swd, seconds);
  const double fid = figureOf(metrics, quality_figure::kFid);
  const QString space = QString::fromStdString(metrics.feature_space);
  if (std::isfinite(fid) && !space.isEmpty()) {
    if (fid_space_.isEmpty()) {
      fid_space_ = space;
      distance_->setTitle(QString(kDistanceTitle) + " (FID in " + space + ")");
    }
    if (space == fid_space_) distance_->append(fid_, images, epoch, fid, seconds);
  }
  if (!std::exchange(has_metrics_, true)) setShown(true);
}

void QualityCharts::clear() {
  fid_space_.clear();
  has_metrics_ = false;
  distance_->setTitle(kDistanceTitle);
}

bool QualityCharts::isShown() const { return show_->isChecked(); }

void QualityCharts::setShown(bool shown) {
  if (show_->isChecked() != shown) show_->setChecked(shown);  // toggled() updates the charts
  else updateVisibility();
}

void QualityCharts::updateVisibility() {
  const QWidget* whole = panel_.maximizedCell();
  for (widgets::TrainingChart* chart : {quality_, distance_}) chart->setVisible(show_->isChecked() && (!whole || whole == chart));
}

}  // namespace streetgan::studio
