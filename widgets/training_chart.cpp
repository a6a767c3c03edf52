#include "widgets/training_chart.h"

#include "core/util/series_smoothing.h"

#include <QChart>
#include <QChartView>
#include <QContextMenuEvent>
#include <QEvent>
#include <QGraphicsLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QMouseEvent>
#include <QToolButton>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace streetgan::widgets {

namespace {

/// [lo, hi] widened to multiples of a 1-2-5 step giving about `ticks` intervals: the axis range
/// then changes only when the data crosses a step, not on every redraw (each change makes Qt
/// Charts lay out every series again).
double niceStep(double span, int intervals) {
  const double raw = span / intervals;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * magnitude;
}

std::pair<double, double> niceRange(double lo, double hi, int intervals) {
  if (!(hi > lo)) {
    const double pad = std::max(1e-9, std::abs(lo) * 0.05);
    lo -= pad;
    hi += pad;
  }
  const double step = niceStep(hi - lo, intervals);
  return {std::floor(lo / step) * step, std::ceil(hi / step) * step};
}

/// [lo, hi] (both > 0) widened to whole decades.
std::pair<double, double> decadeRange(double lo, double hi) {
  return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
}

void setAxisRange(QAbstractAxis* axis, std::pair<double, double> range) {
  if (auto* linear = qobject_cast<QValueAxis*>(axis)) {
    if (linear->min() == range.first && linear->max() == range.second) return;
    // Labels at round values, about five of them.
    linear->setTickType(QValueAxis::TicksDynamic);
    linear->setTickAnchor(0);
    linear->setTickInterval(niceStep(range.second - range.first, 5));
    linear->setRange(range.first, range.second);
  } else if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
    if (log->min() != range.first || log->max() != range.second) log->setRange(range.first, range.second);
  }
}

}  // namespace

struct TrainingChart::Series {
  QString name;
  QColor color;
  std::vector<double> images, epochs, seconds, values;
  std::vector<double> smoothed;   // kept up to date point by point
  SmoothingState smoothing;
  QLineSeries* raw = nullptr;     // owned by the chart
  QLineSeries* smooth = nullptr;  // owned by the chart
  int drawn = 0;
};

TrainingChart::TrainingChart(const QString& title, QWidget* parent) : QWidget(parent) {
  chart_ = new QChart();
  chart_->setTitle(title);
  QFont title_font = chart_->titleFont();
  title_font.setPointSizeF(title_font.pointSizeF() * 0.95);
  title_font.setBold(true);
  chart_->setTitleFont(title_font);
  chart_->legend()->setAlignment(Qt::AlignBottom);
  QFont legend_font = chart_->legend()->font();
  legend_font.setPointSizeF(legend_font.pointSizeF() * 0.9);
  chart_->legend()->setFont(legend_font);
  // Every pixel of height goes to the plot: at 1280×720 each of a tab's charts keeps 180 px.
  chart_->setMargins(QMargins(2, 0, 2, 0));
  chart_->layout()->setContentsMargins(0, 0, 0, 0);
  chart_->setBackgroundRoundness(0);
  view_ = new QChartView(chart_, this);
  // No antialiasing: with it, painting four live charts at 2,000 points a second kept the GUI
  // thread busy for 60-85 ms at a time on a 2-core machine (tst_studio_train's stall probe).
  view_->setRenderHint(QPainter::Antialiasing, false);
  view_->setMinimumSize(160, 120);
  view_->viewport()->setMouseTracking(true);
  view_->viewport()->installEventFilter(this);
  empty_ = new QLabel(empty_text_, view_->viewport());
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setEnabled(false);
  empty_->setAttribute(Qt::WA_TransparentForMouseEvents);
  menu_button_ = new QToolButton(view_->viewport());
  menu_button_->setText("⋯");
  menu_button_->setAutoRaise(true);
  menu_button_->setToolTip("Save this chart as an image or CSV (also on right-click; double-click to enlarge)");
  connect(menu_button_, &QToolButton::clicked, this,
          [this] { showMenu(menu_button_->mapToGlobal(QPoint(0, menu_button_->height()))); });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_, 1);

  redraw_timer_.setSingleShot(true);
  redraw_timer_.setInterval(100);
  connect(&redraw_timer_, &QTimer::timeout, this, &TrainingChart::redraw);
  rebuildAxes();
}

TrainingChart::~TrainingChart() = default;

