#pragma once
// ChartPanel: the charts of one tab in a grid under one toolbar (smoothing, log scale, x axis,
// and the read-out of the points under the mouse), so every chart reads the same way and the
// plots get the height. A chart's own ⋯ menu (or right-click) saves it as PNG or CSV through a
// file dialog; a double-click gives a cell the whole grid, another gives it back. Charts take
// turns to redraw (one per 60 ms tick), so a burst of points never redraws them all in one
// event-loop pass. Cells that are not charts (a sample grid) sit in the grid too. The panel
// owns nothing but its toolbar and layout: cells are children of the panel once added.
#include "widgets/training_chart.h"

#include <QList>
#include <QTimer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QHBoxLayout;
class QLabel;
class QSlider;

namespace streetgan::widgets {

class ChartPanel : public QWidget {
  Q_OBJECT
public:
  /// Cells are placed row by row, `columns` to a row.
  explicit ChartPanel(int columns, QWidget* parent = nullptr);
  ~ChartPanel() override;

  /// Adds a chart in the next cell. `follows_smoothing` false keeps the chart's own smoothing
  /// (the Parzen chart: its points are estimates, not noisy steps, and stay unsmoothed).
  void addChart(TrainingChart* chart, bool follows_smoothing = true);
  /// Adds another widget (a sample grid) in the next cell.
  void addCell(QWidget* widget);

  void setSmoothing(double weight);
  double smoothing() const;
  void setLogY(bool log_y);
  bool logY() const;
  void setXAxis(TrainingChart::XAxis axis);
  TrainingChart::XAxis xAxis() const;

  /// Gives `cell` the whole grid (null: every cell back in its place).
  void maximize(QWidget* cell);
  QWidget* maximizedCell() const { return maximized_; }
  const QList<TrainingChart*>& charts() const { return charts_; }
  /// The toolbar's row, for a tab's own controls (added after the x axis box).
  QHBoxLayout* toolbar() const { return toolbar_; }
  QString readoutText() const;

  /// Redraws every chart with new points now (tests and screenshots; normally they take turns).
  void redrawAll();

public slots:
  void saveChartImage(streetgan::widgets::TrainingChart* chart);
  void saveChartCsv(streetgan::widgets::TrainingChart* chart);

private:
  QList<TrainingChart*> charts_;
  QList<bool> follows_smoothing_;
  QList<QWidget*> cells_;
  QWidget* maximized_ = nullptr;
  int columns_;
  QGridLayout* grid_ = nullptr;
  QHBoxLayout* toolbar_ = nullptr;
  QSlider* smoothing_ = nullptr;
  QCheckBox* log_box_ = nullptr;
  QComboBox* x_box_ = nullptr;
  QLabel* readout_ = nullptr;
  QTimer turns_;
  int next_chart_ = 0;
};

}  // namespace streetgan::widgets
