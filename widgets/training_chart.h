#pragma once
// TrainingChart: one chart of the training dashboard (Qt Charts). Holds every point of each series
// (x as images seen, as epochs and as seconds since the run started; y as logged), and draws them
// for the current view: the raw points faint, decimated to at most four per pixel column (first,
// lowest, highest, last), with the smoothed line on top (TensorBoard's debiased exponential
// smoothing). Options: smoothing weight, log-scale y, the x unit; a read-out of the nearest
// points under the mouse (readoutChanged). The chart has no toolbar of its own: ChartPanel sets
// the options of all its charts at once. Right-click (or the ⋯ button) offers Save Image and
// Save CSV; a double-click asks the panel to give it the whole area. Appends are cheap; drawing
// is coalesced to at most 10 redraws a second, so a run that logs thousands of points a second
// keeps the GUI fluid. The chart never writes files: image() and csv() give the owner what to save.
#include <QColor>
#include <QImage>
#include <QRectF>
#include <QString>
#include <QTimer>
#include <QWidget>

#include <limits>
#include <vector>

class QAbstractAxis;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QToolButton;

namespace streetgan::widgets {

class TrainingChart : public QWidget {
  Q_OBJECT
public:
  enum class XAxis { ImagesSeen, Epochs, WallTime };

  explicit TrainingChart(const QString& title, QWidget* parent = nullptr);
  ~TrainingChart() override;

  /// Adds a series; returns its index for append().
  int addSeries(const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine);
  /// Leaves `series` out of the legend (e.g. a second line per run, explained in the title).
  void hideFromLegend(int series);
  /// The legend's name of `series` (its CSV name stays the one it was added with).
  void setSeriesLegendName(int series, const QString& name);
  /// Appends a point (kept for good); non-finite values are kept and drawn as gaps. `seconds`
  /// (since the run started) places it on the wall-time axis; NaN leaves it off that axis.
  void append(int series, double images_seen, double epoch, double value,
              double seconds = std::numeric_limits<double>::quiet_NaN());
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
  /// "series,images_seen,epoch,seconds,value,smoothed" for every point of every series (smoothed
  /// at the current weight, exactly as drawn; seconds empty when not known).
  QString csv() const;
  /// The chart as an image, at its current size.
  QImage image();
  /// The read-out for x (in the current x unit): each series' nearest point, raw and smoothed.
  QString readoutAt(double x) const;
  QString title() const;
  void setTitle(const QString& title);
  /// The plot area (inside the axes), in this widget's coordinates.
  QRectF plotArea() const;
  /// The legend, in this widget's coordinates.
  QRectF legendArea() const;

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
  /// The mouse moved over the plot: the read-out of the points under it (empty: it left).
  void readoutChanged(const QString& text);
  /// Double-clicked: the owner may give it the whole area (or give it back).
  void maximizeRequested();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  struct Series;
  QString empty_text_ = "No points yet.";
  void scheduleRedraw();
  void rebuildAxes();
  void placeOverlays();
  void showMenu(const QPoint& global_position);
  const std::vector<double>& xsOf(const Series& series) const;

  std::vector<Series> series_;
  double smoothing_ = 0.6;
  bool log_y_ = false;
  XAxis x_axis_ = XAxis::ImagesSeen;
  QChart* chart_ = nullptr;        // owned by view_
  QChartView* view_ = nullptr;     // owned by this widget
  QAbstractAxis* x_ = nullptr;     // owned by chart_
  QAbstractAxis* y_ = nullptr;     // owned by chart_
  QToolButton* menu_button_ = nullptr;  // ⋯ in the top-right corner: the save actions
  QLabel* empty_ = nullptr;        // shown over the plot area while it has nothing to draw
  QTimer redraw_timer_;
  bool auto_redraw_ = true;
  bool dirty_ = false;
  bool axes_set_ = false;  // the axes hold a range for the current data (they only grow)
};

}  // namespace streetgan::widgets
