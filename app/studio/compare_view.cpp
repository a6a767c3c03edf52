#include "app/studio/compare_view.h"

#include "app/studio/config_difference_table.h"
#include "app/studio/control/run_checkpoints.h"
#include "core/runs/quality_evaluation_file.h"
#include "widgets/worker_pool.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSlider>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

namespace streetgan::studio {

namespace {

const QColor kColors[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44), QColor(214, 39, 40),
                          QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127)};

}  // namespace

struct CompareView::Run {
  ComparedRun input;
  QString name;
  QColor color;
  int loss_d = 0, loss_g = 0, d_x = 0, d_gz = 0, speed = 0, parzen = 0, swd = 0, fid = 0;
  std::size_t steps_drawn = 0, parzen_drawn = 0, metrics_drawn = 0;
  bool fid_elsewhere = false;  // it has FID in another feature space than the chart's
  std::int64_t starts_drawn = 0;
  RunHistory history;
  QLabel* sample = nullptr;
  QLabel* caption = nullptr;
  QFutureWatcher<QImage> loader;
  QImage shown;
  QString shown_path, wanted_path;
};

CompareView::CompareView(QList<ComparedRun> runs, QWidget* parent) : QWidget(parent) {
  setWindowTitle(QString("Compare %1 Runs").arg(runs.size()));
  buildCharts();
  QWidget* samples = buildSamples(runs);
  table_ = new RunFiguresTable(static_cast<int>(runs_.size()), this);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(charts_);
  splitter->addWidget(samples);
  splitter->addWidget(table_);
  config_table_ = new ConfigDifferenceTable(this);
  splitter->addWidget(config_table_);
  splitter->setStretchFactor(0, 5);
  splitter->setStretchFactor(1, 3);
  splitter->setStretchFactor(2, 2);
  splitter->setStretchFactor(3, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);

  connect(slider_, &QSlider::valueChanged, this, [this](int value) { showSamplesAt(value / 1000.0 * max_images_); });
  connect(&reader_, &QFutureWatcher<std::vector<std::optional<RunHistory>>>::finished, this,
          [this] { apply(reader_.result()); });
  poll_timer_.setInterval(2000);
  connect(&poll_timer_, &QTimer::timeout, this, &CompareView::poll);
  poll_timer_.start();
  poll();
}

// The charts under one toolbar, with the buttons that save the comparison.
void CompareView::buildCharts() {
  charts_ = new widgets::ChartPanel(2, this);
  loss_ = new widgets::TrainingChart("Loss (solid: D, dashed: G)", this);
  d_ = new widgets::TrainingChart("D(x) (solid) and D(G(z)) before D's step (dashed)", this);
  speed_ = new widgets::TrainingChart("Throughput (images/s)", this);
  parzen_ = new widgets::TrainingChart("Parzen log-likelihood (test split, mean)", this);
  parzen_->setSmoothing(0);
  swd_ = new widgets::TrainingChart("SWD ×10³ (quality metrics)", this);
  swd_->setSmoothing(0);
  swd_->setEmptyText("No quality metrics in these runs: a run evaluates them when metrics.every_epochs or "
                     "metrics.every_images is set.");
  fid_ = new widgets::TrainingChart("FID", this);
  fid_->setSmoothing(0);
  fid_->setEmptyText("No FID in these runs.");
  charts_->addChart(loss_);
  charts_->addChart(d_);
  charts_->addChart(speed_);
  charts_->addChart(parzen_, false);
  charts_->addChart(swd_, false);
  charts_->addChart(fid_, false);
  auto* save_image = new QPushButton("Save Image…", this);
  auto* save_csv = new QPushButton("Save CSV…", this);
  save_image->setToolTip("Save the whole comparison (charts, samples and table) as a PNG image");
  save_csv->setToolTip("Save the table of the runs as CSV (each chart's ⋯ menu saves its points)");
  charts_->toolbar()->addWidget(save_image);
  charts_->toolbar()->addWidget(save_csv);
  connect(save_image, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, "Save Comparison Image", "comparison.png", "PNG image (*.png)");
    if (!path.isEmpty() && !saveImage(path))
      QMessageBox::warning(this, "Save Comparison Image", "Cannot write " + path + ".");
  });
  connect(save_csv, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save Comparison Table", "comparison.csv", "CSV (*.csv)");
    if (!path.isEmpty() && !saveCsv(path))
      QMessageBox::warning(this, "Save Comparison Table", "Cannot write " + path + ".");
  });
}