int TrainingChart::addSeries(const QString& name, const QColor& color, Qt::PenStyle style) {
  Series series;
  series.name = name;
  series.color = color;
  series.raw = new QLineSeries();
  series.raw->setName(name + " (raw)");
  QColor faint = color;
  faint.setAlpha(60);
  series.raw->setPen(QPen(faint, 1));
  series.smooth = new QLineSeries();
  series.smooth->setName(name);
  series.smooth->setPen(QPen(QBrush(color), 2, style));
  chart_->addSeries(series.raw);
  chart_->addSeries(series.smooth);
  // Only the smoothed line gets a legend entry.
  const auto markers = chart_->legend()->markers(series.raw);
  for (auto* marker : markers) marker->setVisible(false);
  series_.push_back(std::move(series));
  rebuildAxes();
  redraw();  // shows the empty state until points come
  return static_cast<int>(series_.size()) - 1;
}

void TrainingChart::hideFromLegend(int series) {
  for (auto* marker : chart_->legend()->markers(series_.at(static_cast<std::size_t>(series)).smooth)) marker->setVisible(false);
}

void TrainingChart::setSeriesLegendName(int series, const QString& name) {
  series_.at(static_cast<std::size_t>(series)).smooth->setName(name);
}

void TrainingChart::append(int series, double images_seen, double epoch, double value, double seconds) {
  Series& s = series_.at(static_cast<std::size_t>(series));
  s.images.push_back(images_seen);
  s.epochs.push_back(epoch);
  s.seconds.push_back(seconds);
  s.values.push_back(value);
  s.smoothed.push_back(smoothNext(s.smoothing, value, smoothing_));
  scheduleRedraw();
}

void TrainingChart::clear() {
  for (Series& s : series_) {
    s.images.clear();
    s.epochs.clear();
    s.seconds.clear();
    s.values.clear();
    s.smoothed.clear();
    s.smoothing = SmoothingState();
  }
  axes_set_ = false;
  redraw();
}

void TrainingChart::setEmptyText(const QString& text) {
  empty_text_ = text;
  empty_->setText(text);
}

void TrainingChart::truncateFrom(double images_seen) {
  bool changed = false;
  for (Series& s : series_) {
    const auto keep = static_cast<std::size_t>(std::lower_bound(s.images.begin(), s.images.end(), images_seen) - s.images.begin());
    if (keep == s.images.size()) continue;
    changed = true;
    s.images.resize(keep);
    s.epochs.resize(keep);
    s.seconds.resize(keep);
    s.values.resize(keep);
    s.smoothed.resize(keep);
    s.smoothing = SmoothingState();
    for (std::size_t i = 0; i < keep; ++i) smoothNext(s.smoothing, s.values[i], smoothing_);
  }
  if (!changed) return;
  axes_set_ = false;
  scheduleRedraw();
}

void TrainingChart::setSmoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, 0.999);
  for (Series& s : series_) {
    s.smoothing = SmoothingState();
    for (std::size_t i = 0; i < s.values.size(); ++i) s.smoothed[i] = smoothNext(s.smoothing, s.values[i], smoothing_);
  }
  scheduleRedraw();
}

void TrainingChart::setLogY(bool log_y) {
  if (log_y_ == log_y) return;
  log_y_ = log_y;
  rebuildAxes();
  redraw();
}

void TrainingChart::setXAxis(XAxis axis) {
  if (x_axis_ == axis) return;
  x_axis_ = axis;
  rebuildAxes();
  redraw();
}

std::size_t TrainingChart::pointCount(int series) const { return series_.at(static_cast<std::size_t>(series)).values.size(); }
int TrainingChart::drawnPointCount(int series) const { return series_.at(static_cast<std::size_t>(series)).drawn; }

const std::vector<double>& TrainingChart::xsOf(const Series& series) const {
  switch (x_axis_) {
    case XAxis::Epochs: return series.epochs;
    case XAxis::WallTime: return series.seconds;
    case XAxis::ImagesSeen: break;
  }
  return series.images;
}

void TrainingChart::scheduleRedraw() {
  dirty_ = true;
  if (auto_redraw_ && !redraw_timer_.isActive()) redraw_timer_.start();
}

void TrainingChart::setRedrawInterval(int ms) {
  auto_redraw_ = ms > 0;
  if (auto_redraw_) redraw_timer_.setInterval(ms);
  else redraw_timer_.stop();
}

void TrainingChart::redrawIfChanged() {
  if (dirty_) redraw();
}

