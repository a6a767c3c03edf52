#include "app/studio/runs_tab.h"
#include "app/studio/control/remote_run_record.h"

#include <QDesktopServices>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

namespace streetgan::studio {

RunsTab::RunsTab(QString runs_root, QWidget* parent) : QWidget(parent) {
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(&model_);
  proxy_->setSortRole(RunListModel::SortRole);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);  // several runs: Compare
  table_->setSortingEnabled(true);
  table_->sortByColumn(RunListModel::LastActivity, Qt::DescendingOrder);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  count_ = new QLabel(this);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* refresh = new QPushButton("Refresh", this);
  refresh->setShortcut(QKeySequence::Refresh);
  refresh->setToolTip("List the runs folder again (F5)");
  open_ = new QPushButton("Open", this);
  open_->setToolTip("Show this run in the Train tab: its charts, samples and config (live if it is still running)");
  resume_ = new QPushButton("Resume", this);
  resume_->setToolTip("Continue this run from its latest checkpoint in the Train tab");
  duplicate_ = new QPushButton("Duplicate Config", this);
  duplicate_->setToolTip("Load this run's config into the Train tab's form, to start a new run from it");
  reveal_ = new QPushButton("Reveal Folder", this);
  reveal_->setToolTip("Open the run's folder in the file manager");
  compare_ = new QPushButton("Compare", this);
  compare_->setToolTip("Select two or more runs (Ctrl+click) to see their curves, sample grids, speed and cost "
                       "side by side");
  delete_ = new QPushButton("Delete…", this);
  delete_->setToolTip("Delete the run's folder (checkpoints, samples, log) after a confirmation");
  auto* buttons = new QHBoxLayout();
  for (QPushButton* button : {refresh, open_, resume_, duplicate_, compare_, reveal_, delete_}) buttons->addWidget(button);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(table_, 1);
  layout->addWidget(count_);
  layout->addWidget(message_);

  connect(refresh, &QPushButton::clicked, &model_, &RunListModel::refresh);
  connect(open_, &QPushButton::clicked, this, [this] { emit openRequested(selectedRun()); });
  connect(resume_, &QPushButton::clicked, this, [this] { emit resumeRequested(selectedRun()); });
  connect(duplicate_, &QPushButton::clicked, this, [this] { emit duplicateRequested(selectedRun()); });
  connect(reveal_, &QPushButton::clicked, this, [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(selectedRun())); });
  connect(delete_, &QPushButton::clicked, this, [this] { deleteSelected(); });
  connect(compare_, &QPushButton::clicked, this, [this] { emit compareRequested(selectedRuns()); });
  connect(table_, &QTableView::doubleClicked, this, [this] { emit openRequested(selectedRun()); });
  connect(table_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
    if (selectedRun().isEmpty()) return;
    QMenu menu(this);
    for (QPushButton* button : {open_, resume_, duplicate_, compare_, reveal_, delete_})
      if (button->isEnabled()) menu.addAction(button->text(), button, &QPushButton::click);
    menu.exec(table_->viewport()->mapToGlobal(at));
  });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsTab::updateButtons);
  connect(&model_, &RunListModel::refreshed, this, [this] {
    const int running = model_.runningCount();
    count_->setText(QString("%1 run%2 in %3").arg(model_.rowCount()).arg(model_.rowCount() == 1 ? "" : "s").arg(model_.root()) +
                      (running > 0 ? QString("; %1 running").arg(running) : QString()) + ".");
    table_->resizeColumnsToContents();
    updateButtons();
  });
  connect(&model_, &QAbstractItemModel::dataChanged, this, &RunsTab::updateButtons);
  follow_.setInterval(1000);
  connect(&follow_, &QTimer::timeout, &model_, &RunListModel::poll);
  follow_.start();
  model_.setRoot(std::move(runs_root));
  updateButtons();
}

void RunsTab::setRunsRoot(const QString& root) { model_.setRoot(root); }

void RunsTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  model_.refresh();  // runs started or finished elsewhere since the last look
}

QString RunsTab::messageText() const { return message_->text(); }

bool RunsTab::select(const QString& path) {
  const int row = model_.rowOf(path);
  if (row < 0) return false;
  const QModelIndex at = proxy_->mapFromSource(model_.index(row, 0));
  table_->selectionModel()->select(at, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->setCurrentIndex(at);
  return true;
}

QString RunsTab::selectedRun() const {
  const QStringList runs = selectedRuns();
  return runs.size() == 1 ? runs.first() : QString();
}

QStringList RunsTab::selectedRuns() const {
  QStringList runs;
  for (const QModelIndex& row : table_->selectionModel()->selectedRows()) runs << row.data(RunListModel::PathRole).toString();
  return runs;
}

bool RunsTab::selectRuns(const QStringList& paths) {
  table_->clearSelection();
  for (const QString& path : paths) {
    const int row = model_.rowOf(path);
    if (row < 0) return false;
    table_->selectionModel()->select(proxy_->mapFromSource(model_.index(row, 0)),
                                     QItemSelectionModel::Select | QItemSelectionModel::Rows);
  }
  return true;
}

void RunsTab::updateButtons() {
  compare_->setEnabled(selectedRuns().size() >= 2);
  const QString path = selectedRun();  // one run: what can be done to it
  const int row = model_.rowOf(path);
  const bool any = row >= 0;
  const RunState state = any ? model_.summary(row).state : RunState::NotStarted;
  open_->setEnabled(any);
  resume_->setEnabled(any && (state == RunState::Stopped || state == RunState::Failed || state == RunState::Completed) &&
                      !QDir(path + "/checkpoints").entryList({"*.pt"}, QDir::Files).isEmpty());
  duplicate_->setEnabled(any);
  reveal_->setEnabled(any);
  delete_->setEnabled(any && state != RunState::Running);
}

bool RunsTab::deleteSelected(bool confirmed) {
  const QString path = selectedRun();
  const int row = model_.rowOf(path);
  if (row < 0) return false;
  if (model_.summary(row).state == RunState::Running || (busy_ && busy_(path))) {
    message_->setText(path + " is in use by a running training process; stop it before deleting it.");
    return false;
  }
  const auto remote = RemoteRunRecord::read(path);
  if (!confirmed) {
    const QString what = remote ? "Its local copy " + path + " (fetched samples and checkpoints, the copy of the log) is removed. "
                                  "The run directory on " + remote->host.label() + " (" + remote->remote_run_dir + ") stays."
                                : "Its folder " + path + " (checkpoints, samples and event log) is removed for good.";
    const auto answer = QMessageBox::question(
        this, "Delete Run", "Delete the run " + QDir(path).dirName() + "?\n\n" + what,
        QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
    if (answer != QMessageBox::Yes) return false;
  }
  if (!QDir(path).removeRecursively()) {
    message_->setText("Could not delete everything in " + path + " (check its permissions); what is left stays listed.");
    model_.refresh();
    return false;
  }
  message_->setText(remote ? "Deleted the local copy " + path + "; the run stays on " + remote->host.label() + "."
                           : "Deleted " + path + ".");
  model_.refresh();
  return true;
}

}  // namespace streetgan::studio
