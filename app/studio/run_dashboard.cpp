#include "app/studio/run_dashboard.h"
#include "app/studio/quality_alarm_badge.h"
#include "app/studio/quality_charts.h"
#include "core/runs/event_fields.h"
#include "widgets/worker_pool.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace streetgan::studio {

namespace {

// A counter of an event as a figure for the charts: NaN when the event has none.
double countText(const events::Count& value) { return value ? static_cast<double>(*value) : std::nan(""); }

}  // namespace

RunDashboard::RunDashboard(QWidget* parent) : QWidget(parent) {
  status_ = new QLabel("No run yet.", this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  progress_->setFormat("—");
  eta_ = new QLabel(this);
  starved_ = new QPushButton(this);
  starved_->setObjectName("dataStarved");
  starved_->hide();
  buildCharts();
  buildSamplesPane();
  charts_->addChart(loss_chart_);
  charts_->addChart(d_chart_);
  charts_->addCell(side_);
  charts_->addChart(speed_chart_);
  charts_->addChart(parzen_chart_, false);
  charts_->addChart(system_chart_, false);
  quality_ = new QualityCharts(*charts_, this);  // the third row, after every other chart
  alarm_ = new QualityAlarmBadge(this);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(alarm_);
  layout->addWidget(status_);
  auto* progress_row = new QHBoxLayout();
  progress_row->addWidget(progress_, 1);
  progress_row->addWidget(eta_);
  progress_row->addWidget(starved_);
  layout->addLayout(progress_row);
  layout->addWidget(charts_, 1);
  connectViews();
}

// The live charts: losses, D's outputs, throughput, Parzen and the machine.
void RunDashboard::buildCharts() {
  charts_ = new widgets::ChartPanel(3, this);
  loss_chart_ = new widgets::TrainingChart("Loss", this);
  loss_d_ = loss_chart_->addSeries(events::field::kLossD, QColor(31, 119, 180));
  loss_g_ = loss_chart_->addSeries(events::field::kLossG, QColor(255, 127, 14));
  d_chart_ = new widgets::TrainingChart("Discriminator outputs", this);
  d_x_ = d_chart_->addSeries("D(x)", QColor(44, 160, 44));
  d_gz1_ = d_chart_->addSeries("D(G(z)) before", QColor(214, 39, 40));
  d_gz2_ = d_chart_->addSeries("D(G(z)) after", QColor(148, 103, 189));
  speed_chart_ = new widgets::TrainingChart("Throughput", this);
  speed_ = speed_chart_->addSeries("images/s", QColor(23, 190, 207));
  wait_ = speed_chart_->addSeries("% waiting on data", QColor(127, 127, 127));
  parzen_chart_ = new widgets::TrainingChart("Parzen log-likelihood (test split)", this);
  parzen_mean_ = parzen_chart_->addSeries("mean", QColor(31, 119, 180));
  parzen_low_ = parzen_chart_->addSeries("mean − stderr", QColor(31, 119, 180, 110), Qt::DashLine);
  parzen_high_ = parzen_chart_->addSeries("mean + stderr", QColor(31, 119, 180, 110), Qt::DashLine);
  parzen_chart_->setSmoothing(0);
  parzen_chart_->setEmptyText("No Parzen estimate yet. A run estimates one every parzen.every_epochs epochs "
                              "(0: never).");
  // Shares, so one y axis fits all: CPU of the cores the run may use, its resident memory of the
  // host's RAM, the GPU's use and its memory.
  system_chart_ = new widgets::TrainingChart("Machine", this);
  cpu_ = system_chart_->addSeries("CPU %", QColor(214, 39, 40));
  memory_ = system_chart_->addSeries("RAM %", QColor(44, 160, 44));
  gpu_ = system_chart_->addSeries("GPU %", QColor(148, 103, 189));
  gpu_memory_ = system_chart_->addSeries("GPU mem %", QColor(140, 86, 75));
  system_chart_->setSmoothing(0);
  system_chart_->setEmptyText("No figures of the machine yet: a run reports them every 5 s.");
  loss_chart_->setEmptyText("No steps yet.");
  d_chart_->setEmptyText("No steps yet.");
  speed_chart_->setEmptyText("No steps yet.");
}

// The side cell: the sample grids under a slider, and the warnings.
void RunDashboard::buildSamplesPane() {
  sample_view_ = new QLabel(this);
  sample_view_->setMinimumSize(160, 160);
  sample_view_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  sample_view_->setAlignment(Qt::AlignCenter);
  sample_caption_ = new QLabel("No samples yet.", this);
  sample_caption_->setWordWrap(true);
  sample_slider_ = new QSlider(Qt::Horizontal, this);
  sample_slider_->setEnabled(false);
  warnings_ = new QListWidget(this);

  auto* samples_page = new QWidget(this);
  auto* samples_layout = new QVBoxLayout(samples_page);
  samples_layout->setContentsMargins(2, 2, 2, 2);
  samples_layout->addWidget(sample_view_, 1);
  samples_layout->addWidget(sample_slider_);
  samples_layout->addWidget(sample_caption_);
  side_ = new QTabWidget(this);
  side_->setDocumentMode(true);
  side_->addTab(samples_page, "Samples");
  side_->addTab(warnings_, "Warnings");
}

void RunDashboard::connectViews() {
  connect(sample_slider_, &QSlider::valueChanged, this, &RunDashboard::showSample);
  connect(alarm_, &QualityAlarmBadge::clicked, this, [this] { side_->setCurrentWidget(warnings_); });
  connect(starved_, &QPushButton::clicked, this, [this] {
    if (cache_building_) return;
    const auto answer = QMessageBox::question(
        this, "Build a Cache",
        QString("This run spends %1% of its time waiting for the loader to decode images, so the %2 trains below "
                "its speed.\n\nA cache holds every image of the data set decoded once, at the size training "
                "uses; a run that reads it gets the same batches without decoding JPEGs. Build one for this data "
                "set now? The run goes on meanwhile, and the next run you start reads from the cache.")
            .arg(std::lround(100 * std::max(0.0, starved_share_)))
            .arg(status_->text().contains("cpu") ? "CPU" : "device"),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    if (answer == QMessageBox::Yes) emit buildCacheRequested();
  });
  connect(&sample_loader_, &QFutureWatcher<QImage>::finished, this, [this] {
    const int index = sample_loading_;
    sample_loading_ = -1;
    if (index >= 0 && index < sample_paths_.size()) {
      const QImage image = sample_loader_.result();
      if (image.isNull()) {
        sample_caption_->setText("Cannot read " + sample_paths_[index]);
      } else {
        shown_sample_ = image;
        sample_view_->setPixmap(QPixmap::fromImage(image));
        sample_caption_->setText(QString("%1 of %2: %3").arg(index + 1).arg(sample_paths_.size()).arg(sample_captions_[index]));
      }
      emit sampleShown(!image.isNull());
    }
    if (sample_wanted_ >= 0 && sample_wanted_ != index) showSample(std::exchange(sample_wanted_, -1));
  });
}

RunDashboard::~RunDashboard() { sample_loader_.waitForFinished(); }

void RunDashboard::clear(const QString& run_dir) {
  run_dir_ = run_dir;
  for (auto* chart : charts_->charts()) chart->clear();
  system_chart_->setTitle("Machine");
  sample_paths_.clear();
  sample_captions_.clear();
  sample_images_seen_.clear();
  sample_wanted_ = -1;
  sample_slider_->setRange(0, 0);
  sample_slider_->setEnabled(false);
  sample_view_->clear();
  shown_sample_ = QImage();
  sample_caption_->setText("No samples yet.");
  warnings_->clear();
  side_->setTabText(1, "Warnings");
  quality_->clear();
  if (alarm_->count() > 0) {
    alarm_->reset();
    emit alarmsChanged(0);
  }
  progress_->setValue(0);
  progress_->setFormat("—");
  eta_->clear();
  first_started_time_ = -1;
  training_status_ = TrainingStatus();
  recent_waits_.clear();
  starved_share_ = -1;
  if (!cache_building_) starved_->hide();
}

void RunDashboard::setStatus(const QString& text) { status_->setText(text); }
QString RunDashboard::statusText() const { return status_->text(); }
int RunDashboard::warningCount() const { return warnings_->count(); }
widgets::TrainingChart& RunDashboard::qualityChart() { return quality_->quality(); }
widgets::TrainingChart& RunDashboard::distanceChart() { return quality_->distance(); }
bool RunDashboard::qualityChartsShown() const { return quality_->isShown(); }
int RunDashboard::alarmCount() const { return alarm_->count(); }
QString RunDashboard::alarmText() const { return alarm_->text(); }
QString RunDashboard::progressText() const { return progress_->format(); }

void RunDashboard::showProgress(double fraction, const QString& text) {
  progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
  progress_->setFormat(text);
}

void RunDashboard::addEvents(const std::vector<StreamEvent>& batch) {
  // The progress line is set once per batch of events, not once per step.
  QString progress_format, eta_text;
  double progress = 0;
  const int samples_before = sample_paths_.size();
  const int alarms_before = alarm_->count();
  for (const StreamEvent& event : batch) {
    const double t = event.time - first_started_time_;
    if (const auto* started = std::get_if<events::RunStarted>(&event.event)) {
      training_status_.onRunStarted(*started, event.time);
      if (first_started_time_ < 0) first_started_time_ = event.time;
      epochs_total_ = started->has_config ? countText(started->config_epochs) : 0;
      const double images = countText(started->images_seen);
      if (std::isfinite(images)) {
        for (auto* chart : charts_->charts()) chart->truncateFrom(images + 0.5);
        while (!sample_images_seen_.empty() && sample_images_seen_.back() > images) {
          sample_images_seen_.pop_back();
          sample_paths_.removeLast();
          sample_captions_.removeLast();
        }
      }
      const QString device = started->device.empty() ? QString("?") : QString::fromStdString(started->device);
      status_->setText(QString("Running on %1: %2").arg(device, run_dir_));
    } else if (const auto* step = std::get_if<events::Step>(&event.event)) {
      const double images = countText(step->images_seen);
      const double epoch = events::fractionalEpoch(*step, 0, std::nan(""));
      loss_chart_->append(loss_d_, images, epoch, step->loss_d, t);
      loss_chart_->append(loss_g_, images, epoch, step->loss_g, t);
      d_chart_->append(d_x_, images, epoch, step->d_x, t);
      d_chart_->append(d_gz1_, images, epoch, step->d_g_z1, t);
      d_chart_->append(d_gz2_, images, epoch, step->d_g_z2, t);
      speed_chart_->append(speed_, images, epoch, step->images_per_s, t);
      speed_chart_->append(wait_, images, epoch, 100 * step->data_wait_fraction, t);
      quality_->addStep(*step, images, epoch, t);
      training_status_.onStep(*step, event.time);
      updateStarved(step->data_wait_fraction);
      if (epochs_total_ > 0) {
        progress = std::clamp(epoch / epochs_total_, 0.0, 1.0);
        progress_format = QString("epoch %1/%2, step %3").arg(countText(step->epoch)).arg(epochs_total_).arg(countText(step->step));
        const double eta = training_status_.runEtaSeconds();
        eta_text = std::isfinite(eta) ? "ETA " + QString::fromStdString(formatDuration(eta)) : QString();
      }
    } else if (const auto* end = std::get_if<events::EpochEnd>(&event.event)) {
      training_status_.onEpochEnd(*end, event.time);
    } else if (const auto* imported = std::get_if<events::ImportedLosses>(&event.event)) {
      // `streetgan import`'s loss history, many pairs to an event, placed as RunHistory places them.
      if (!std::isfinite(imported->first_step) || !std::isfinite(imported->images_per_step)) continue;
      for (const auto& [series, values] : {std::pair{loss_d_, &imported->loss_d}, std::pair{loss_g_, &imported->loss_g}}) {
        for (std::size_t k = 0; k < values->size(); ++k) {
          const events::ImportedPoint point = events::importedPoint(*imported, k);
          loss_chart_->append(series, point.images_seen, point.epoch, (*values)[k], t);
        }
      }
    } else if (const auto* samples = std::get_if<events::Samples>(&event.event)) {
      sample_paths_ << QDir(run_dir_).filePath(QString::fromStdString(samples->path));
      sample_captions_ << QString("step %1, epoch %2, %3 images seen")
                              .arg(countText(samples->step)).arg(countText(samples->epoch)).arg(countText(samples->images_seen));
      sample_images_seen_.push_back(countText(samples->images_seen));
    } else if (const auto* parzen = std::get_if<events::Parzen>(&event.event)) {
      const double images = countText(parzen->images_seen), epoch = countText(parzen->epoch);
      const double mean = parzen->mean_ll, err = parzen->standard_error;
      parzen_chart_->append(parzen_mean_, images, epoch, mean, t);
      parzen_chart_->append(parzen_low_, images, epoch, mean - err, t);
      parzen_chart_->append(parzen_high_, images, epoch, mean + err, t);
    } else if (const auto* metrics = std::get_if<events::Metrics>(&event.event)) {
      quality_->addMetrics(*metrics, t);
    } else if (const auto* system = std::get_if<events::System>(&event.event)) {
      addSystem(*system, t);
    } else if (const auto* warning = std::get_if<events::Warning>(&event.event)) {
      QString text = QString::fromStdString(warning->message);
      if (warning->path) text += " — " + QString::fromStdString(*warning->path);
      warnings_->addItem(text);
      side_->setTabText(1, QString("Warnings (%1)").arg(warnings_->count()));
      if (warning->alarm) {
        warnings_->item(warnings_->count() - 1)->setForeground(QColor(211, 84, 0));
        alarm_->addAlarm(QString::fromStdString(warning->message));
      }
    } else if (std::holds_alternative<events::RunFinished>(event.event)) {
      eta_->clear();
      eta_text.clear();
    }
  }
  if (sample_paths_.size() != samples_before) {
    const bool at_end = sample_slider_->value() == sample_slider_->maximum();
    sample_slider_->setEnabled(!sample_paths_.isEmpty());
    sample_slider_->setRange(0, std::max<int>(0, sample_paths_.size() - 1));
    if (at_end || samples_before == 0) {
      sample_slider_->setValue(sample_paths_.size() - 1);
      showSample(sample_paths_.size() - 1);
    }
  }
  if (!progress_format.isEmpty()) {
    showProgress(progress, progress_format);
    eta_->setText(eta_text);
  }
  if (alarm_->count() != alarms_before) emit alarmsChanged(alarm_->count());
}

void RunDashboard::updateStarved(double wait_fraction) {
  recent_waits_.add(wait_fraction);
  if (!std::isfinite(wait_fraction)) return;
  const std::optional<double> recent = recent_waits_.share();
  if (!recent) return;
  const double share = *recent;
  starved_share_ = share > 0.2 ? share : -1;
  if (cache_building_) return;
  starved_->setVisible(starved_share_ > 0);
  if (starved_share_ > 0) {
    starved_->setText(QString("Data-starved: %1% waiting on data · Build Cache…").arg(std::lround(100 * share)));
    starved_->setToolTip("Over the last steps, the loader could not decode images as fast as the run trained. "
                         "A cache of the decoded images lets the next run read them instead.");
  }
}

void RunDashboard::showCacheBuild(const QString& text, bool running) {
  cache_building_ = running;
  starved_->setText(text);
  starved_->setVisible(running || !text.isEmpty());
  starved_->setEnabled(!running);
}

void RunDashboard::addSystem(const events::System& system, double seconds) {
  const double images = countText(system.images_seen);
  const double epoch = countText(system.epoch) - 1;
  const double cores = system.cores, cpu = system.cpu_percent;
  const double rss = system.rss_bytes, total = system.host_memory_total_bytes;
  const double available = system.host_memory_available_bytes, read = system.loader_bytes_per_s;
  system_chart_->append(cpu_, images, epoch, cores > 0 ? cpu / cores : cpu, seconds);
  system_chart_->append(memory_, images, epoch, total > 0 ? 100 * rss / total : std::nan(""), seconds);
  const bool has_gpu = system.has_gpu;
  const double gpu_util = system.gpu_utilization_percent;
  const double gpu_used = system.gpu_memory_used_bytes;
  const double gpu_total = system.gpu_memory_total_bytes;
  system_chart_->append(gpu_, images, epoch, gpu_util, seconds);
  system_chart_->append(gpu_memory_, images, epoch, gpu_total > 0 ? 100 * gpu_used / gpu_total : std::nan(""), seconds);
  // The absolute figures, in the title: they take no height from the plot.
  auto gib = [](double bytes) { return QString::number(bytes / 1073741824.0, 'f', 1) + " GiB"; };
  QStringList parts;
  if (std::isfinite(cpu)) parts << QString("CPU %1%").arg(std::lround(cpu));
  if (std::isfinite(rss)) parts << gib(rss) + " resident";
  if (std::isfinite(available)) parts << gib(available) + " free";
  if (std::isfinite(read) && read >= 0) parts << QString("loader %1 MB/s").arg(read / 1e6, 0, 'f', 1);
  if (has_gpu) {
    if (std::isfinite(gpu_util)) parts << QString("GPU %1%").arg(std::lround(gpu_util));
    if (std::isfinite(gpu_used) && std::isfinite(gpu_total)) parts << gib(gpu_used) + " / " + gib(gpu_total);
    const double watts = system.gpu_power_w;
    if (std::isfinite(watts) && watts >= 0) parts << QString("%1 W").arg(std::lround(watts));
  }
  system_chart_->setTitle("Machine: " + parts.join(" · "));
  system_chart_->setToolTip(parts.join("\n"));  // the title is cut short in a narrow chart
}

void RunDashboard::showSample(int index) {
  if (index < 0 || index >= sample_paths_.size()) return;
  if (sample_loading_ >= 0) {  // one decode at a time; the newest wish waits for it
    if (index != sample_loading_) sample_wanted_ = index;
    return;
  }
  sample_loading_ = index;
  const QString path = sample_paths_[index];
  const QSize box = sample_view_->size();
  sample_loader_.setFuture(QtConcurrent::run(widgets::studioWorkers(), [path, box] {
    QImage image(path);
    return image.isNull() ? image : image.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  }));
}

void RunDashboard::refreshSample(const QString& path) {
  const int index = sample_slider_->value();
  if (index >= 0 && index < sample_paths_.size() && QFileInfo(sample_paths_[index]) == QFileInfo(path)) showSample(index);
}

}  // namespace streetgan::studio