void TrainingChart::rebuildAxes() {
  axes_set_ = false;
  for (QAbstractAxis* axis : chart_->axes()) {
    chart_->removeAxis(axis);
    delete axis;
  }
  auto* x = new QValueAxis();
  x->setTitleText(x_axis_ == XAxis::ImagesSeen ? "Images seen" : x_axis_ == XAxis::Epochs ? "Epoch" : "Seconds since the start");
  x->setLabelFormat(x_axis_ == XAxis::Epochs ? "%.1f" : "%.0f");
  QFont small = x->titleFont();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  small.setBold(false);
  x->setTitleFont(small);
  x_ = x;
  if (log_y_) {
    auto* y = new QLogValueAxis();
    y->setLabelFormat("%.3g");
    y->setMinorTickCount(-1);
    y_ = y;
  } else {
    auto* y = new QValueAxis();
    y->setLabelFormat("%.3g");
    y_ = y;
  }
  chart_->addAxis(x_, Qt::AlignBottom);
  chart_->addAxis(y_, Qt::AlignLeft);
  for (Series& s : series_) {
    for (QLineSeries* line : {s.raw, s.smooth}) {
      line->attachAxis(x_);
      line->attachAxis(y_);
    }
  }
}

void TrainingChart::redraw() {
  redraw_timer_.stop();
  dirty_ = false;
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  for (const Series& s : series_) {
    const auto& xs = xsOf(s);
    // Points without a time (NaN) are off the wall-time axis.
    if (xs.empty() || !std::isfinite(xs.front()) || !std::isfinite(xs.back())) continue;
    x_min = std::min(x_min, xs.front());
    x_max = std::max(x_max, xs.back());
  }
  const bool empty = !(x_max >= x_min);
  // No points: a sentence saying what will come instead of axes over nothing.
  empty_->setText(empty_text_);
  empty_->setVisible(empty);
  if (x_->isVisible() == empty) {
    x_->setVisible(!empty);
    y_->setVisible(!empty);
    // Now, not at the next event-loop pass: image() right after this redraw would otherwise
    // show the plot over the whole chart and no axes.
    chart_->layout()->activate();
  }
  placeOverlays();
  if (empty) {
    for (Series& s : series_) {
      s.raw->clear();
      s.smooth->clear();
      s.drawn = 0;
    }
    return;
  }
  if (x_max == x_min) x_max = x_min + 1;
  const int columns = std::max(100, static_cast<int>(chart_->plotArea().width()));
  double y_min = std::numeric_limits<double>::infinity(), y_max = -y_min;
  auto drawable = [this](double y) { return std::isfinite(y) && (!log_y_ || y > 0); };
  std::vector<QList<QPointF>> raws(series_.size()), smooths(series_.size());
  for (std::size_t k = 0; k < series_.size(); ++k) {
    const Series& s = series_[k];
    const auto& xs = xsOf(s);
    if (xs.empty() || !std::isfinite(xs.front()) || !std::isfinite(xs.back())) continue;
    for (std::size_t i : decimateForDrawing(xs, s.values, x_min, x_max, columns)) {
      if (!drawable(s.values[i])) continue;
      raws[k].append(QPointF(xs[i], s.values[i]));
      y_min = std::min(y_min, s.values[i]);
      y_max = std::max(y_max, s.values[i]);
    }
    for (std::size_t i : decimateForDrawing(xs, s.smoothed, x_min, x_max, columns))
      if (drawable(s.smoothed[i])) smooths[k].append(QPointF(xs[i], s.smoothed[i]));
  }
  // Axes first, so each series is laid out once, with its new points.
  // The axes only grow while a run goes on, with headroom, so Qt Charts (which lays every series
  // out again on a range change) relayouts a few dozen times a run, not at every redraw.
  auto* x_axis = static_cast<QValueAxis*>(x_);
  if (!axes_set_ || x_min < x_axis->min() || x_max > x_axis->max())
    setAxisRange(x_, niceRange(x_min, x_min + (x_max - x_min) * 1.25, 20));
  if (y_max >= y_min) {
    const auto [y_lo, y_hi] = log_y_ ? std::pair<double, double>(static_cast<QLogValueAxis*>(y_)->min(), static_cast<QLogValueAxis*>(y_)->max())
                                     : std::pair<double, double>(static_cast<QValueAxis*>(y_)->min(), static_cast<QValueAxis*>(y_)->max());
    if (!axes_set_ || y_min < y_lo || y_max > y_hi) {
      const double pad = (y_max - y_min) * 0.1;
      setAxisRange(y_, log_y_ ? decadeRange(y_min, y_max) : niceRange(y_min - pad, y_max + pad, 10));
    }
  }
  axes_set_ = true;
  if (!(y_max >= y_min)) {
    empty_->setText(log_y_ ? "Nothing to draw on a log scale: no value is above zero." : "No finite values to draw.");
    empty_->setVisible(true);
  }
  for (std::size_t k = 0; k < series_.size(); ++k) {
    series_[k].raw->replace(raws[k]);
    series_[k].smooth->replace(smooths[k]);
    series_[k].drawn = static_cast<int>(raws[k].size());
  }
}

