#pragma once
// RunDashboard: what a run looks like while it learns (or afterwards, rebuilt from its log): a
// status line, the progress bar with epoch, step and ETA, four charts (losses; D(x) and D(G(z))
// before and after D's step; images/s and the share of time waiting on data; Parzen mean ±
// standard error), the sample grids with a slider over every one of the run, and the warnings
// (skipped files with their paths). It only reads events (addEvents); sample grids are decoded
// off the GUI thread. A run_started that resumes from an earlier step drops the points its
// predecessor logged past that step, as the event protocol says.
#include "core/runs/event_stream_reader.h"
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
class QSlider;

namespace streetgan::studio {

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

private:
  void showSample(int index);
  void saveChartImage(widgets::TrainingChart* chart);
  void saveChartCsv(widgets::TrainingChart* chart);

  QString run_dir_;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* eta_ = nullptr;
  widgets::TrainingChart* loss_chart_ = nullptr;
  widgets::TrainingChart* d_chart_ = nullptr;
  widgets::TrainingChart* speed_chart_ = nullptr;
  widgets::TrainingChart* parzen_chart_ = nullptr;
  int loss_d_ = 0, loss_g_ = 0, d_x_ = 0, d_gz1_ = 0, d_gz2_ = 0, speed_ = 0, wait_ = 0;
  int parzen_mean_ = 0, parzen_low_ = 0, parzen_high_ = 0;
  QLabel* sample_view_ = nullptr;
  QLabel* sample_caption_ = nullptr;
  QSlider* sample_slider_ = nullptr;
  QStringList sample_paths_, sample_captions_;
  std::vector<double> sample_images_seen_;
  QFutureWatcher<QImage> sample_loader_;
  int sample_loading_ = -1, sample_wanted_ = -1;
  QImage shown_sample_;
  QListWidget* warnings_ = nullptr;
  double started_time_ = 0, started_epochs_ = 0, epochs_total_ = 0;
  QTimer chart_turns_;  // redraws one chart per tick, so no tick does them all
  int next_chart_ = 0;
};

}  // namespace streetgan::studio