// Each run's series on the charts: one legend entry per run, its colour on every chart.
void CompareView::addSeriesOf(Run& run) {
  run.loss_d = loss_->addSeries(run.name + " loss_d", run.color);
  loss_->setSeriesLegendName(run.loss_d, run.name);
  run.loss_g = loss_->addSeries(run.name + " loss_g", run.color, Qt::DashLine);
  loss_->hideFromLegend(run.loss_g);  // one legend entry per run; the title says which line is which
  run.d_x = d_->addSeries(run.name + " D(x)", run.color);
  d_->setSeriesLegendName(run.d_x, run.name);
  run.d_gz = d_->addSeries(run.name + " D(G(z))", run.color, Qt::DashLine);
  d_->hideFromLegend(run.d_gz);
  run.speed = speed_->addSeries(run.name, run.color);
  run.parzen = parzen_->addSeries(run.name, run.color);
  run.swd = swd_->addSeries(run.name, run.color);
  run.fid = fid_->addSeries(run.name, run.color);
}

// Each run's sample grid side by side, under one slider of images seen.
QWidget* CompareView::buildSamples(const QList<ComparedRun>& runs) {
  auto* samples = new QWidget(this);
  auto* samples_row = new QHBoxLayout();
  readers_ = std::make_shared<std::vector<RunHistoryReader>>(static_cast<std::size_t>(runs.size()));
  offsets_ = std::make_shared<std::vector<std::uint64_t>>(static_cast<std::size_t>(runs.size()), 0);
  for (int i = 0; i < runs.size(); ++i) {
    auto run = std::make_unique<Run>();
    run->input = runs[i];
    run->name = QDir(runs[i].path).dirName();
    run->color = kColors[i % 8];
    addSeriesOf(*run);
    auto* column = new QVBoxLayout();
    auto* title = new QLabel(QString("<b style='color:%1'>%2</b>").arg(run->color.name(), run->name.toHtmlEscaped()), samples);
    run->sample = new QLabel(samples);
    run->sample->setMinimumSize(120, 120);
    run->sample->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    run->sample->setAlignment(Qt::AlignCenter);
    run->caption = new QLabel("No samples yet.", samples);
    column->addWidget(title);
    column->addWidget(run->sample, 1);
    column->addWidget(run->caption);
    samples_row->addLayout(column, 1);
    Run* raw = run.get();
    connect(&run->loader, &QFutureWatcher<QImage>::finished, this, [this, raw] {
      const QImage image = raw->loader.result();
      raw->shown = image;
      raw->sample->setPixmap(image.isNull() ? QPixmap() : QPixmap::fromImage(image));
      if (image.isNull()) raw->caption->setText("Cannot read " + raw->shown_path);
      if (!raw->wanted_path.isEmpty() && raw->wanted_path != raw->shown_path) showSamplesAt(slider_->value() / 1000.0 * max_images_);
      emit samplesShown();
    });
    runs_.push_back(std::move(run));
  }
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setRange(0, 1000);
  slider_->setValue(1000);
  slider_->setToolTip("Images seen: each run shows its sample grid nearest this point");
  slider_label_ = new QLabel(this);
  auto* slider_row = new QHBoxLayout();
  slider_row->addWidget(new QLabel("Samples at", this));
  slider_row->addWidget(slider_, 1);
  slider_row->addWidget(slider_label_);
  auto* samples_layout = new QVBoxLayout(samples);
  samples_layout->setContentsMargins(0, 0, 0, 0);
  samples_layout->addLayout(slider_row);
  samples_layout->addLayout(samples_row, 1);
  return samples;
}

