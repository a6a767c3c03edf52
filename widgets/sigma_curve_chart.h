#pragma once
// SigmaCurveChart: the Parzen σ cross-validation curve — mean log-likelihood of the validation
// split against σ (log scale), the chosen σ marked — with Save Image… and Save CSV….
#include <QImage>
#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;

namespace streetgan::widgets {

class SigmaCurveChart : public QWidget {
  Q_OBJECT
public:
  explicit SigmaCurveChart(QWidget* parent = nullptr);

  /// (σ, mean LL) points and the chosen σ; an empty curve clears the chart.
  void setCurve(const std::vector<std::pair<double, double>>& curve, double chosen_sigma);
  int pointCount() const { return static_cast<int>(curve_.size()); }
  double chosenSigma() const { return chosen_; }
  QString csv() const;
  QImage image();

private:
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLineSeries* line_ = nullptr;
  QScatterSeries* chosen_marker_ = nullptr;
  std::vector<std::pair<double, double>> curve_;
  double chosen_ = 0;
};

}  // namespace streetgan::widgets
