#include "app/studio/directions_panel.h"

#include "app/studio/control/status_text.h"
#include "core/latent/direction_file.h"
#include "core/runs/run_directory.h"
#include "widgets/worker_pool.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace streetgan::studio {

namespace {

constexpr int kTenths = 30;  // sliders from −3.0 to +3.0

QString rowTitle(const LatentDirection& d) {
  if (!d.name.empty()) return QString::fromStdString(d.name);
  switch (d.kind) {
    case LatentDirection::Kind::ClosedForm: return QString("SeFa %1").arg(d.rank);
    case LatentDirection::Kind::PrincipalComponent: return QString("PCA %1").arg(d.rank);
    case LatentDirection::Kind::Labelled: return "labelled";
  }
  return {};
}

QString strengthText(const LatentDirection& d) {
  switch (d.kind) {
    case LatentDirection::Kind::ClosedForm: return QString("eigenvalue %1").arg(d.strength, 0, 'g', 4);
    case LatentDirection::Kind::PrincipalComponent: return QString("%1% of variance").arg(100 * d.strength, 0, 'f', 1);
    case LatentDirection::Kind::Labelled:
      return QString("%1% held-out accuracy (%2)").arg(100 * d.strength, 0, 'f', 0).arg(d.held_out);
  }
  return {};
}

}  // namespace

DirectionsPanel::DirectionsPanel(QWidget* parent) : QWidget(parent) {
  method_ = new QComboBox(this);
  method_->addItem("Closed form (SeFa)", "sefa");
  method_->addItem("Principal components (PCA of 10,000 samples)", "pca");
  top_ = new QSpinBox(this);
  top_->setRange(1, 100);
  top_->setValue(20);
  top_->setPrefix("top ");
  find_ = new QPushButton("Find", this);
  cancel_ = new QPushButton("Cancel", this);
  cancel_->setEnabled(false);
  auto* find_row = new QHBoxLayout();
  find_row->addWidget(method_, 1);
  find_row->addWidget(top_);
  find_row->addWidget(find_);
  find_row->addWidget(cancel_);

  table_ = new QTableWidget(0, 3, this);
  table_->setHorizontalHeaderLabels({"Direction", "Strength", "Amount (−3 … +3)"});
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
  table_->setWordWrap(false);
  table_->verticalHeader()->setVisible(false);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);

  auto* reset = new QPushButton("Reset Amounts", this);
  auto* save = new QPushButton("Save…", this);
  save->setToolTip("Save the selected direction into the run (directions/NAME.json)");
  auto* walk = new QPushButton("Walk Along", this);
  walk->setToolTip("Keyframes from −3 to +3 times the selected direction, from the first sample's seed");
  auto* row_buttons = new QHBoxLayout();
  row_buttons->addWidget(reset);
  row_buttons->addStretch(1);
  row_buttons->addWidget(save);
  row_buttons->addWidget(walk);

  auto* labelled = new QGroupBox("Labelled direction", this);
  marks_ = new QLabel(labelled);
  conditional_ = new QCheckBox("Keep the directions in use fixed (conditional)", labelled);
  auto* fit = new QPushButton("Fit", labelled);
  auto* clear = new QPushButton("Clear Marks", labelled);
  auto* labelled_layout = new QVBoxLayout(labelled);
  auto* hint = new QLabel("Right-click samples: Mark: Has the Property / Lacks the Property (10 of each at least).", labelled);
  hint->setWordWrap(true);
  labelled_layout->addWidget(hint);
  auto* mark_row = new QHBoxLayout();
  mark_row->addWidget(marks_, 1);
  mark_row->addWidget(clear);
  mark_row->addWidget(fit);
  labelled_layout->addLayout(mark_row);
  labelled_layout->addWidget(conditional_);

  status_ = new QLabel(this);
  status_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(find_row);
  layout->addWidget(table_, 1);
  layout->addLayout(row_buttons);
  layout->addWidget(labelled);
  layout->addWidget(status_);
  clearMarks();
  setStatus("Open a checkpoint, then Find.");

  connect(find_, &QPushButton::clicked, this, &DirectionsPanel::find);
  connect(cancel_, &QPushButton::clicked, this, &DirectionsPanel::cancel);
  connect(reset, &QPushButton::clicked, this, &DirectionsPanel::resetAmounts);
  connect(fit, &QPushButton::clicked, this, &DirectionsPanel::fitLabelled);
  connect(clear, &QPushButton::clicked, this, &DirectionsPanel::clearMarks);
  connect(save, &QPushButton::clicked, this, [this] {
    const int row = table_->currentRow();
    if (row < 0) return setStatus("Select a direction to save.", true);
    bool ok = false;
    const QString name = QInputDialog::getText(this, "Save Direction", "Name (letters, digits, . _ -):",
                                               QLineEdit::Normal, rowTitle(rows_[std::size_t(row)]).replace(' ', '-'), &ok);
    if (ok) this->save(row, name);
  });
  connect(walk, &QPushButton::clicked, this, [this] {
    const int row = table_->currentRow();
    if (row < 0) return setStatus("Select a direction to walk along.", true);
    emit walkRequested(row);
  });
  connect(&watcher_, &QFutureWatcher<Result<std::vector<LatentDirection>>>::finished, this,
          &DirectionsPanel::showFound);
  auto* progress = new QTimer(this);
  progress->setInterval(200);
  connect(progress, &QTimer::timeout, this, [this] {
    if (watcher_.isRunning() && percent_) setStatus(QString("Finding directions … %1%").arg(percent_->load()));
  });
  progress->start();
}