CompareView::~CompareView() {
  reader_.waitForFinished();
  for (auto& run : runs_) run->loader.waitForFinished();
}

void CompareView::poll() {
  if (reader_.isRunning()) return;
  QStringList logs;
  for (const auto& run : runs_) logs << runEventsPath(run->input.path);
  auto readers = readers_;
  auto offsets = offsets_;
  // Only what each log gained since the last look is read; the readers keep the partial lines.
  const bool everything = first_read_;
  first_read_ = false;
  reader_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [logs, readers, offsets, everything] {
    std::vector<std::optional<RunHistory>> out(static_cast<std::size_t>(logs.size()));
    for (int i = 0; i < logs.size(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      QFile file(logs[i]);
      bool grew = false;
      if (file.open(QIODevice::ReadOnly) && file.size() > static_cast<qint64>((*offsets)[k]) &&
          file.seek(static_cast<qint64>((*offsets)[k]))) {
        const QByteArray bytes = file.readAll();
        (*readers)[k].feed(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
        (*offsets)[k] += static_cast<std::uint64_t>(bytes.size());
        grew = !bytes.isEmpty();
      }
      if (grew || everything) out[k] = (*readers)[k].history();  // a copy, made here rather than on the GUI thread
    }
    return out;
  }));
}

void CompareView::apply(std::vector<std::optional<RunHistory>> histories) {
  bool restart = false, changed = false;
  for (std::size_t k = 0; k < runs_.size() && k < histories.size(); ++k) {
    changed = changed || histories[k].has_value();
    restart = restart || (histories[k] && histories[k]->process_starts != runs_[k]->starts_drawn && runs_[k]->starts_drawn > 0);
  }
  if (!changed) return;
  if (restart) {  // a run was resumed: the points it replaced go, so every series is drawn again
    for (auto* chart : charts_->charts()) chart->clear();
    for (auto& run : runs_) {
      run->steps_drawn = run->parzen_drawn = run->metrics_drawn = 0;
      run->fid_elsewhere = false;
    }
    fid_space_.clear();
  }
  for (std::size_t k = 0; k < runs_.size() && k < histories.size(); ++k) {
    Run& run = *runs_[k];
    if (histories[k]) run.history = std::move(*histories[k]);
    else if (!restart) continue;
    run.starts_drawn = run.history.process_starts;
    const auto& steps = run.history.steps;
    for (std::size_t i = run.steps_drawn; i < steps.size(); ++i) {
      const auto& s = steps[i];
      loss_->append(run.loss_d, s.images_seen, s.epoch, s.loss_d, s.seconds);
      loss_->append(run.loss_g, s.images_seen, s.epoch, s.loss_g, s.seconds);
      d_->append(run.d_x, s.images_seen, s.epoch, s.d_x, s.seconds);
      d_->append(run.d_gz, s.images_seen, s.epoch, s.d_g_z1, s.seconds);
      speed_->append(run.speed, s.images_seen, s.epoch, s.images_per_s, s.seconds);
    }
    run.steps_drawn = steps.size();
    const auto& parzen = run.history.parzen;
    for (std::size_t i = run.parzen_drawn; i < parzen.size(); ++i)
      parzen_->append(run.parzen, parzen[i].images_seen, parzen[i].epoch, parzen[i].mean_ll, parzen[i].seconds);
    run.parzen_drawn = parzen.size();
    drawMetrics(run);
  }
  QStringList elsewhere;
  for (const auto& run : runs_)
    if (run->fid_elsewhere) elsewhere << run->name;
  QString fid_title = fid_space_.isEmpty() ? QString("FID") : "FID in " + fid_space_;
  if (!elsewhere.isEmpty()) fid_title += " (left out, in another feature space: " + elsewhere.join(", ") + ")";
  if (fid_->title() != fid_title) fid_->setTitle(fid_title);
  fillTable();
  updateSlider();
  // The first read draws every chart at once, as part of opening; later reads only add points,
  // and the charts take turns to draw them.
  if (!drawn_once_) {
    drawn_once_ = true;
    charts_->redrawAll();
  }
  emit updated();
}

