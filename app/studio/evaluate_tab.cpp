#include "app/studio/evaluate_tab.h"

#include "app/studio/control/status_text.h"
#include "app/studio/control/run_checkpoints.h"
#include "app/studio/quality_panel.h"
#include "core/config/train_config.h"
#include "core/data/image_dataset.h"
#include "core/runs/parzen_evaluation_file.h"
#include "core/latent/latent_explorer.h"
#include "widgets/chart_panel.h"
#include "widgets/job_form.h"
#include "widgets/rgb_image.h"
#include "widgets/sigma_curve_chart.h"
#include "widgets/training_chart.h"
#include "widgets/worker_pool.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace streetgan::studio {

namespace {

constexpr int kCompareCount = 16;

QImage gridOf(const QVector<QImage>& tiles, int side) {
  const int columns = 4, pad = 2;
  const int rows = (static_cast<int>(tiles.size()) + columns - 1) / columns;
  QImage grid(columns * side + (columns + 1) * pad, rows * side + (rows + 1) * pad, QImage::Format_RGB888);
  grid.fill(Qt::black);
  QPainter painter(&grid);
  for (int i = 0; i < tiles.size(); ++i)
    painter.drawImage(pad + (i % columns) * (side + pad), pad + (i / columns) * (side + pad),
                      tiles[i].scaled(side, side, Qt::IgnoreAspectRatio, Qt::SmoothTransformation));
  return grid;
}

Result<ComparisonGrids> makeComparison(const std::string& checkpoint, const TrainConfig& config) {
  const DatasetPart part = config.data.filter.hasHoldout() ? DatasetPart::Holdout : DatasetPart::Train;
  auto dataset = ImageDataset::open(config.dataroot, config.data.filter, part);
  if (!dataset) return makeError(dataset.error(), dataset.errorKind());
  QVector<QImage> real;
  const std::size_t step = std::max<std::size_t>(1, dataset->size() / kCompareCount);
  for (std::size_t i = 0; i < dataset->size() && real.size() < kCompareCount; i += step) {
    QImage image = widgets::readCenterSquare(QString::fromStdString(dataset->path(i)));
    if (!image.isNull()) real.push_back(image);
  }
  auto explorer = LatentExplorer::open(checkpoint, "cpu");
  if (!explorer) return makeError(explorer.error(), explorer.errorKind());
  std::vector<Latent> latents;
  for (int seed = 0; seed < kCompareCount; ++seed) latents.push_back((*explorer)->latentOfSeed(static_cast<std::uint64_t>(seed)));
  auto images = (*explorer)->render(latents);
  if (!images) return makeError(images.error(), images.errorKind());
  QVector<QImage> generated;
  for (const RgbImage& image : *images) generated.push_back(widgets::toQImage(image));
  const int side = (*explorer)->imageSize();
  ComparisonGrids grids;
  grids.real = gridOf(real, side);
  grids.generated = gridOf(generated, side);
  return grids;
}

}  // namespace

