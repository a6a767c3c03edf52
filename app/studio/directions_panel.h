#pragma once
// DirectionsPanel: what the generator has learned, as directions in its latent space
// (docs/explore.md). Find the strongest by SeFa's closed form (instant) or by GANSpace's principal
// components (on a worker, with progress and Cancel); fit a labelled one (InterFaceGAN) from
// samples marked "has" / "lacks" in the seed grid, optionally keeping the other directions in use
// fixed (conditional editing); the run's saved directions are listed too. Each row has a slider
// (−3 to +3 times the direction: a latent's projection on a unit direction has a standard
// deviation of 1) and the sliders together move the whole page of samples (offsetChanged). A row
// can be saved into the run (<run>/directions/NAME.json) or become a walk from −3 to +3.
#include "core/latent/latent_explorer.h"

#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace streetgan::studio {

class DirectionsPanel : public QWidget {
  Q_OBJECT
public:
  explicit DirectionsPanel(QWidget* parent = nullptr);
  ~DirectionsPanel() override;

  /// The generator to work on (null: none); lists its run's saved directions.
  void setExplorer(std::shared_ptr<LatentExplorer> explorer);
  /// "sefa" or "pca".
  void setMethod(const QString& method);
  void setTop(int top);
  /// Finds the strongest directions on a worker; they replace the found rows (saved ones stay).
  void find();
  void cancel();
  /// From find() until its result is shown (also while the finished worker's result waits).
  bool isFinding() const { return finding_; }

  int rowCount() const { return static_cast<int>(rows_.size()); }
  const LatentDirection& direction(int row) const { return rows_.at(static_cast<std::size_t>(row)); }
  double amount(int row) const;
  /// Moves row `row`'s slider to `amount` (−3 to 3, steps of 0.1).
  void setAmount(int row, double amount);
  void resetAmounts();
  /// Σ amount × direction over the rows (empty when every amount is 0).
  Latent offset() const;

  /// A marked sample's latent, for the labelled direction.
  void mark(const Latent& latent, bool has);
  int markCount(bool has) const { return static_cast<int>((has ? has_ : lacks_).size()); }
  void clearMarks();
  /// Fits the labelled direction (≥ 10 marks each); with "keep the others fixed" checked, the
  /// rows with a non-zero amount are projected out. false with the reason in statusText().
  bool fitLabelled();
  void setConditional(bool on);

  /// Saves row `row` as <run>/directions/<name>.json; false with the reason in statusText().
  bool save(int row, const QString& name);
  /// The keyframes of a walk along row `row` from `seed`'s latent: −3 and +3 times the direction.
  std::vector<Latent> walkAlong(int row, quint64 seed) const;
  /// The run folder the explorer's checkpoint is in ("" when it is not in one).
  QString runFolder() const;
  QString statusText() const;

signals:
  void offsetChanged(const streetgan::Latent& offset);
  /// Walk along row `row` (the Walk Along button): the tab makes its keyframes (walkAlong()).
  void walkRequested(int row);

private:
  void showFound();
  void rebuildTable();
  void setStatus(const QString& text, bool error = false);
  void addRows(std::vector<LatentDirection> rows);

  std::shared_ptr<LatentExplorer> explorer_;
  std::vector<LatentDirection> rows_;
  std::vector<int> amounts_;  // per row, in tenths
  std::vector<Latent> has_, lacks_;
  QComboBox* method_ = nullptr;
  QSpinBox* top_ = nullptr;
  QPushButton* find_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* marks_ = nullptr;
  QCheckBox* conditional_ = nullptr;
  QLabel* status_ = nullptr;
  QFutureWatcher<Result<std::vector<LatentDirection>>> watcher_;  // directions found on a worker, or why not
  std::shared_ptr<std::atomic<bool>> stop_;
  std::shared_ptr<std::atomic<int>> percent_;
  bool finding_ = false;
};

}  // namespace streetgan::studio
