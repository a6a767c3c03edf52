#pragma once
// QualityPanel: the quality metric suite of the Evaluate tab (docs/evaluation.md, "Quality
// metrics"). For the run and target the tab has chosen (latest, every or one checkpoint) a
// MetricsJob runs `streetgan metrics --save` (progress, Cancel), so results land in the run's
// evaluations/metrics-<checkpoint>.json. The panel shows the saved results: a table of the shown
// checkpoint's figures (the training images' MS-SSIM beside the samples'), and two charts of every
// saved checkpoint over images seen: SWD ×10³ and FID; the figures on a 0–1 scale. FID is drawn
// for files of one feature space only, the newest one's. The table saves as CSV or PNG, the
// charts through their own menus. "Show nearest training images…" finds a page of samples' nearest
// training photographs on a worker (findNearestImages) and shows them in a NearestImagesDialog.
#include "app/studio/control/metrics_job.h"
#include "app/studio/nearest_images.h"
#include "app/studio/nearest_images_dialog.h"
#include "app/studio/quality_table.h"
#include "core/runs/quality_evaluation_file.h"

#include <QFutureWatcher>
#include <QPointer>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace streetgan::widgets {
class ChartPanel;
class TrainingChart;
}  // namespace streetgan::widgets

namespace streetgan::studio {

class QualityPanel : public QWidget {
  Q_OBJECT
public:
  explicit QualityPanel(QString program, QWidget* parent = nullptr);
  ~QualityPanel() override;

  /// The run whose results are shown and scored; reads its saved results.
  void setRun(const QString& run_dir);
  /// "latest", "every" or a checkpoint file name of the run.
  void setTarget(const QString& target);
  void setSizes(int samples, int train);
  /// The metrics to compute (swd, msssim, ndb, fid, kid, prdc, memorisation); empty: all.
  void setMetrics(const QStringList& metrics);
  /// Starts the evaluation; false (reason in statusText()) when it cannot start.
  bool evaluate();
  /// Stops the evaluation or the nearest-images search, whichever runs.
  void cancel();
  bool isRunning() const { return job_.isRunning(); }
  /// Finds the nearest training images of seeds 0–7 of the target checkpoint on a worker;
  /// nearestImagesReady() follows, and the dialog opens when it worked.
  void showNearestImages();
  bool isSearching() const { return nearest_.isRunning(); }

  QString statusText() const;
  /// The line under the table: the checkpoint, counts, feature space and notes.
  QString detailsText() const;
  /// The line under the charts: how many saved results they show, and what was left out.
  QString chartsText() const;
  QualityTable& table() { return *table_; }
  widgets::TrainingChart& distanceChart() { return *distance_chart_; }
  widgets::TrainingChart& unitChart() { return *unit_chart_; }
  /// Points of the curve of the figure `name` (quality_figure::) in the charts; 0 when it has none.
  std::size_t chartPointCount(const QString& name) const;
  /// The last nearest-images dialog opened (null when none is open).
  NearestImagesDialog* nearestDialog() const { return dialog_; }

signals:
  /// An evaluation ended: ok, or the message saying why not.
  void evaluated(bool ok, const QString& message);
  /// A nearest-images search ended: empty, or its error.
  void nearestImagesReady(const QString& error);

private:
  void showSaved();
  void showTable();
  void showEvaluation(const QualityEvaluation& evaluation);
  /// The full path of the target checkpoint (the newest for latest and every); empty: none.
  QString targetCheckpoint() const;
  QStringList chosenMetrics() const;
  void setBusy(bool busy);
  void onJobFinished(bool ok, const QString& message);
  void onNearestFinished();
  void askToSaveCsv();
  void askToSaveImage();

  QString run_, target_ = "latest", job_run_;
  std::vector<QualityEvaluation> saved_;  // the run's readable results, by images seen
  QSpinBox* samples_ = nullptr;
  QSpinBox* train_ = nullptr;
  std::vector<QCheckBox*> metrics_;
  QPushButton* evaluate_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* nearest_button_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QualityTable* table_ = nullptr;
  QLabel* details_ = nullptr;
  widgets::ChartPanel* charts_ = nullptr;
  widgets::TrainingChart* distance_chart_ = nullptr;
  widgets::TrainingChart* unit_chart_ = nullptr;
  QLabel* charts_note_ = nullptr;
  struct Curve {
    const char* figure;
    widgets::TrainingChart* chart;
    int series;
  };
  std::vector<Curve> curves_;
  MetricsJob job_;
  QFutureWatcher<NearestImagesResult> nearest_;
  std::atomic<bool> nearest_cancel_{false};
  std::atomic<std::int64_t> nearest_done_{0}, nearest_total_{0};
  QTimer nearest_poll_;
  QPointer<NearestImagesDialog> dialog_;
};

}  // namespace streetgan::studio
