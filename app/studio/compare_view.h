#pragma once
// CompareView: two or more runs side by side (Runs tab → Compare). Their losses, D outputs,
// throughput, Parzen estimates and quality metrics (SWD ×10³; FID of the runs that share the first
// feature space seen, as figures of different spaces are never compared) overlaid in one
// ChartPanel (a colour per run, the run's name in the legend; x in images seen, epochs or
// seconds), their sample grids side by side under one slider of images seen (each run shows its
// grid nearest that point), and a table of the runs (RunFiguresTable says its columns); under it
// a row per config key whose values differ between the runs (ConfigDifferenceTable).
// Save Image… and Save CSV… write the whole view and the table. Logs are read on a worker, and
// runs still going are followed (their new lines every 2 s), so the GUI thread only appends.
#include "app/studio/run_figures_table.h"
#include "core/runs/run_history.h"
#include "widgets/chart_panel.h"

#include <QFutureWatcher>
#include <QImage>
#include <QList>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QLabel;
class QSlider;

namespace streetgan::studio {

class ConfigDifferenceTable;

/// A run to compare: its folder, where it trained, and what an hour there costs (0: not known).
struct ComparedRun {
  QString path;
  QString host;  ///< "" for this computer
  double cost_per_hour = 0;
};

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QList<ComparedRun> runs, QWidget* parent = nullptr);
  ~CompareView() override;

  int runCount() const { return static_cast<int>(runs_.size()); }
  bool isLoading() const { return reader_.isRunning(); }
  widgets::ChartPanel& charts() { return *charts_; }
  widgets::TrainingChart& lossChart() { return *loss_; }
  widgets::TrainingChart& discriminatorChart() { return *d_; }
  widgets::TrainingChart& speedChart() { return *speed_; }
  widgets::TrainingChart& parzenChart() { return *parzen_; }
  /// SWD ×10³ over images seen, a series per run.
  widgets::TrainingChart& swdChart() { return *swd_; }
  /// FID, a series per run; only the points in fidSpace() are drawn.
  widgets::TrainingChart& fidChart() { return *fid_; }
  /// The feature space the FID chart is in ("" until a run has an FID).
  QString fidSpace() const { return fid_space_; }
  QTableWidget& table() { return *table_; }
  /// The config keys whose values differ between the runs, a row each.
  ConfigDifferenceTable& configDifferences() { return *config_table_; }
  /// Shows each run's sample grid nearest `images_seen` (the slider does this).
  void showSamplesAt(double images_seen);
  /// The grid shown for run `index` (null until decoded), and the path it came from.
  QImage shownSample(int index) const;
  QString shownSamplePath(int index) const;
  /// The table as CSV (a header, one row per run).
  QString tableCsv() const;
  bool saveImage(const QString& path);
  bool saveCsv(const QString& path);

signals:
  /// A read of the logs came back (the first: every run's history is on show).
  void updated();
  /// A sample grid was decoded and shown.
  void samplesShown();

private:
  struct Run;
  // The constructor's steps.
  void buildCharts();
  void addSeriesOf(Run& run);
  QWidget* buildSamples(const QList<ComparedRun>& runs);

  void poll();
  /// The histories read (nullopt: that log did not change since the last look).
  void apply(std::vector<std::optional<RunHistory>> histories);
  /// Draws a run's quality evaluations past those drawn.
  void drawMetrics(Run& run);
  void fillTable();
  void updateSlider();

  std::vector<std::unique_ptr<Run>> runs_;
  std::shared_ptr<std::vector<RunHistoryReader>> readers_;  // used by the worker only
  std::shared_ptr<std::vector<std::uint64_t>> offsets_;     // bytes of each log read so far
  QFutureWatcher<std::vector<std::optional<RunHistory>>> reader_;
  bool first_read_ = true;
  bool drawn_once_ = false;
  QTimer poll_timer_;
  widgets::ChartPanel* charts_ = nullptr;
  widgets::TrainingChart* loss_ = nullptr;
  widgets::TrainingChart* d_ = nullptr;
  widgets::TrainingChart* speed_ = nullptr;
  widgets::TrainingChart* parzen_ = nullptr;
  widgets::TrainingChart* swd_ = nullptr;
  widgets::TrainingChart* fid_ = nullptr;
  QString fid_space_;  // the feature space of the FID chart
  QSlider* slider_ = nullptr;
  QLabel* slider_label_ = nullptr;
  RunFiguresTable* table_ = nullptr;
  ConfigDifferenceTable* config_table_ = nullptr;
  double max_images_ = 0;
  int decoding_ = 0;
};

}  // namespace streetgan::studio
