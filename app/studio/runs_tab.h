#pragma once
// RunsTab: the table of every run under the runs root (RunListModel), sortable, with what can be
// done to the selected run: Open it in the Train tab (charts rebuilt from its log, live when it
// is still going), Resume it, Duplicate its config into the Train tab's form for a new run,
// Reveal its folder, Delete it (after a confirmation; never a running run or the one the Train
// tab is busy with); with two or more selected, Compare them (CompareView). Runs still going are followed a few times a second.
#include "app/studio/run_list_model.h"

#include <QTimer>
#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace streetgan::studio {

class RunsTab : public QWidget {
  Q_OBJECT
public:
  explicit RunsTab(QString runs_root, QWidget* parent = nullptr);

  void setRunsRoot(const QString& root);
  RunListModel& model() { return model_; }
  QTableView& table() { return *table_; }
  /// Selects the row of the run in `path`; false when it is not listed.
  bool select(const QString& path);
  /// The selected run's folder (empty when none, or several).
  QString selectedRun() const;
  /// Every selected run's folder.
  QStringList selectedRuns() const;
  /// Selects the rows of these runs; false when one is not listed.
  bool selectRuns(const QStringList& paths);
  /// Says whether a run's folder may be deleted now (the Train tab's busy run may not).
  void setBusyCheck(std::function<bool(const QString& path)> busy) { busy_ = std::move(busy); }
  /// Deletes the selected run's folder; asks first unless `confirmed`. False (with the reason in
  /// messageText()) when it may not or could not.
  bool deleteSelected(bool confirmed = false);
  QString messageText() const;

signals:
  void openRequested(const QString& run_dir);
  void resumeRequested(const QString& run_dir);
  void duplicateRequested(const QString& run_dir);
  /// Compare was pressed with these runs selected (two or more).
  void compareRequested(const QStringList& run_dirs);

protected:
  void showEvent(QShowEvent* event) override;

private:
  void updateButtons();

  RunListModel model_;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* count_ = nullptr;
  QLabel* message_ = nullptr;
  QPushButton* open_ = nullptr;
  QPushButton* resume_ = nullptr;
  QPushButton* duplicate_ = nullptr;
  QPushButton* reveal_ = nullptr;
  QPushButton* delete_ = nullptr;
  QPushButton* compare_ = nullptr;
  QTimer follow_;
  std::function<bool(const QString&)> busy_;
};

}  // namespace streetgan::studio
