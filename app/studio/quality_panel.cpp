#include "app/studio/quality_panel.h"

#include "app/studio/control/run_checkpoints.h"
#include "app/studio/nearest_images_dialog.h"
#include "widgets/chart_panel.h"
#include "widgets/job_form.h"
#include "widgets/training_chart.h"
#include "widgets/worker_pool.h"

#include <QCheckBox>
#include <QColor>
#include <QDir>
#include <QFileInfo>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

namespace streetgan::studio {

namespace {

namespace figure = quality_figure;

// The metrics `streetgan metrics --only` takes, with what the check box says.
const std::pair<const char*, const char*> kMetrics[] = {
    {"swd", "Sliced Wasserstein distance"}, {"msssim", "MS-SSIM diversity"}, {"ndb", "NDB/JSD"}, {"fid", "FID"},
    {"kid", "KID"}, {"prdc", "Precision/recall/density/coverage"}, {"memorisation", "Memorisation (copy rate)"}};

// The curves of the charts: SWD and FID on one, the figures on a 0–1 scale on the other.
struct CurveSpec {
  const char* figure;
  const char* name;
  QColor color;
};
const CurveSpec kDistanceCurves[] = {{figure::kSwd, "SWD ×10³", QColor(31, 119, 180)}, {figure::kFid, "FID", QColor(255, 127, 14)}};
const CurveSpec kUnitCurves[] = {
    {figure::kPrecision, "precision", QColor(31, 119, 180)},       {figure::kRecall, "recall", QColor(255, 127, 14)},
    {figure::kDensity, "density", QColor(44, 160, 44)},            {figure::kCoverage, "coverage", QColor(214, 39, 40)},
    {figure::kMsSsimSamples, "MS-SSIM of samples", QColor(148, 103, 189)},
    {figure::kMsSsimTrain, "MS-SSIM of training images", QColor(148, 103, 189, 110)},
    {figure::kNdbFraction, "NDB share of bins", QColor(140, 86, 75)}, {figure::kCopyRate, "copy rate", QColor(127, 127, 127)}};

}  // namespace

QualityPanel::QualityPanel(QString program, QWidget* parent) : QWidget(parent), job_(std::move(program)) {
  samples_ = widgets::newCountSpinBox(2, 10000, this);
  train_ = widgets::newCountSpinBox(2, 10000, this);
  auto* metric_boxes = new QGridLayout();
  for (const auto& [name, text] : kMetrics) {
    auto* box = new QCheckBox(text, this);
    box->setChecked(true);
    box->setProperty("metric", QString(name));
    metric_boxes->addWidget(box, static_cast<int>(metrics_.size()) / 2, static_cast<int>(metrics_.size()) % 2);
    metrics_.push_back(box);
  }
  evaluate_ = new QPushButton("Evaluate", this);
  cancel_ = new QPushButton("Cancel", this);
  cancel_->setEnabled(false);
  nearest_button_ = new QPushButton("Show nearest training images…", this);
  nearest_button_->setToolTip("Samples of the checkpoint (seeds 0–7), each beside its 3 nearest training photographs");
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  status_ = new QLabel("Choose a run, then Evaluate.", this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* form = new QFormLayout();
  form->addRow("Generated samples", samples_);
  form->addRow("Training images", train_);
  form->addRow("Metrics", metric_boxes);
  widgets::addJobRows(form, evaluate_, cancel_, progress_, status_);
  form->addRow(nearest_button_);

  table_ = new QualityTable(this);
  details_ = new QLabel(this);
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* save_csv = new QPushButton("Save table as CSV…", this);
  auto* save_png = new QPushButton("Save PNG…", this);
  save_png->setToolTip("The table as an image");
  auto* exports = new QHBoxLayout();
  exports->addWidget(save_csv);
  exports->addWidget(save_png);
  exports->addStretch(1);

  distance_chart_ = new widgets::TrainingChart("SWD ×10³ and FID over training", this);
  unit_chart_ = new widgets::TrainingChart("Figures on a 0–1 scale over training", this);
  charts_ = new widgets::ChartPanel(2, this);
  for (auto* chart : {distance_chart_, unit_chart_}) {
    chart->setSmoothing(0);  // each point is one evaluation, not a noisy step
    chart->setEmptyText("Evaluate every checkpoint of the run to see the metrics over training.");
    charts_->addChart(chart, false);
  }
  for (const CurveSpec& spec : kDistanceCurves)
    curves_.push_back({spec.figure, distance_chart_, distance_chart_->addSeries(spec.name, spec.color)});
  for (const CurveSpec& spec : kUnitCurves)
    curves_.push_back({spec.figure, unit_chart_, unit_chart_->addSeries(spec.name, spec.color)});
  charts_note_ = new QLabel(this);
  charts_note_->setWordWrap(true);

  auto* right = new QVBoxLayout();
  right->addWidget(table_, 2);
  right->addWidget(details_);
  right->addLayout(exports);
  right->addWidget(charts_, 3);
  right->addWidget(charts_note_);
  auto* layout = new QHBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(right, 1);

  connect(evaluate_, &QPushButton::clicked, this, [this] { evaluate(); });
  connect(cancel_, &QPushButton::clicked, this, &QualityPanel::cancel);
  connect(nearest_button_, &QPushButton::clicked, this, &QualityPanel::showNearestImages);
  connect(save_csv, &QPushButton::clicked, this, &QualityPanel::askToSaveCsv);
  connect(save_png, &QPushButton::clicked, this, &QualityPanel::askToSaveImage);
  connect(&job_, &MetricsJob::progressChanged, progress_, &QProgressBar::setValue);
  connect(&job_, &MetricsJob::stageChanged, this, [this](const QString& what) { status_->setText(what + " …"); });
  connect(&job_, &MetricsJob::finished, this, &QualityPanel::onJobFinished);
  connect(&nearest_, &QFutureWatcher<NearestImagesResult>::finished, this, &QualityPanel::onNearestFinished);
  nearest_poll_.setInterval(100);
  connect(&nearest_poll_, &QTimer::timeout, this, [this] {
    const std::int64_t total = nearest_total_.load();
    if (total > 0) progress_->setValue(static_cast<int>(100.0 * static_cast<double>(nearest_done_.load()) / static_cast<double>(total)));
  });
  showTable();
}

QualityPanel::~QualityPanel() {
  nearest_cancel_ = true;
  nearest_.waitForFinished();
}

void QualityPanel::setRun(const QString& run_dir) {
  run_ = run_dir;
  showSaved();
}

void QualityPanel::setTarget(const QString& target) {
  target_ = target;
  showTable();
}

void QualityPanel::setSizes(int samples, int train) {
  samples_->setValue(samples);
  train_->setValue(train);
}

void QualityPanel::setMetrics(const QStringList& metrics) {
  for (QCheckBox* box : metrics_) box->setChecked(metrics.isEmpty() || metrics.contains(box->property("metric").toString()));
}

QStringList QualityPanel::chosenMetrics() const {
  QStringList chosen;
  for (QCheckBox* box : metrics_)
    if (box->isChecked()) chosen << box->property("metric").toString();
  return chosen;
}

QString QualityPanel::statusText() const { return status_->text(); }
QString QualityPanel::detailsText() const { return details_->text(); }
QString QualityPanel::chartsText() const { return charts_note_->text(); }

QString QualityPanel::targetCheckpoint() const {
  if (run_.isEmpty()) return {};
  const QStringList files = checkpointFiles(run_);
  if (files.isEmpty()) return {};
  const bool newest = target_ == "latest" || target_ == "every" || target_.isEmpty();
  return QDir(runCheckpointsDir(run_)).filePath(newest ? files.last() : target_);
}

void QualityPanel::setBusy(bool busy) {
  evaluate_->setEnabled(!busy);
  nearest_button_->setEnabled(!busy);
  cancel_->setEnabled(busy);
}

bool QualityPanel::evaluate() {
  if (isRunning() || isSearching()) return false;
  MetricsRequest request;
  request.run_dir = run_;
  request.checkpoint = targetCheckpoint();
  request.every = target_ == "every";
  request.samples = samples_->value();
  request.train = train_->value();
  const QStringList chosen = chosenMetrics();
  if (chosen.isEmpty()) {
    status_->setText("Choose at least one metric.");
    return false;
  }
  if (chosen.size() < static_cast<qsizetype>(metrics_.size())) request.only = chosen;
  if (request.checkpoint.isEmpty()) {
    status_->setText("Choose a run with a checkpoint first.");
    return false;
  }
  if (Status started = job_.start(request); !started) {
    status_->setText(errorText(started));
    return false;
  }
  job_run_ = run_;
  progress_->setValue(0);
  status_->setText("Generating samples and loading training images …");
  setBusy(true);
  return true;
}

void QualityPanel::cancel() {
  job_.cancel();
  if (isSearching()) nearest_cancel_ = true;
}

void QualityPanel::onJobFinished(bool ok, const QString& message) {
  setBusy(false);
  if (!ok) {
    status_->setText(message);
    emit evaluated(false, message);
    return;
  }
  // What the program printed is the file's object without its stamp: the same reader takes it.
  const nlohmann::json& printed = job_.result();
  const nlohmann::json& shown = printed.is_array() ? printed.back() : printed;
  auto result = QualityEvaluationFile::fromJson(shown, "the output of streetgan metrics");
  if (!result) {
    status_->setText(QString::fromStdString(result.error()));
    emit evaluated(false, status_->text());
    return;
  }
  progress_->setValue(100);
  status_->setText("Saved in " + runEvaluationsDir(job_run_) + ".");
  if (job_run_ == run_) {
    showSaved();
    showEvaluation(*result);
  }
  emit evaluated(true, status_->text());
}

void QualityPanel::showSaved() {
  saved_.clear();
  int unreadable = 0;
  const std::vector<std::string> paths = run_.isEmpty() ? std::vector<std::string>() : QualityEvaluationFile::list(run_.toStdString());
  for (const std::string& path : paths) {
    auto evaluation = QualityEvaluationFile::read(path);
    if (!evaluation) ++unreadable;
    else if (evaluation->checkpoint) saved_.push_back(std::move(*evaluation));
  }
  std::stable_sort(saved_.begin(), saved_.end(), [](const QualityEvaluation& a, const QualityEvaluation& b) {
    return a.checkpoint->images_seen < b.checkpoint->images_seen;
  });
  // FID of one feature space only: the newest result's that has one.
  std::string space;
  for (auto it = saved_.rbegin(); it != saved_.rend() && space.empty(); ++it)
    if (it->metrics.count(figure::kFid)) space = it->feature_space;
  int other_space = 0;
  distance_chart_->clear();
  unit_chart_->clear();
  for (const QualityEvaluation& evaluation : saved_) {
    const bool fid_comparable = evaluation.feature_space == space;
    if (evaluation.metrics.count(figure::kFid) && !fid_comparable) ++other_space;
    for (const Curve& curve : curves_) {
      const auto value = evaluation.metrics.find(curve.figure);
      if (value == evaluation.metrics.end()) continue;
      if (std::string(curve.figure) == figure::kFid && !fid_comparable) continue;
      curve.chart->append(curve.series, static_cast<double>(evaluation.checkpoint->images_seen),
                          static_cast<double>(evaluation.checkpoint->epoch), value->second);
    }
  }
  charts_->redrawAll();
  QString note = saved_.empty() ? QString() : QString("%1 saved results over training.").arg(static_cast<qulonglong>(saved_.size()));
  if (!space.empty()) note += QString(" FID in %1.").arg(QString::fromStdString(space));
  if (other_space > 0)
    note += QString(" %1 %2 of another feature space left out of the FID curve.").arg(other_space).arg(QString(other_space == 1 ? "result" : "results"));
  if (unreadable > 0) note += QString(" %1 unreadable %2 passed over.").arg(unreadable).arg(QString(unreadable == 1 ? "file" : "files"));
  charts_note_->setText(note.trimmed());
  showTable();
}

void QualityPanel::showTable() {
  const QString checkpoint = targetCheckpoint();
  table_->clearFigures();
  if (checkpoint.isEmpty()) {
    details_->setText("Choose a run with a checkpoint.");
    return;
  }
  const std::string name = QFileInfo(checkpoint).fileName().toStdString();
  for (const QualityEvaluation& evaluation : saved_)
    if (evaluation.checkpoint->file == name) return showEvaluation(evaluation);
  details_->setText(QString("No quality metrics saved for %1 yet: Evaluate computes them.").arg(QString::fromStdString(name)));
}

void QualityPanel::showEvaluation(const QualityEvaluation& evaluation) {
  table_->showEvaluation(evaluation);
  details_->setText(QualityTable::describe(evaluation));
}

std::size_t QualityPanel::chartPointCount(const QString& name) const {
  for (const Curve& curve : curves_)
    if (name == curve.figure) return curve.chart->pointCount(curve.series);
  return 0;
}

void QualityPanel::askToSaveCsv() {
  const QString path = QFileDialog::getSaveFileName(this, "Save Table as CSV", "quality-metrics.csv", "CSV (*.csv)");
  if (path.isEmpty()) return;
  if (const QString error = table_->saveCsv(path); !error.isEmpty()) QMessageBox::warning(this, "Save Table as CSV", error);
}

void QualityPanel::askToSaveImage() {
  const QString path = QFileDialog::getSaveFileName(this, "Save Table as PNG", "quality-metrics.png", "PNG image (*.png)");
  if (path.isEmpty()) return;
  if (const QString error = table_->saveImage(path); !error.isEmpty()) QMessageBox::warning(this, "Save Table as PNG", error);
}

void QualityPanel::showNearestImages() {
  if (isRunning() || isSearching()) return;
  NearestImagesRequest request;
  request.run_dir = run_;
  request.checkpoint = targetCheckpoint();  // empty: the worker says the run has none
  nearest_cancel_ = false;
  nearest_done_ = 0;
  nearest_total_ = 0;
  progress_->setValue(0);
  status_->setText("Finding the nearest training images …");
  setBusy(true);
  nearest_poll_.start();
  nearest_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [this, request] {
    return findNearestImages(request, nearest_cancel_, [this](std::int64_t done, std::int64_t total) {
      nearest_done_ = done;
      nearest_total_ = total;
    });
  }));
}

void QualityPanel::onNearestFinished() {
  nearest_poll_.stop();
  setBusy(false);
  const NearestImagesResult result = nearest_.result();
  if (!result.status) {
    status_->setText("Nearest training images: " + errorText(result.status));
    emit nearestImagesReady(errorText(result.status));
    return;
  }
  progress_->setValue(100);
  status_->setText(QString("Nearest training images of %1 shown.").arg(result.checkpoint));
  if (dialog_) dialog_->close();
  dialog_ = new NearestImagesDialog(result, this);
  dialog_->setAttribute(Qt::WA_DeleteOnClose);
  dialog_->show();
  emit nearestImagesReady(QString());
}

}  // namespace streetgan::studio
