#pragma once
// MainWindow: the studio's shell — tabs Train, Explore, Dataset, Evaluate and Runs, a status bar,
// Settings and About, keyboard shortcuts, and the window's size and layout remembered between
// starts. Closing with a run in progress asks whether to stop it or leave it running; on the next
// start the Runs tab finds such runs by their logs and follows them.
#include "app/studio/studio_settings.h"

#include <QMainWindow>
#include <QPointer>

class QIcon;
class QLabel;
class QTabWidget;

namespace streetgan::studio {

class CheckpointImportJob;
class CompareView;
class DatasetTab;
class EvaluateTab;
class ExploreTab;
class GeneratorExporter;
class RunsTab;
class TrainTab;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QString program, QWidget* parent = nullptr);
  ~MainWindow() override;

  TrainTab& trainTab() { return *train_tab_; }
  RunsTab& runsTab() { return *runs_tab_; }
  ExploreTab& exploreTab() { return *explore_tab_; }
  EvaluateTab& evaluateTab() { return *evaluate_tab_; }
  DatasetTab& datasetTab() { return *dataset_tab_; }
  /// Where the demo street scenes live: beside the runs folder.
  QString demoDataFolder() const;
  /// The main job (`--demo`): opens the demo run still going, or renders the demo data if needed
  /// and starts a run of the `demo` preset on it; Explore follows it, the Dataset tab shows its data.
  void startDemo();
  QTabWidget& tabs() { return *tabs_; }
  /// Opens a CompareView of these runs in a window of its own (Runs tab → Compare).
  void showComparison(const QStringList& run_dirs);
  /// StreetGAN Studio's icon (resources/studio.qrc), 16 to 256 px: the window's, and so the
  /// About box's.
  static QIcon applicationIcon();
  /// The comparison opened last (null when none, or closed).
  CompareView* lastComparison() const;
  /// File ▸ Import Checkpoint… without its file dialog: imports the original tool's checkpoint
  /// into a new run under the runs folder; once imported, the run is listed and Explore opens it.
  /// A failure is shown in a message box naming the file. importFinished() tells either way.
  void importCheckpoint(const QString& checkpoint);

signals:
  void importFinished(bool ok, const QString& run_dir_or_reason);

protected:
  void closeEvent(QCloseEvent* event) override;

private:
  // The constructor's steps.
  void buildTabs();
  void buildMenus();
  void restoreWindow();
  void connectTabs();

  void showSettings();
  /// The host profiles dialog (File → Hosts…); saved profiles go to the Train tab's Run on list.
  void showHosts();
  void showAbout();
  QString programAndRunsText() const;
  void chooseCheckpointToImport();

  QString program_;
  StudioSettings settings_;
  QTabWidget* tabs_ = nullptr;
  TrainTab* train_tab_ = nullptr;
  QPointer<CompareView> compare_;
  RunsTab* runs_tab_ = nullptr;
  ExploreTab* explore_tab_ = nullptr;
  EvaluateTab* evaluate_tab_ = nullptr;
  DatasetTab* dataset_tab_ = nullptr;
  QLabel* status_ = nullptr;
  CheckpointImportJob* import_job_ = nullptr;
  GeneratorExporter* generator_exporter_ = nullptr;
};

}  // namespace streetgan::studio