void CompareView::drawMetrics(Run& run) {
  const auto& metrics = run.history.metrics;
  for (std::size_t i = run.metrics_drawn; i < metrics.size(); ++i) {
    const RunHistory::Metrics& m = metrics[i];
    if (const auto swd = m.figure(quality_figure::kSwd)) swd_->append(run.swd, m.images_seen, m.epoch, *swd, m.seconds);
    const auto fid = m.figure(quality_figure::kFid);
    if (!fid || m.feature_space.empty()) continue;
    const QString space = QString::fromStdString(m.feature_space);
    if (fid_space_.isEmpty()) fid_space_ = space;  // the first space seen is the chart's
    if (space == fid_space_) fid_->append(run.fid, m.images_seen, m.epoch, *fid, m.seconds);
    else run.fid_elsewhere = true;
  }
  run.metrics_drawn = metrics.size();
}

void CompareView::updateSlider() {
  double max_images = 0;
  for (const auto& run : runs_)
    if (!run->history.samples.empty()) max_images = std::max(max_images, run->history.samples.back().images_seen);
  if (max_images == max_images_) return;
  const bool at_end = slider_->value() == slider_->maximum();
  max_images_ = max_images;
  if (at_end) showSamplesAt(max_images_);
}

void CompareView::showSamplesAt(double images_seen) {
  slider_label_->setText(QString("%1 images seen").arg(std::llround(images_seen)));
  for (auto& run : runs_) {
    const auto& samples = run->history.samples;
    if (samples.empty()) continue;
    const RunHistory::Samples* nearest = &samples.front();
    for (const auto& s : samples)
      if (std::abs(s.images_seen - images_seen) < std::abs(nearest->images_seen - images_seen)) nearest = &s;
    const QString path = QDir(run->input.path).filePath(QString::fromStdString(nearest->path));
    run->caption->setText(QString("at %1 images seen").arg(std::llround(nearest->images_seen)));
    run->wanted_path = path;
    if (path == run->shown_path || run->loader.isRunning()) continue;  // the newest wish follows the load in progress
    run->shown_path = path;
    const QSize box = run->sample->size();
    run->loader.setFuture(QtConcurrent::run(widgets::studioWorkers(), [path, box] {
      QImage image(path);
      return image.isNull() ? image : image.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    }));
  }
}

QImage CompareView::shownSample(int index) const { return runs_.at(static_cast<std::size_t>(index))->shown; }
QString CompareView::shownSamplePath(int index) const { return runs_.at(static_cast<std::size_t>(index))->shown_path; }

void CompareView::fillTable() {
  for (std::size_t k = 0; k < runs_.size(); ++k) {
    const Run& run = *runs_[k];
    table_->setRun(static_cast<int>(k), {run.name, run.color, run.input.host, run.input.cost_per_hour, &run.history});
  }
  table_->resizeColumnsToContents();
  QStringList names;
  std::vector<std::map<std::string, std::string>> configs;
  for (const auto& run : runs_) {
    names << run->name;
    configs.push_back(run->history.config);
  }
  config_table_->setRuns(names, configs);
}

QString CompareView::tableCsv() const { return table_->csv(); }

bool CompareView::saveImage(const QString& path) {
  charts_->redrawAll();
  QSaveFile file(path);
  return file.open(QIODevice::WriteOnly) && grab().save(&file, "PNG") && file.commit();
}

bool CompareView::saveCsv(const QString& path) {
  QSaveFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(tableCsv().toUtf8()) >= 0 && file.commit();
}

}  // namespace streetgan::studio
