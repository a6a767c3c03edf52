#include "app/studio/run_list_model.h"
#include "app/studio/control/remote_run_record.h"
#include "core/runs/run_directory.h"
#include "widgets/worker_pool.h"

#include <QColor>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QLocale>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>
#include <filesystem>

namespace streetgan::studio {

namespace {

// Reads the appended part of a run's log into its builder.
void readOn(RunListModel::Entry& entry) {
  const std::string events = RunDirectory(entry.summary.path).eventsPath();
  std::error_code error;
  const bool present = std::filesystem::exists(std::filesystem::symlink_status(events, error));
  const Status read = present ? feedEventLog(*entry.builder, events, entry.offset) : Status{};
  // A remote run's pid is on its host: until its copy says it finished, it is taken as running.
  const bool alive = read && !entry.builder->finished() &&
                     (!entry.host.isEmpty() ||
                      trainingProcessAlive(entry.builder->pid(), "streetgan", entry.builder->pidStartTime()));
  entry.summary = entry.builder->summary(alive);
  if (!read) entry.summary.message = read.error();  // the row says what is wrong with the run
}

std::vector<RunListModel::Entry> listRuns(const QString& root) {
  std::vector<RunListModel::Entry> runs;
  const QFileInfoList folders = QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
  for (const QFileInfo& folder : folders) {
    const QString path = folder.absoluteFilePath();
    if (!RunDirectory::isRun(path.toStdString())) continue;
    RunListModel::Entry entry;
    entry.builder = std::make_shared<RunSummaryBuilder>(path.toStdString());
    entry.builder->readConfig();
    entry.builder->readEvaluations();
    entry.summary.path = path.toStdString();
    if (const auto record = RemoteRunRecord::read(path)) entry.host = record->host.label();
    readOn(entry);
    runs.push_back(std::move(entry));
  }
  return runs;
}

QString lossText(const RunSummary& s) {
  if (!s.loss_d || !s.loss_g) return QString();
  return QString("D %1, G %2").arg(*s.loss_d, 0, 'f', 3).arg(*s.loss_g, 0, 'f', 3);
}

}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {
  connect(&watcher_, &QFutureWatcher<std::vector<Entry>>::finished, this, [this] {
    if (std::exchange(again_, false)) {
      refresh();
      return;
    }
    beginResetModel();
    runs_ = watcher_.result();
    endResetModel();
    emit refreshed();
  });
}

RunListModel::~RunListModel() { watcher_.waitForFinished(); }

void RunListModel::setRoot(const QString& root) {
  if (root == root_) return;
  root_ = root;
  beginResetModel();
  runs_.clear();
  endResetModel();
  refresh();
}

void RunListModel::refresh() {
  if (watcher_.isRunning()) {
    again_ = true;
    return;
  }
  watcher_.setFuture(QtConcurrent::run(widgets::studioWorkers(), &listRuns, root_));
}

void RunListModel::poll() {
  if (watcher_.isRunning()) return;
  for (std::size_t row = 0; row < runs_.size(); ++row) {
    Entry& entry = runs_[row];
    if (!entry.builder || entry.summary.state != RunState::Running) continue;
    readOn(entry);
    emit dataChanged(index(static_cast<int>(row), 0), index(static_cast<int>(row), ColumnCount - 1));
  }
}

int RunListModel::rowOf(const QString& path) const {
  for (std::size_t row = 0; row < runs_.size(); ++row)
    if (QString::fromStdString(runs_[row].summary.path) == path) return static_cast<int>(row);
  return -1;
}

int RunListModel::runningCount() const {
  int running = 0;
  for (const Entry& entry : runs_) running += entry.summary.state == RunState::Running;
  return running;
}

int RunListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Name",        "Preset",    "Host",        "Device",   "State",  "Epochs",
                                "Images seen", "Last loss", "Best Parzen", "SWD ×10³", "Alarms", "Last activity"};
  return section >= 0 && section < ColumnCount ? QString(names[section]) : QVariant();
}

