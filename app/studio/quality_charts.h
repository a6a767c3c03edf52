#pragma once
// QualityCharts: the Train tab's two charts of a run's quality, in the dashboard's ChartPanel.
// "Quality" holds the figures that lie within [-1, 1]: the diversity of the samples (mean MS-SSIM of
// pairs of samples) beside the same figure for training images (dashed, the same colour), NDB's
// share of bins, the copy rate (from `metrics` events, one point per evaluation) and ADA's r_t
// (from every step); "Distance to the data" holds SWD ×10³ and, when the run computes it, FID,
// whose scale differs. Both on the images-seen axis, unsmoothed (the figures are estimates).
//
// The panel's grid has room for two rows of charts at 1280×720, so these two form a third row that
// is shown on demand: the "Quality charts" box in the panel's toolbar shows or hides it, and a
// run's first `metrics` event ticks it. A chart given the whole area (double-click) and given back
// leaves the row as the box says. FID is drawn for one feature space only, the first one seen (a
// run does not change it; figures of different spaces are never compared).
#include "core/runs/run_event.h"
#include "widgets/chart_panel.h"
#include "widgets/training_chart.h"

#include <QObject>
#include <QString>

class QCheckBox;

namespace streetgan::studio {

class QualityCharts : public QObject {
  Q_OBJECT
public:
  /// Adds both charts to `panel` (its next two cells, hidden until shown) and the "Quality charts"
  /// box to its toolbar.
  explicit QualityCharts(widgets::ChartPanel& panel, QObject* parent = nullptr);

  widgets::TrainingChart& quality() { return *quality_; }
  widgets::TrainingChart& distance() { return *distance_; }

  /// A step's r_t at its place (left out when the step has none).
  void addStep(const events::Step& step, double images_seen, double epoch, double seconds);
  /// A quality evaluation's figures; the first of a run shows the charts.
  void addMetrics(const events::Metrics& metrics, double seconds);
  /// Forgets the run's feature space and evaluations (the panel clears the points).
  void clear();

  /// Whether the row is asked for (the toolbar's box).
  bool isShown() const;
  void setShown(bool shown);

private:
  /// Shows the charts as the box says, unless another cell has the whole area.
  void updateVisibility();

  widgets::ChartPanel& panel_;
  widgets::TrainingChart* quality_ = nullptr;
  widgets::TrainingChart* distance_ = nullptr;
  QCheckBox* show_ = nullptr;
  int msssim_samples_ = 0, msssim_train_ = 0, ndb_ = 0, copy_rate_ = 0, rt_ = 0, ada_p_ = 0, spread_ = 0;
  int swd_ = 0, fid_ = 0;
  QString fid_space_;       // the feature space FID is drawn in ("" until the first FID)
  bool has_metrics_ = false;  // a metrics event came since clear()
};

}  // namespace streetgan::studio
