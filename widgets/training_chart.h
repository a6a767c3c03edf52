#pragma once
// TrainingChart: one chart of the training dashboard (Qt Charts). Holds every point of each series
// (x as images seen and as epochs, y as logged), and draws them for the current view: the raw
// points faint, decimated to at most four per pixel column (first, lowest, highest, last), with
// the smoothed line on top (TensorBoard's debiased exponential smoothing, weight from the slider).
// Options: log-scale y, x in images seen or epochs; a read-out of the nearest points under the
// mouse. Appends are cheap; drawing is coalesced to at most 10 redraws a second, so a run that
// logs thousands of points a second keeps the GUI fluid. The chart never writes files: image()
// and csv() give the app what to save.
#include <QColor>
#include <QImage>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <vector>

class QAbstractAxis;
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineSeries;
class QSlider;

namespace streetgan::widgets {

class TrainingChart : public QWidget {
  Q_OBJECT
public:
  enum class XAxis { ImagesSeen, Epochs };

  explicit TrainingChart(const QString& title, QWidget* parent = nullptr);
  ~TrainingChart() override;

  /// Adds a series; returns its index for append().
  int addSeries(const QString& name, const QColor& color);
  /// Appends a point (kept for good); non-finite values are kept and drawn as gaps.
  void append(int series, double images_seen, double epoch, double value);
  void clear();
  /// Drops every point at or past `images_seen` (a resumed run replaces the steps its killed
  /// predecessor logged after its last checkpoint). Points must have been appended in order.
  void truncateFrom(double images_seen);

  /// What the chart says while it has no points (default "No points yet.").
  void setEmptyText(const QString& text);
  void setSmoothing(double weight);  ///< 0 (none) to 0.999
  double smoothing() const { return smoothing_; }
  void setLogY(bool log_y);
  bool logY() const { return log_y_; }
  void setXAxis(XAxis axis);
  XAxis xAxis() const { return x_axis_; }

  std::size_t pointCount(int series) const;
  /// Points now drawn for `series` (raw, after decimation).
  int drawnPointCount(int series) const;
  /// "series,images_seen,epoch,value,smoothed" for every point of every series (smoothed at the
  /// current weight, exactly as drawn).
  QString csv() const;
  /// The chart as an image, at its current size.
  QImage image();
  /// The read-out for x (in the current x unit): each series' nearest point, raw and smoothed.
  QString readoutAt(double x) const;

  /// Redraws on its own at most every `ms` milliseconds after new points (default 100); 0 leaves
  /// redrawing to the owner (redrawIfChanged), e.g. to take turns between several charts.
  void setRedrawInterval(int ms);

public slots:
  /// Redraws now (normally it happens on its own, coalesced).
  void redraw();
  /// Redraws if points came in since the last redraw.
  void redrawIfChanged();

signals:
  void exportImageRequested();
  void exportCsvRequested();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  struct Series;
  void scheduleRedraw();
  void rebuildAxes();
  const std::vector<double>& xsOf(const Series& series) const;

  std::vector<Series> series_;
  double smoothing_ = 0.6;
  bool log_y_ = false;
  XAxis x_axis_ = XAxis::ImagesSeen;
  QChart* chart_ = nullptr;        // owned by view_
  QChartView* view_ = nullptr;     // owned by this widget
  QAbstractAxis* x_ = nullptr;     // owned by chart_
  QAbstractAxis* y_ = nullptr;     // owned by chart_
  QSlider* smoothing_slider_ = nullptr;
  QCheckBox* log_box_ = nullptr;
  QComboBox* x_box_ = nullptr;
  QLabel* readout_ = nullptr;
  QLabel* empty_ = nullptr;        // shown over the chart while it has no points
  QTimer redraw_timer_;
  bool auto_redraw_ = true;
  bool dirty_ = false;
  bool axes_set_ = false;  // the axes hold a range for the current data (they only grow)
};

}  // namespace streetgan::widgets
