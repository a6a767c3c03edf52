#pragma once
// ExploreTab: explore a trained generator. Open a checkpoint — the latest of a run (optionally
// following it: a new checkpoint of a running run is loaded as it lands) or any file — on a
// worker thread. Then: a page of samples by seed (SeedGrid); keyframes picked from them or from
// latent arithmetic (KeyframeStrip, LatentArithmeticPanel); semantic directions that move the
// whole page (DirectionsPanel); a look inside the generator for one sample (GeneratorInsidePanel); the walk through the keyframes, previewed live (WalkPreview),
// saved or loaded as a walk file, and exported (ExportWalkDialog).
#include "core/latent/latent_explorer.h"

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QTabWidget;

namespace streetgan::widgets {
class KeyframeStrip;
class SeedGrid;
}  // namespace streetgan::widgets

namespace streetgan::studio {

class DirectionsPanel;
class ExportWalkDialog;
class GeneratorInsidePanel;
class GeneratorSwitch;
class ProjectionDialog;
class LatentArithmeticPanel;
class WalkPreview;

class ExploreTab : public QWidget {
  Q_OBJECT
public:
  explicit ExploreTab(QString runs_root, QWidget* parent = nullptr);
  ~ExploreTab() override;

  void setRunsRoot(const QString& root);
  /// The device checkpoints are opened on ("auto", "cpu", "cuda", "cuda:N"; default auto).
  void setDevice(const QString& device) { device_ = device.isEmpty() ? QString("auto") : device; }
  /// Opens a checkpoint file (stops following a run).
  void openCheckpoint(const QString& path);
  /// Opens the latest checkpoint of `run_dir`; with `follow`, newer ones as they land.
  void openRun(const QString& run_dir, bool follow);
  bool isLoading() const { return loader_.isRunning(); }
  /// True while it follows a run's checkpoints (or waits for its first).
  bool isFollowing() const { return !follow_run_.isEmpty(); }
  /// BatchNorm with each render's batch statistics (train mode) instead of the running ones.
  void setBatchStatistics(bool on);
  bool batchStatistics() const;
  std::shared_ptr<LatentExplorer> explorer() const { return explorer_; }
  QString statusText() const;

  widgets::SeedGrid& seedGrid() { return *seeds_; }
  widgets::KeyframeStrip& keyframes() { return *strip_; }
  WalkPreview& preview() { return *preview_; }
  LatentArithmeticPanel& arithmetic() { return *arithmetic_; }
  DirectionsPanel& directions() { return *directions_; }
  GeneratorInsidePanel& inside() { return *inside_; }
  /// Replaces the keyframes with a walk along direction row `row` of the Directions panel, from
  /// the page's first seed (its two ends rendered on a worker).
  void walkAlongDirection(int row);

  /// "Find in Latent Space…": a dialog (deleted when closed) that projects `photo` into the open
  /// generator on a worker and can add the latent as a keyframe; it starts at once. Null, with
  /// the reason in the status, when no checkpoint is open.
  ProjectionDialog* findInLatentSpace(const QString& photo);

  /// Saves the keyframes and walk settings as a walk file; false with the reason in statusText().
  bool saveWalk(const QString& path);
  /// Loads a walk file's keyframes (rendered for the strip) and settings.
  bool loadWalk(const QString& path);
  /// A dialog to export the walk being previewed (null without a checkpoint or keyframes).
  std::unique_ptr<ExportWalkDialog> makeExportDialog();

signals:
  /// A checkpoint was opened (ok) or could not be (the message says why).
  void checkpointOpened(bool ok, const QString& message);

protected:
  void showEvent(QShowEvent* event) override;

private:
  // The constructor's parts, in the order it calls them: each makes its widgets and connects them.
  QHBoxLayout* buildOpenBar();
  QTabWidget* buildLatentPickers();
  QWidget* buildWalkPanel();
  /// The worker's result: the views get the opened generator, or the status says why not.
  void showOpenedCheckpoint();
  void listRuns();
  void load(const QString& path);
  void checkForNewerCheckpoint();
  void setStatus(const QString& text, bool error = false);

  QString runs_root_, device_ = "auto";
  QString follow_run_;          // the run whose checkpoints are followed ("" when none)
  QString loading_path_, pending_path_;
  std::shared_ptr<LatentExplorer> explorer_;
  QComboBox* runs_ = nullptr;
  QCheckBox* follow_ = nullptr;
  QComboBox* batch_norm_ = nullptr;
  GeneratorSwitch* generator_ = nullptr;
  QLabel* status_ = nullptr;
  widgets::SeedGrid* seeds_ = nullptr;
  widgets::KeyframeStrip* strip_ = nullptr;
  WalkPreview* preview_ = nullptr;
  LatentArithmeticPanel* arithmetic_ = nullptr;
  DirectionsPanel* directions_ = nullptr;
  GeneratorInsidePanel* inside_ = nullptr;
  QFutureWatcher<Result<std::shared_ptr<LatentExplorer>>> loader_;  // a checkpoint opened on a worker, or why not
  QTimer follow_timer_;
};

}  // namespace streetgan::studio