EvaluateTab::EvaluateTab(QString program, QString runs_root, QWidget* parent)
    : QWidget(parent), runs_root_(std::move(runs_root)), job_(program) {
  runs_ = new QComboBox(this);
  runs_->setMinimumContentsLength(16);
  target_ = new QComboBox(this);
  auto* choice = new QFormLayout();  // shared by both pages
  choice->addRow("Run", runs_);
  choice->addRow("Checkpoint", target_);
  QFormLayout* form = buildParzenForm();
  QBoxLayout* right = buildParzenResults();
  auto* parzen_page = new QWidget(this);
  auto* parzen_layout = new QHBoxLayout(parzen_page);
  parzen_layout->addLayout(form);
  parzen_layout->addLayout(right, 1);
  quality_ = new QualityPanel(program, this);
  pages_ = new QTabWidget(this);
  pages_->addTab(parzen_page, "Parzen");
  pages_->addTab(quality_, "Quality metrics");
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(choice);
  layout->addWidget(pages_, 1);

  connect(runs_, &QComboBox::currentIndexChanged, this, [this] {
    listCheckpoints();
    showSaved();
  });
  connect(target_, &QComboBox::currentIndexChanged, this,
          [this] { quality_->setTarget(target_->currentData().toString()); });
  connect(evaluate_, &QPushButton::clicked, this, [this] { evaluate(); });
  connect(cancel_, &QPushButton::clicked, this, &EvaluateTab::cancel);
  connect(&job_, &ParzenJob::progressChanged, progress_, &QProgressBar::setValue);
  connect(&job_, &ParzenJob::scoringCheckpoint, this,
          [this](const QString& what) { status_->setText("Scoring " + what); });
  connect(&job_, &ParzenJob::finished, this, &EvaluateTab::onJobFinished);
  connect(&comparison_, &QFutureWatcher<Result<ComparisonGrids>>::finished, this, [this] {
    const Result<ComparisonGrids> grids = comparison_.result();
    real_ = grids ? grids->real : QImage();
    generated_ = grids ? grids->generated : QImage();
    real_view_->setPixmap(QPixmap::fromImage(real_.scaled(real_.size() * 2)));
    generated_view_->setPixmap(QPixmap::fromImage(generated_.scaled(generated_.size() * 2)));
    if (!grids) status_->setText(errorText(grids));
    emit comparisonReady(errorText(grids));
  });
  listRuns();
}

// The Parzen page's settings, its buttons, progress and status.
QFormLayout* EvaluateTab::buildParzenForm() {
  samples_ = widgets::newCountSpinBox(1, 10000, this);
  valid_ = widgets::newCountSpinBox(1, 1000, this);
  test_ = widgets::newCountSpinBox(1, 1000, this);
  valid_dir_ = new QLineEdit(this);
  valid_dir_->setPlaceholderText("the run's held-out split");
  test_dir_ = new QLineEdit(this);
  test_dir_->setPlaceholderText("the run's held-out split");
  evaluate_ = new QPushButton("Evaluate", this);
  cancel_ = new QPushButton("Cancel", this);
  cancel_->setEnabled(false);
  auto* compare_button = new QPushButton("Show Real and Generated", this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  status_ = new QLabel("Choose a run, then Evaluate.", this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  result_ = new QLabel(this);
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* form = new QFormLayout();
  form->addRow("Generated samples", samples_);
  form->addRow("Validation images", valid_);
  form->addRow("Test images", test_);
  form->addRow("Validation folder", valid_dir_);
  form->addRow("Test folder", test_dir_);
  widgets::addJobRows(form, evaluate_, cancel_, progress_, status_);
  form->addRow(compare_button);
  connect(compare_button, &QPushButton::clicked, this, &EvaluateTab::compare);
  return form;
}

// The Parzen page's results: the figures, the σ curve, the estimate over training, and held-out
// photographs beside generated samples.
QBoxLayout* EvaluateTab::buildParzenResults() {
  sigma_chart_ = new widgets::SigmaCurveChart(this);
  epoch_chart_ = new widgets::TrainingChart("Parzen log-likelihood over training (test split, one σ)", this);
  epoch_mean_ = epoch_chart_->addSeries("mean", QColor(31, 119, 180));
  epoch_low_ = epoch_chart_->addSeries("mean − stderr", QColor(31, 119, 180, 110));
  epoch_high_ = epoch_chart_->addSeries("mean + stderr", QColor(31, 119, 180, 110));
  epoch_chart_->setSmoothing(0);
  // The panel gives the chart the toolbar and the save menu of the Train tab's charts.
  auto* epoch_panel = new widgets::ChartPanel(1, this);
  epoch_panel->addChart(epoch_chart_, false);
  epoch_panel->setXAxis(widgets::TrainingChart::XAxis::Epochs);
  epoch_chart_->setEmptyText("Evaluate every checkpoint of the run to see the estimate over training.");
  real_view_ = new QLabel(this);
  generated_view_ = new QLabel(this);
  auto* compare_box = new QGroupBox("Held-out photographs (left) and generated samples, seeds 0–15 (right)", this);
  auto* compare_layout = new QHBoxLayout(compare_box);
  compare_layout->addWidget(real_view_, 1, Qt::AlignCenter);
  compare_layout->addWidget(generated_view_, 1, Qt::AlignCenter);

  auto* charts = new QHBoxLayout();
  charts->addWidget(sigma_chart_, 1);
  charts->addWidget(epoch_panel, 1);
  auto* right = new QVBoxLayout();
  right->addWidget(result_);
  right->addLayout(charts, 3);
  right->addWidget(compare_box, 2);
  return right;
}

EvaluateTab::~EvaluateTab() { comparison_.waitForFinished(); }

void EvaluateTab::setRunsRoot(const QString& root) {
  runs_root_ = root;
  listRuns();
}

void EvaluateTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!isRunning()) listRuns();
}