DirectionsPanel::~DirectionsPanel() {
  cancel();
  watcher_.waitForFinished();
}

void DirectionsPanel::setExplorer(std::shared_ptr<LatentExplorer> explorer) {
  cancel();
  explorer_ = std::move(explorer);
  rows_.clear();
  amounts_.clear();
  clearMarks();
  if (explorer_) {
    std::vector<LatentDirection> saved;
    QStringList unreadable;
    const std::string run = runFolder().toStdString();
    if (!run.empty())
      for (const std::string& name : DirectionFile::list(run)) {
        auto d = DirectionFile::read(DirectionFile::pathIn(run, name), explorer_->nz());
        if (d) saved.push_back(std::move(*d));
        else unreadable << QString::fromStdString(name);
      }
    addRows(std::move(saved));
    if (!unreadable.isEmpty())
      setStatus(QString("%1 saved directions of this run; not read (damaged, or of another latent size): %2")
                    .arg(rows_.size()).arg(unreadable.join(", ")), true);
    else
      setStatus(rows_.empty() ? "Find the generator's strongest directions, or mark samples for a labelled one."
                              : QString("%1 saved directions of this run.").arg(rows_.size()));
  } else {
    rebuildTable();
    setStatus("Open a checkpoint, then Find.");
  }
  emit offsetChanged(offset());
}

void DirectionsPanel::setMethod(const QString& method) {
  const int index = method_->findData(method);
  if (index >= 0) method_->setCurrentIndex(index);
}

void DirectionsPanel::setTop(int top) { top_->setValue(top); }

void DirectionsPanel::find() {
  if (!explorer_) return setStatus("Open a checkpoint first.", true);
  if (isFinding()) return;
  const auto explorer = explorer_;
  const std::string method = method_->currentData().toString().toStdString();
  const int top = std::min(top_->value(), explorer_->nz());
  stop_ = std::make_shared<std::atomic<bool>>(false);
  percent_ = std::make_shared<std::atomic<int>>(0);
  const auto stop = stop_;
  const auto percent = percent_;
  finding_ = true;
  find_->setEnabled(false);
  cancel_->setEnabled(method == "pca");
  setStatus("Finding directions …");
  watcher_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [explorer, method, top, stop, percent] {
    try {
      return explorer->findDirections(method, top, 10000, 0, [&](double share) {
        percent->store(static_cast<int>(100 * share));
        return !stop->load();
      });
    } catch (const std::exception& e) {  // the worker's boundary
      return Result<std::vector<LatentDirection>>(
          makeError(std::string("directions: ") + e.what(), ErrorKind::Machine));
    }
  }));
}

void DirectionsPanel::cancel() {
  if (stop_) stop_->store(true);
}

void DirectionsPanel::showFound() {
  finding_ = false;
  find_->setEnabled(true);
  cancel_->setEnabled(false);
  Result<std::vector<LatentDirection>> found = watcher_.result();
  if (!found && found.error() == "directions: cancelled")
    return setStatus("Cancelled; the directions listed are kept.");
  if (!found) return setStatus(errorText(found), true);
  // The found rows replace earlier found ones; saved and labelled rows stay.
  std::vector<LatentDirection> kept;
  std::vector<int> kept_amounts;
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (!rows_[i].name.empty() || rows_[i].kind == LatentDirection::Kind::Labelled) {
      kept.push_back(rows_[i]);
      kept_amounts.push_back(amounts_[i]);
    }
  rows_ = std::move(kept);
  amounts_ = std::move(kept_amounts);
  const std::size_t count = found->size();
  addRows(std::move(*found));
  setStatus(QString("%1 directions found; move a slider to see what one changes.").arg(count));
  emit offsetChanged(offset());
}

void DirectionsPanel::addRows(std::vector<LatentDirection> rows) {
  for (auto& d : rows) {
    rows_.push_back(std::move(d));
    amounts_.push_back(0);
  }
  rebuildTable();
}

void DirectionsPanel::rebuildTable() {
  table_->setRowCount(static_cast<int>(rows_.size()));
  for (int row = 0; row < table_->rowCount(); ++row) {
    const LatentDirection& d = rows_[std::size_t(row)];
    table_->setItem(row, 0, new QTableWidgetItem(rowTitle(d)));
    table_->setItem(row, 1, new QTableWidgetItem(strengthText(d)));
    auto* slider = new QSlider(Qt::Horizontal, table_);
    slider->setRange(-kTenths, kTenths);
    slider->setValue(amounts_[std::size_t(row)]);
    slider->setToolTip("How far along this direction every sample moves (−3 to +3)");
    connect(slider, &QSlider::valueChanged, this, [this, row](int value) {
      if (row >= static_cast<int>(amounts_.size()) || amounts_[std::size_t(row)] == value) return;
      amounts_[std::size_t(row)] = value;
      emit offsetChanged(offset());
    });
    table_->setCellWidget(row, 2, slider);
  }
}

