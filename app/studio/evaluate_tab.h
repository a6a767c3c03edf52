#pragma once
// EvaluateTab: Parzen-window log-likelihood of a run's generator, on its latest (or any one)
// checkpoint — σ chosen on the validation split, the cross-validation curve shown — or on every
// checkpoint at one σ — mean ± standard error over epochs. A ParzenJob runs `streetgan parzen
// --save` (progress, Cancel), so results land in the run's evaluations/ folder, where the Runs
// tab and this tab read them back. Beside it, real held-out images next to generated ones. A
// second page, the QualityPanel, runs and shows the quality metric suite for the same run and
// checkpoint choice.
#include "app/studio/control/parzen_job.h"

#include <QFutureWatcher>
#include <QImage>
#include <QWidget>

class QBoxLayout;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace streetgan {
struct ParzenEvaluation;
}  // namespace streetgan

namespace streetgan::widgets {
class SigmaCurveChart;
class TrainingChart;
}  // namespace streetgan::widgets

namespace streetgan::studio {

class QualityPanel;

/// Real and generated images side by side (a grid each), made on a worker.
struct ComparisonGrids {
  QImage real, generated;
};

class EvaluateTab : public QWidget {
  Q_OBJECT
public:
  EvaluateTab(QString program, QString runs_root, QWidget* parent = nullptr);
  ~EvaluateTab() override;

  void setRunsRoot(const QString& root);
  /// Selects `run_dir` and shows its saved results; false when it has no checkpoint.
  bool selectRun(const QString& run_dir);
  /// "latest", "every" or a checkpoint file name of the run.
  void setTarget(const QString& target);
  void setSizes(int samples, int valid, int test);
  /// Held-out folders instead of the run's held-out split (both or neither).
  void setHeldOutFolders(const QString& valid, const QString& test);
  /// Starts the estimate; false (reason in statusText()) when it cannot start.
  bool evaluate();
  void cancel();
  bool isRunning() const { return job_.isRunning(); }
  /// Real held-out images beside samples of the target checkpoint (worker; comparisonReady()).
  void compare();

  QString statusText() const;
  QString resultText() const;
  widgets::SigmaCurveChart& sigmaChart() { return *sigma_chart_; }
  widgets::TrainingChart& epochChart() { return *epoch_chart_; }
  QImage realGrid() const { return real_; }
  QImage generatedGrid() const { return generated_; }
  /// The page of the quality metrics, and the pages ("Parzen", "Quality metrics").
  QualityPanel& qualityPanel() { return *quality_; }
  QTabWidget& pages() { return *pages_; }

signals:
  /// An estimate ended: ok, or the message saying why not.
  void evaluated(bool ok, const QString& message);
  void comparisonReady(const QString& error);

protected:
  void showEvent(QShowEvent* event) override;

private:
  // The constructor's steps.
  QFormLayout* buildParzenForm();
  QBoxLayout* buildParzenResults();

  void listRuns();
  void listCheckpoints();
  void showSaved();
  void showResult(const ParzenEvaluation& result);
  QString targetCheckpoint() const;
  void onJobFinished(bool ok, const QString& message);

  QString runs_root_;
  QComboBox* runs_ = nullptr;
  QComboBox* target_ = nullptr;
  QSpinBox* samples_ = nullptr;
  QSpinBox* valid_ = nullptr;
  QSpinBox* test_ = nullptr;
  QLineEdit* valid_dir_ = nullptr;
  QLineEdit* test_dir_ = nullptr;
  QPushButton* evaluate_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* result_ = nullptr;
  widgets::SigmaCurveChart* sigma_chart_ = nullptr;
  widgets::TrainingChart* epoch_chart_ = nullptr;
  int epoch_mean_ = 0, epoch_low_ = 0, epoch_high_ = 0;
  QLabel* real_view_ = nullptr;
  QLabel* generated_view_ = nullptr;
  QImage real_, generated_;
  QualityPanel* quality_ = nullptr;
  QTabWidget* pages_ = nullptr;
  ParzenJob job_;
  QFutureWatcher<Result<ComparisonGrids>> comparison_;
};

}  // namespace streetgan::studio