QString TrainingChart::csv() const {
  QString out = "series,images_seen,epoch,seconds,value,smoothed\n";
  for (const Series& s : series_) {
    const std::vector<double>& smoothed = s.smoothed;
    for (std::size_t i = 0; i < s.values.size(); ++i)
      out += QString("%1,%2,%3,%4,%5,%6\n")
                 .arg(s.name)
                 .arg(s.images[i], 0, 'g', 17)
                 .arg(s.epochs[i], 0, 'g', 17)
                 .arg(std::isfinite(s.seconds[i]) ? QString::number(s.seconds[i], 'g', 17) : QString())
                 .arg(s.values[i], 0, 'g', 17)
                 .arg(smoothed[i], 0, 'g', 17);
  }
  return out;
}

QImage TrainingChart::image() {
  redraw();
  return view_->grab().toImage();
}

QString TrainingChart::readoutAt(double x) const {
  QStringList parts;
  for (const Series& s : series_) {
    const auto& xs = xsOf(s);
    if (xs.empty() || !std::isfinite(xs.front()) || !std::isfinite(xs.back())) continue;
    auto it = std::lower_bound(xs.begin(), xs.end(), x);
    std::size_t i = static_cast<std::size_t>(it - xs.begin());
    if (i == xs.size() || (i > 0 && x - xs[i - 1] < xs[i] - x)) --i;
    const std::vector<double>& smoothed = s.smoothed;
    if (parts.isEmpty()) {
      QString where = QString("images seen %1, epoch %2").arg(s.images[i], 0, 'f', 0).arg(s.epochs[i], 0, 'f', 2);
      if (std::isfinite(s.seconds[i])) where += QString(", %1 s").arg(s.seconds[i], 0, 'f', 0);
      parts << where;
    }
    parts << QString("%1 %2 (smoothed %3)").arg(s.name).arg(s.values[i], 0, 'g', 4).arg(smoothed[i], 0, 'g', 4);
  }
  return parts.join("   ");
}

QString TrainingChart::title() const { return chart_->title(); }
void TrainingChart::setTitle(const QString& title) { chart_->setTitle(title); }

QRectF TrainingChart::plotArea() const {
  const QRectF scene = chart_->mapToScene(chart_->plotArea()).boundingRect();
  const QRect in_view = view_->mapFromScene(scene).boundingRect();
  return QRectF(view_->viewport()->mapTo(this, in_view.topLeft()), in_view.size());
}

QRectF TrainingChart::legendArea() const {
  const QRectF scene = chart_->mapToScene(chart_->legend()->geometry()).boundingRect();
  const QRect in_view = view_->mapFromScene(scene).boundingRect();
  return QRectF(view_->viewport()->mapTo(this, in_view.topLeft()), in_view.size());
}

void TrainingChart::placeOverlays() {
  // The empty-state sentence sits in the plot area, never over the title or the legend.
  QRect area = view_->mapFromScene(chart_->mapToScene(chart_->plotArea()).boundingRect()).boundingRect();
  if (area.height() < 30) area = view_->viewport()->rect().adjusted(10, 24, -10, -30);
  empty_->setGeometry(area.adjusted(6, 4, -6, -4));
  const QSize button = menu_button_->sizeHint();
  menu_button_->setGeometry(view_->viewport()->width() - button.width() - 2, 2, button.width(), button.height());
}

void TrainingChart::showMenu(const QPoint& global_position) {
  QMenu menu(this);
  menu.addAction("Save Image…", this, &TrainingChart::exportImageRequested);
  menu.addAction("Save CSV…", this, &TrainingChart::exportCsvRequested);
  menu.exec(global_position);
}

bool TrainingChart::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_->viewport()) {
    switch (event->type()) {
      case QEvent::Resize:
        placeOverlays();
        break;
      case QEvent::MouseMove: {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const QPointF scene = view_->mapToScene(mouse->position().toPoint());
        const QPointF value = chart_->mapToValue(chart_->mapFromScene(scene));
        emit readoutChanged(readoutAt(value.x()));
        break;
      }
      case QEvent::Leave:
        emit readoutChanged(QString());
        break;
      case QEvent::MouseButtonDblClick:
        emit maximizeRequested();
        return true;
      case QEvent::ContextMenu:
        showMenu(static_cast<QContextMenuEvent*>(event)->globalPos());
        return true;
      default:
        break;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace streetgan::widgets