double DirectionsPanel::amount(int row) const { return amounts_.at(std::size_t(row)) / 10.0; }

void DirectionsPanel::setAmount(int row, double amount) {
  if (row < 0 || row >= rowCount()) return;
  const int tenths = std::clamp(static_cast<int>(std::lround(amount * 10)), -kTenths, kTenths);
  if (auto* slider = qobject_cast<QSlider*>(table_->cellWidget(row, 2))) slider->setValue(tenths);
}

void DirectionsPanel::resetAmounts() {
  for (int row = 0; row < rowCount(); ++row) setAmount(row, 0);
}

Latent DirectionsPanel::offset() const {
  if (!explorer_) return {};
  Latent out(static_cast<std::size_t>(explorer_->nz()), 0.0f);
  bool any = false;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (amounts_[i] == 0 || rows_[i].vector.size() != out.size()) continue;
    any = true;
    for (std::size_t j = 0; j < out.size(); ++j) out[j] += static_cast<float>(amounts_[i] / 10.0) * rows_[i].vector[j];
  }
  return any ? out : Latent{};
}

void DirectionsPanel::mark(const Latent& latent, bool has) {
  (has ? has_ : lacks_).push_back(latent);
  marks_->setText(QString("Marked: %1 have the property, %2 lack it").arg(has_.size()).arg(lacks_.size()));
}

void DirectionsPanel::clearMarks() {
  has_.clear();
  lacks_.clear();
  marks_->setText("Marked: 0 have the property, 0 lack it");
}

void DirectionsPanel::setConditional(bool on) { conditional_->setChecked(on); }

bool DirectionsPanel::fitLabelled() {
  if (!explorer_) {
    setStatus("Open a checkpoint first.", true);
    return false;
  }
  auto fitted = explorer_->labelledDirection(has_, lacks_);
  if (!fitted) {
    setStatus(QString::fromStdString(fitted.error()), true);
    return false;
  }
  if (conditional_->isChecked()) {
    std::vector<Latent> others;
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (amounts_[i] != 0) others.push_back(rows_[i].vector);
    auto kept = LatentExplorer::conditional(fitted->vector, others);
    if (!kept) {
      setStatus(QString::fromStdString(kept.error()), true);
      return false;
    }
    fitted->vector = *kept;
  }
  addRows({*fitted});
  setStatus(QString("Labelled direction: %1% accuracy on %2 held-out samples.")
                .arg(100 * fitted->strength, 0, 'f', 0)
                .arg(fitted->held_out));
  return true;
}

QString DirectionsPanel::runFolder() const {
  if (!explorer_) return {};
  const auto run = RunDirectory::ofCheckpoint(explorer_->checkpointPath());
  if (!run) return {};
  return QDir(QString::fromStdString(run->path())).absolutePath();
}

bool DirectionsPanel::save(int row, const QString& name) {
  if (row < 0 || row >= rowCount()) {
    setStatus("Select a direction to save.", true);
    return false;
  }
  const QString run = runFolder();
  if (run.isEmpty()) {
    setStatus("This checkpoint is not in a run's checkpoints/ folder: there is no run to save into.", true);
    return false;
  }
  if (Status s = DirectionFile::checkName(name.toStdString()); !s) {
    setStatus(QString::fromStdString(s.error()), true);
    return false;
  }
  const std::string path = DirectionFile::pathIn(run.toStdString(), name.toStdString());
  if (QFileInfo::exists(QString::fromStdString(path))) {
    setStatus(QString::fromStdString(path) + " already exists: choose another name.", true);
    return false;
  }
  LatentDirection d = rows_[std::size_t(row)];
  d.name = name.toStdString();
  if (Status s = DirectionFile::write(path, d); !s) {
    setStatus(QString::fromStdString(s.error()), true);
    return false;
  }
  rows_[std::size_t(row)].name = d.name;
  table_->item(row, 0)->setText(name);
  setStatus("Saved " + QString::fromStdString(path));
  return true;
}

std::vector<Latent> DirectionsPanel::walkAlong(int row, quint64 seed) const {
  if (!explorer_ || row < 0 || row >= rowCount()) return {};
  const Latent start = explorer_->latentOfSeed(seed);
  const Latent& d = rows_[std::size_t(row)].vector;
  if (d.size() != start.size()) return {};
  std::vector<Latent> keys(2, start);
  for (std::size_t j = 0; j < start.size(); ++j) {
    keys[0][j] -= 3.0f * d[j];
    keys[1][j] += 3.0f * d[j];
  }
  return keys;
}

QString DirectionsPanel::statusText() const { return status_->text(); }

void DirectionsPanel::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? "color: #b00020;" : QString());
}

}  // namespace streetgan::studio
