#pragma once
// RunDashboard: what a run looks like while it learns (or afterwards, rebuilt from its log): a
// status line, the progress bar with epoch, step and ETA, and a ChartPanel of five charts
// (losses; D(x) and D(G(z)) before and after D's step; images/s and the share of time waiting
// on data; Parzen mean ± standard error; the machine: CPU, memory and GPU from the `system`
// events) beside the sample grids (a slider over every one of the run) and the warnings (skipped
// files with their paths), and a third row of two quality charts shown on demand (QualityCharts:
// MS-SSIM, NDB, copy rate and r_t; SWD and FID). A quality alarm shows as a badge above the charts
// (QualityAlarmBadge: its message, "and N more"; a click opens the warnings) and is counted
// (alarmsChanged, for the tab's title). When the run waits on data more than 20% of the time it
// says so and offers to build a cache (dataStarved / buildCacheRequested). It only reads events
// (addEvents); sample grids are decoded off the GUI thread. A run_started that resumes from an
// earlier step drops the points its predecessor logged past that step, as the event protocol says.
#include "core/runs/event_stream_reader.h"
#include "core/runs/training_status.h"
#include "widgets/chart_panel.h"
#include "widgets/training_chart.h"

#include <QFutureWatcher>
#include <QImage>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <vector>

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSlider;
class QTabWidget;

namespace streetgan::studio {

class QualityAlarmBadge;
class QualityCharts;

class RunDashboard : public QWidget {
  Q_OBJECT
public:
  explicit RunDashboard(QWidget* parent = nullptr);
  ~RunDashboard() override;

  /// Forgets the run shown; sample paths are taken relative to `run_dir` from now on.
  void clear(const QString& run_dir = {});
  QString runDirectory() const { return run_dir_; }
  void addEvents(const std::vector<streetgan::StreamEvent>& events);
  void setStatus(const QString& text);
  QString statusText() const;
  /// Shows other work's progress (e.g. rendering the demo data) in the progress bar.
  void showProgress(double fraction, const QString& text);

  widgets::TrainingChart& lossChart() { return *loss_chart_; }
  widgets::TrainingChart& discriminatorChart() { return *d_chart_; }
  widgets::TrainingChart& speedChart() { return *speed_chart_; }
  widgets::TrainingChart& parzenChart() { return *parzen_chart_; }
  widgets::TrainingChart& systemChart() { return *system_chart_; }
  /// MS-SSIM of samples and of training images, NDB share, copy rate, r_t.
  widgets::TrainingChart& qualityChart();
  /// SWD ×10³ and FID.
  widgets::TrainingChart& distanceChart();
  /// Whether the quality charts' row is shown (the toolbar's box; a run's first metrics event ticks it).
  bool qualityChartsShown() const;
  /// Quality alarms of the run shown, and the badge's text ("" when none).
  int alarmCount() const;
  QString alarmText() const;
  widgets::ChartPanel& charts() { return *charts_; }
  /// The share of time the recent steps waited on data, when above 20% (else a negative value).
  double dataStarvedShare() const { return starved_share_; }
  /// Shows the cache build's progress (or its end) on the data-starved button.
  void showCacheBuild(const QString& text, bool running);
  int sampleCount() const { return sample_paths_.size(); }
  /// The sample grid at `path` arrived (fetched from a remote host): shown if it is the one wanted.
  void refreshSample(const QString& path);
  /// The sample grid on show (null until one is decoded).
  QImage shownSample() const { return shown_sample_; }
  int warningCount() const;
  QString progressText() const;

signals:
  /// A sample grid was decoded and shown (or could not be read: `ok` false).
  void sampleShown(bool ok);
  /// The data-starved button was pressed and its question answered yes.
  void buildCacheRequested();
  /// The count of quality alarms changed (0 after clear()).
  void alarmsChanged(int count);

private:
  // The constructor's steps.
  void buildCharts();
  void buildSamplesPane();
  void connectViews();

  void showSample(int index);
  void updateStarved(double wait_fraction);
  void addSystem(const events::System& system, double seconds);

  QString run_dir_;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* eta_ = nullptr;
  widgets::TrainingChart* loss_chart_ = nullptr;
  widgets::TrainingChart* d_chart_ = nullptr;
  widgets::TrainingChart* speed_chart_ = nullptr;
  widgets::TrainingChart* parzen_chart_ = nullptr;
  widgets::TrainingChart* system_chart_ = nullptr;
  widgets::ChartPanel* charts_ = nullptr;
  QualityCharts* quality_ = nullptr;
  QualityAlarmBadge* alarm_ = nullptr;
  int loss_d_ = 0, loss_g_ = 0, d_x_ = 0, d_gz1_ = 0, d_gz2_ = 0, speed_ = 0, wait_ = 0;
  int parzen_mean_ = 0, parzen_low_ = 0, parzen_high_ = 0;
  int cpu_ = 0, memory_ = 0, gpu_ = 0, gpu_memory_ = 0;
  QPushButton* starved_ = nullptr;   // shown while the run is data-starved
  events::DataWaitWindow recent_waits_;  // the last steps' data_wait_fraction
  double starved_share_ = -1;
  bool cache_building_ = false;
  QTabWidget* side_ = nullptr;        // Samples | Warnings (N)
  QLabel* sample_view_ = nullptr;
  QLabel* sample_caption_ = nullptr;
  QSlider* sample_slider_ = nullptr;
  QStringList sample_paths_, sample_captions_;
  std::vector<double> sample_images_seen_;
  QFutureWatcher<QImage> sample_loader_;
  int sample_loading_ = -1, sample_wanted_ = -1;
  QImage shown_sample_;
  QListWidget* warnings_ = nullptr;
  double epochs_total_ = 0;
  TrainingStatus training_status_;  // the run's pace and ETA, as `streetgan train` tells them
  double first_started_time_ = -1;  // the first run_started of the run: the time axis's zero
};

}  // namespace streetgan::studio
