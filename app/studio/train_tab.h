#pragma once
// TrainTab: configure a run, start, stop and resume it, and watch it learn. The config form
// covers every key (presets fill it); the run goes through a TrainingSession; its events feed the
// charts (losses; D(x) and D(G(z)) before and after D's step; images/s and the share of time
// waiting on data; Parzen mean ± standard error), the progress bar with ETA, the sample grids
// (a slider over every grid of the run) and the warnings list.
#include "config_form.h"
#include "training_chart.h"
#include "training_session.h"

#include <QImage>
#include <QStringList>
#include <QTemporaryFile>
#include <QTimer>
#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSlider;

namespace streetgan::studio {

class TrainTab : public QWidget {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable; runs go under `runs_root`.
  TrainTab(QString program, QString runs_root, QWidget* parent = nullptr);
  ~TrainTab() override;

  widgets::ConfigForm& form() { return *form_; }
  void setDataroot(const QString& path);
  void setRunsRoot(const QString& root) { runs_root_ = root; }
  /// Starts a run of the form's config; false with a message in statusText() when it cannot.
  bool startRun();
  void stopRun();
  /// Uses the procedural demo street scenes as the data set: renders them into `folder` with
  /// `streetgan demo-data` on first use (progress in the status line), then selects them.
  void useDemoData(const QString& folder);
  bool demoDataBusy() const { return demo_process_ != nullptr; }
  /// Continues the last run (or `run_dir`) from its latest checkpoint.
  bool resumeRun(const QString& run_dir = {});
  TrainingSession* session() { return session_.get(); }
  QString runDirectory() const { return run_dir_; }
  QString statusText() const;

  widgets::TrainingChart& lossChart() { return *loss_chart_; }
  widgets::TrainingChart& discriminatorChart() { return *d_chart_; }
  widgets::TrainingChart& speedChart() { return *speed_chart_; }
  widgets::TrainingChart& parzenChart() { return *parzen_chart_; }
  int sampleCount() const { return sample_paths_.size(); }
  int warningCount() const;

signals:
  /// The demo data set is ready (or failed, with `ok` false and the reason).
  void demoDataFinished(bool ok, const QString& message);
  void runFinished(streetgan::studio::SessionState state, const QString& message);

private:
  bool launch(const TrainingRequest& request);
  void onEvents(const std::vector<streetgan::StreamEvent>& events);
  void onFinished(SessionState state, const QString& message);
  void showSample(int index);
  void updateButtons();
  void clearRun();

  QString program_, runs_root_, run_dir_;
  std::unique_ptr<class ChildProcess> demo_process_;
  QByteArray demo_stderr_;
  std::unique_ptr<TrainingSession> session_;
  std::unique_ptr<QTemporaryFile> config_file_;
  widgets::ConfigForm* form_ = nullptr;
  QComboBox* preset_ = nullptr;
  QLineEdit* dataroot_ = nullptr;
  QPushButton* demo_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* resume_ = nullptr;
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
  QListWidget* warnings_ = nullptr;
  double started_time_ = 0, epochs_total_ = 0;
  QTimer chart_turns_;  // redraws one chart per tick, so no tick does them all
  int next_chart_ = 0;
  double last_progress_ = -1;
};

}  // namespace streetgan::studio