void EvaluateTab::listRuns() {
  const QString current = runs_->currentData().toString();
  {
    const QSignalBlocker block(runs_);
    runs_->clear();
    for (const QFileInfo& run : runsWithCheckpoints(runs_root_)) runs_->addItem(run.fileName(), run.absoluteFilePath());
    const int index = runs_->findData(current);
    runs_->setCurrentIndex(index >= 0 ? index : 0);
  }
  listCheckpoints();
  showSaved();
}

void EvaluateTab::listCheckpoints() {
  const QString current = target_->currentData().toString();
  target_->clear();
  target_->addItem("Latest checkpoint (Parzen: σ chosen on the validation split)", "latest");
  target_->addItem("Every checkpoint (Parzen: at the σ chosen on the latest)", "every");
  for (const QString& file : checkpointFiles(runs_->currentData().toString())) target_->addItem(file, file);
  const int index = target_->findData(current);
  if (index >= 0) target_->setCurrentIndex(index);
}

bool EvaluateTab::selectRun(const QString& run_dir) {
  listRuns();
  const int index = runs_->findData(QFileInfo(run_dir).absoluteFilePath());
  if (index < 0) return false;
  runs_->setCurrentIndex(index);
  return true;
}

void EvaluateTab::setTarget(const QString& target) {
  const int index = target_->findData(target);
  if (index >= 0) target_->setCurrentIndex(index);
}

void EvaluateTab::setSizes(int samples, int valid, int test) {
  samples_->setValue(samples);
  valid_->setValue(valid);
  test_->setValue(test);
}

void EvaluateTab::setHeldOutFolders(const QString& valid, const QString& test) {
  valid_dir_->setText(valid);
  test_dir_->setText(test);
}

QString EvaluateTab::statusText() const { return status_->text(); }
QString EvaluateTab::resultText() const { return result_->text(); }

QString EvaluateTab::targetCheckpoint() const {
  const QString run = runs_->currentData().toString();
  const QStringList files = checkpointFiles(run);
  if (files.isEmpty()) return {};
  const QString target = target_->currentData().toString();
  return QDir(run + "/checkpoints").filePath(target == "latest" || target == "every" ? files.last() : target);
}

bool EvaluateTab::evaluate() {
  if (isRunning()) return false;
  const QString run = runs_->currentData().toString();
  if (run.isEmpty() || targetCheckpoint().isEmpty()) {
    status_->setText("Choose a run with a checkpoint first.");
    return false;
  }
  ParzenRequest request;
  request.run_dir = run;
  request.every = target_->currentData().toString() == "every";
  request.checkpoint = targetCheckpoint();
  request.samples = samples_->value();
  request.valid = valid_->value();
  request.test = test_->value();
  request.valid_dir = valid_dir_->text();
  request.test_dir = test_dir_->text();
  if (Status started = job_.start(request); !started) {
    status_->setText(errorText(started));
    return false;
  }
  progress_->setValue(0);
  status_->setText("Sampling and estimating …");
  evaluate_->setEnabled(false);
  cancel_->setEnabled(true);
  return true;
}

void EvaluateTab::cancel() { job_.cancel(); }

