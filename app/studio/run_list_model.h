#pragma once
// RunListModel: every run under the runs root, one row each (name, preset, host, device, state, epochs,
// images seen, last loss, best Parzen, the latest SWD ×10³, the quality alarms, last activity), for
// the Runs tab's table. refresh() lists
// the folder and reads each run's log on a worker thread; runs still going are then followed
// from where their log was read (poll(), a few times a second from the tab), so a run left
// running by an earlier studio shows its progress live. Unreadable folders are listed with why.
// A remote run is read from its local copy: its state is the last one received from its host
// (running until a run_finished arrives); opening it re-attaches and brings the copy up to date.
#include "core/runs/run_summary.h"

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <QString>

#include <memory>
#include <vector>

namespace streetgan::studio {

class RunListModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Name, Preset, Host, Device, State, Epochs, ImagesSeen, LastLoss, BestParzen, Swd, Alarms, LastActivity, ColumnCount };
  /// The run's folder, for any cell (Qt::UserRole).
  static constexpr int PathRole = Qt::UserRole;
  /// Sort key of a cell (numbers as numbers).
  static constexpr int SortRole = Qt::UserRole + 1;

  explicit RunListModel(QObject* parent = nullptr);
  ~RunListModel() override;

  void setRoot(const QString& root);
  QString root() const { return root_; }
  /// Lists the root again (off the GUI thread); refreshed() follows.
  void refresh();
  bool isRefreshing() const { return watcher_.isRunning(); }
  /// Reads what running runs appended to their logs since the last look.
  void poll();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  const RunSummary& summary(int row) const { return runs_[static_cast<std::size_t>(row)].summary; }
  /// The host a run trained on (a remote run's record), or "" for this computer.
  QString hostOf(int row) const { return runs_[static_cast<std::size_t>(row)].host; }
  /// The row of the run in `path`, or -1.
  int rowOf(const QString& path) const;
  int runningCount() const;

  struct Entry {
    std::shared_ptr<RunSummaryBuilder> builder;  // null for a folder that is not a readable run
    std::uint64_t offset = 0;                    // bytes of events.jsonl fed to the builder
    RunSummary summary;
    QString host;  // the host of a remote run (its local copy's record); empty: this computer
  };

signals:
  void refreshed();

private:
  QString root_;
  std::vector<Entry> runs_;
  QFutureWatcher<std::vector<Entry>> watcher_;
  bool again_ = false;
};

}  // namespace streetgan::studio
