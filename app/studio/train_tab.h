#pragma once
// TrainTab: configure a run, start, stop and resume it, and watch it learn. Left: the preset, the
// data set (DatasetPicker: live counts after the filters) and the config form over every key.
// Right: the RunDashboard. A run goes through a TrainingSession that the RunLauncher makes and
// starts: a new or resumed one as a local process reading its stdout; a run opened from the Runs
// tab through its events.jsonl, live when its process is still going; a run on a host over SSH.
// The tab only asks the launcher and shows what the session says; DemoDataJob renders the demo
// data set.
#include "app/studio/control/cache_build_job.h"
#include "app/studio/control/demo_data_job.h"
#include "app/studio/control/host_profile.h"
#include "app/studio/control/run_launcher.h"
#include "app/studio/control/training_session.h"
#include "app/studio/run_dashboard.h"
#include "widgets/config_form.h"

#include <QTemporaryFile>
#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QToolButton;
class QPushButton;

namespace streetgan::widgets {
class DatasetPicker;
}  // namespace streetgan::widgets

namespace streetgan::studio {

class TrainTab : public QWidget {
  Q_OBJECT
public:
  /// `program`: the `streetgan` executable; runs go under `runs_root`.
  TrainTab(QString program, QString runs_root, QWidget* parent = nullptr);
  ~TrainTab() override;

  widgets::ConfigForm& form() { return *form_; }
  RunDashboard& dashboard() { return *dashboard_; }
  widgets::DatasetPicker& datasetPicker() { return *picker_; }
  void setDataroot(const QString& path);
  void setRunsRoot(const QString& root) { runs_root_ = root; }
  /// Device, CPU threads and processes for new and resumed runs on this computer (`--device`,
  /// `--threads`, `--nproc` above 1); empty / 0 leave the config's. A run on a host uses its
  /// profile's (HostProfile::deviceArguments).
  void setRunDefaults(const QString& device, int threads, int processes = 1);
  /// Starts a run of the form's config; false with a message in statusText() when it cannot.
  bool startRun();
  void stopRun();
  /// Uses the procedural demo street scenes as the data set: renders them into `folder` with
  /// `streetgan demo-data` on first use (progress in the progress bar), then selects them.
  void useDemoData(const QString& folder);
  bool demoDataBusy() const { return demo_job_.isRunning(); }
  /// Selects the `demo` preset, renders the demo data into `folder` if needed, then starts a run.
  void startDemo(const QString& folder);
  /// Builds a cache of the form's data set (`streetgan cache build`, progress on the dashboard)
  /// and sets data.cache to it, so the next run reads from it.
  void buildCache();
  /// Continues the run shown (or `run_dir`) from its latest checkpoint, its history kept on the
  /// charts (read from its log first when it is not the run shown).
  bool resumeRun(const QString& run_dir = {});
  /// Shows a run from its run directory: its config in the form, its charts rebuilt from
  /// events.jsonl, and, while its process is still going, its new events as they come (Stop
  /// works on it). False (with the reason in statusText()) while another run is in progress here.
  bool openRun(const QString& run_dir);
  /// Loads a run's config.json into the form (its preset selected), to start a new run from it.
  /// False (with the reason in statusText()) when it cannot be read.
  bool loadConfigOf(const QString& run_dir);
  TrainingSession* session() { return launcher_.session(); }
  /// The hosts new runs can train on besides this computer (the "Run on" list).
  void setHostProfiles(const QList<HostProfile>& hosts);
  /// Chooses where new runs train: "This computer" or a host profile's label; false when unknown.
  bool setRunOn(const QString& label);
  /// The host new runs train on, or nothing for this computer.
  std::optional<HostProfile> runOnHost() const;
  /// With a host in "Run on": more hosts new runs also train on, one node each ("Also on"; the
  /// host in "Run on" is node 0, where the run's files are). False when a label is unknown or is
  /// the "Run on" host.
  bool setAlsoOn(const QStringList& labels);
  /// The hosts checked in "Also on" (none while "Run on" is this computer).
  QList<HostProfile> alsoOnHosts() const;
  /// The shared-connection folder for remote runs (empty: the default), for tests.
  void setSshControlDir(const QString& dir) { launcher_.setSshControlDir(dir); }
  /// For a remote run shown: fetches its latest checkpoint into the local copy (for the Explore
  /// tab), with progress in the status; false with the reason in statusText() when it cannot.
  bool fetchLatestCheckpoint();
  QString runDirectory() const { return run_dir_; }
  QString statusText() const;

signals:
  /// The demo data set is ready (or failed, with `ok` false and the reason).
  void demoDataFinished(bool ok, const QString& message);
  void runFinished(streetgan::studio::SessionState state, const QString& message);
  /// A run was started here (its folder now exists).
  void runStarted(const QString& run_dir);
  /// The Hosts… button was pressed: the window shows the host profiles.
  void hostsRequested();
  /// A remote run's checkpoint arrived in its local copy.
  void checkpointFetched(const QString& path);

private:
  // The constructor's steps.
  QWidget* buildSettingsPane();
  void connectSettings();

  bool launch(const TrainingRequest& request, bool keep_history);
  void onDemoDataFinished(bool ok, const QString& folder_or_reason);
  QString cacheFileFor(const TrainConfig& config) const;
  void connectSession();
  void onFinished(SessionState state, const QString& message);
  void connectLauncher();
  void onFileFetched(const QString& relative, const QString& path);
  bool runActive() const { return launcher_.session() && launcher_.session()->isActive(); }
  void updateButtons();

  QString runs_root_, run_dir_;
  DemoDataJob demo_job_;
  CacheBuildJob cache_job_;
  RunLauncher launcher_;
  bool following_ = false;        // the session reads a run's log (opened), not a process we started
  QString resume_after_opening_;  // resume this run once its log has been read
  std::unique_ptr<QTemporaryFile> cache_config_;
  widgets::ConfigForm* form_ = nullptr;
  QComboBox* preset_ = nullptr;
  widgets::DatasetPicker* picker_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* resume_ = nullptr;
  QPushButton* fetch_checkpoint_ = nullptr;
  QComboBox* run_on_ = nullptr;
  QToolButton* also_on_ = nullptr;
  QList<HostProfile> hosts_;
  void rebuildAlsoOn();
  RunDashboard* dashboard_ = nullptr;
};

}  // namespace streetgan::studio