void EvaluateTab::onJobFinished(bool ok, const QString& message) {
  evaluate_->setEnabled(true);
  cancel_->setEnabled(false);
  if (!ok) {
    status_->setText(message);
    emit evaluated(false, status_->text());
    return;
  }
  // What the program printed is the file's object without its stamp: the same reader takes it.
  auto result = ParzenEvaluationFile::fromJson(job_.result(), "the output of streetgan parzen");
  if (!result) {
    status_->setText(QString::fromStdString(result.error()));
    emit evaluated(false, status_->text());
    return;
  }
  progress_->setValue(100);
  status_->setText("Saved in " + runs_->currentData().toString() + "/evaluations.");
  showResult(*result);
  emit evaluated(true, result_->text());
}

void EvaluateTab::showSaved() {
  const QString run = runs_->currentData().toString();
  quality_->setRun(run);
  sigma_chart_->setCurve({}, 0);
  epoch_chart_->clear();
  result_->clear();
  // The newest single-checkpoint result and the newest over-the-run result; unreadable files are
  // passed over.
  bool single = false, over_run = false;
  for (const std::string& path : ParzenEvaluationFile::list(run.toStdString())) {
    const auto result = ParzenEvaluationFile::read(path);
    if (!result) continue;
    const bool is_run = result->kind == ParzenEvaluation::Kind::Run;
    if ((is_run && over_run) || (!is_run && single)) continue;
    (is_run ? over_run : single) = true;
    showResult(*result);
  }
}

void EvaluateTab::showResult(const ParzenEvaluation& result) {
  std::vector<std::pair<double, double>> curve;
  for (const auto& point : result.curve) curve.emplace_back(point.sigma, point.mean_ll);
  const double sigma = result.sigma;
  if (!curve.empty()) sigma_chart_->setCurve(curve, sigma);
  if (result.kind == ParzenEvaluation::Kind::Run) {
    epoch_chart_->clear();
    for (const auto& row : result.checkpoints) {
      const double images = static_cast<double>(row.checkpoint.images_seen);
      const double epoch = static_cast<double>(row.checkpoint.epoch);
      const double mean = row.mean_ll, err = row.stderr_ll;
      epoch_chart_->append(epoch_mean_, images, epoch, mean);
      epoch_chart_->append(epoch_low_, images, epoch, mean - err);
      epoch_chart_->append(epoch_high_, images, epoch, mean + err);
    }
    epoch_chart_->redraw();
    result_->setText(QString("Over %1 checkpoints at σ %2.").arg(result.checkpoints.size()).arg(sigma, 0, 'g', 4));
    return;
  }
  const bool named = result.checkpoint.has_value();
  result_->setText(QString("Parzen log-likelihood (test): %1 ± %2 at σ %3; %4 test and %5 validation images, %6 samples (%7, epoch %8).")
                       .arg(result.mean_ll, 0, 'f', 2)
                       .arg(result.stderr_ll, 0, 'f', 2)
                       .arg(sigma, 0, 'g', 4)
                       .arg(static_cast<qlonglong>(result.n_test))
                       .arg(static_cast<qlonglong>(result.n_valid))
                       .arg(static_cast<qlonglong>(result.n_samples))
                       .arg(named ? QString::fromStdString(result.checkpoint->file) : QString("?"))
                       .arg(static_cast<qlonglong>(named ? result.checkpoint->epoch : 0)));
}

void EvaluateTab::compare() {
  const QString checkpoint = targetCheckpoint();
  if (checkpoint.isEmpty() || comparison_.isRunning()) return;
  QFile file(runs_->currentData().toString() + "/config.json");
  if (!file.open(QIODevice::ReadOnly)) {
    status_->setText("Cannot read " + file.fileName() + ": " + file.errorString());
    return;
  }
  auto config = applyConfigText(TrainConfig(), file.readAll().toStdString(), ConfigScope::All, file.fileName().toStdString());
  if (!config) {
    status_->setText(QString::fromStdString(config.error()));
    return;
  }
  const std::string path = checkpoint.toStdString();
  const TrainConfig run_config = *config;
  comparison_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [path, run_config] { return makeComparison(path, run_config); }));
}

}  // namespace streetgan::studio