QVariant RunListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Entry& entry = runs_[static_cast<std::size_t>(index.row())];
  const RunSummary& s = entry.summary;
  if (role == PathRole) return QString::fromStdString(s.path);
  const QLocale locale;
  if (role == SortRole) {
    switch (index.column()) {
      case Epochs: return qlonglong(s.epoch);
      case ImagesSeen: return qlonglong(s.images_seen);
      case LastLoss: return s.loss_d ? QVariant(*s.loss_d) : QVariant(-1e300);
      case BestParzen: return s.best_parzen ? QVariant(*s.best_parzen) : QVariant(-1e300);
      case Swd: return s.swd ? QVariant(*s.swd) : QVariant(1e300);
      case Alarms: return qlonglong(s.alarms);
      case LastActivity: return s.last_event_time;
      default: return data(index, Qt::DisplayRole);
    }
  }
  if (role == Qt::ToolTipRole && index.column() == Alarms && s.alarms > 0)
    return QString::fromStdString(s.last_alarm);
  if (role == Qt::ToolTipRole && index.column() == Swd && (s.swd || s.copy_rate)) {
    QString tip = "SWD ×10³ of the newest quality evaluation (a metrics event, else evaluations/metrics-*.json)";
    if (s.copy_rate) tip += QString("\nCopy rate %1%").arg(100 * *s.copy_rate, 0, 'f', 1);
    return tip;
  }
  if (role == Qt::ToolTipRole) {
    QString tip = QString::fromStdString(s.path);
    if (!entry.host.isEmpty()) tip += "\nTrains on " + entry.host + "; its state is the last one received (Open re-attaches)";
    if (!s.message.empty()) tip += "\n" + QString::fromStdString(s.message);
    if (s.malformed_lines > 0) tip += QString("\n%1 malformed lines in events.jsonl were skipped").arg(s.malformed_lines);
    return tip;
  }
  if (role == Qt::ForegroundRole && index.column() == State && s.state == RunState::Failed) return QColor(192, 57, 43);
  if (role == Qt::ForegroundRole && index.column() == Alarms && s.alarms > 0) return QColor(211, 84, 0);
  if (role == Qt::TextAlignmentRole && index.column() >= Epochs && index.column() <= Alarms)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name: return QString::fromStdString(s.name);
    case Preset: return QString::fromStdString(s.preset);
    case Host: return entry.host.isEmpty() ? QString("this computer") : entry.host;
    case Device:
      // A distributed run: its ranks and their backend ("cpu × 2 ranks, gloo"), on several
      // hosts with each host's ranks ("cpu, 2 hosts × 2 ranks, gloo").
      if (s.world_size > 1 && s.nodes > 1)
        return QString("%1, %2 hosts × %3 %4, %5")
            .arg(QString::fromStdString(s.device))
            .arg(s.nodes)
            .arg(s.world_size / s.nodes)
            .arg(s.world_size / s.nodes == 1 ? "rank" : "ranks")
            .arg(QString::fromStdString(s.backend));
      return s.world_size > 1 ? QString("%1 × %2 ranks, %3")
                                    .arg(QString::fromStdString(s.device))
                                    .arg(s.world_size)
                                    .arg(QString::fromStdString(s.backend))
                              : QString::fromStdString(s.device);
    case State: return QString(runStateName(s.state));
    case Epochs: return s.epochs > 0 ? QString("%1 / %2").arg(s.epoch).arg(s.epochs) : QString::number(s.epoch);
    case ImagesSeen: return locale.toString(qlonglong(s.images_seen));
    case LastLoss: return lossText(s);
    case BestParzen:
      return s.best_parzen ? QString("%1 (epoch %2)").arg(*s.best_parzen, 0, 'f', 1).arg(s.best_parzen_epoch.value_or(0)) : QString();
    case Swd: return s.swd ? QString::number(*s.swd, 'f', 2) : QString();
    case Alarms: return s.alarms > 0 ? QString::number(s.alarms) : QString();
    case LastActivity:
      return s.last_event_time > 0
                 ? QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(s.last_event_time * 1000)).toString("yyyy-MM-dd HH:mm")
                 : QString();
  }
  return {};
}

}  // namespace streetgan::studio
