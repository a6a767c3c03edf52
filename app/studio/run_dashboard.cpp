#include "app/studio/run_dashboard.h"
#include "widgets/worker_pool.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressBar>
#include <QSaveFile>
#include <QSlider>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace streetgan::studio {

namespace {

double number(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  return it != body.end() && it->is_number() ? it->get<double>() : std::nan("");
}

QString duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "—";
  const qint64 s = static_cast<qint64>(seconds + 0.5);
  if (s >= 3600) return QString("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
  if (s >= 60) return QString("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QString("%1 s").arg(s);
}

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
  loss_chart_ = new widgets::TrainingChart("Loss", this);
  loss_d_ = loss_chart_->addSeries("loss_d", QColor(31, 119, 180));
  loss_g_ = loss_chart_->addSeries("loss_g", QColor(255, 127, 14));
  d_chart_ = new widgets::TrainingChart("Discriminator outputs", this);
  d_x_ = d_chart_->addSeries("D(x)", QColor(44, 160, 44));
  d_gz1_ = d_chart_->addSeries("D(G(z)) before D's step", QColor(214, 39, 40));
  d_gz2_ = d_chart_->addSeries("D(G(z)) after", QColor(148, 103, 189));
  speed_chart_ = new widgets::TrainingChart("Throughput", this);
  speed_ = speed_chart_->addSeries("images/s", QColor(23, 190, 207));
  wait_ = speed_chart_->addSeries("% of time waiting on data", QColor(127, 127, 127));
  parzen_chart_ = new widgets::TrainingChart("Parzen log-likelihood (test split, mean ± stderr)", this);
  parzen_mean_ = parzen_chart_->addSeries("mean", QColor(31, 119, 180));
  parzen_low_ = parzen_chart_->addSeries("mean − stderr", QColor(31, 119, 180, 110));
  parzen_high_ = parzen_chart_->addSeries("mean + stderr", QColor(31, 119, 180, 110));
  parzen_chart_->setSmoothing(0);
  parzen_chart_->setEmptyText("No Parzen estimate yet. A run estimates one every parzen.every_epochs epochs "
                              "(0: never).");
  loss_chart_->setEmptyText("No steps yet.");
  d_chart_->setEmptyText("No steps yet.");
  speed_chart_->setEmptyText("No steps yet.");
  sample_view_ = new QLabel(this);
  sample_view_->setMinimumSize(256, 256);
  sample_view_->setAlignment(Qt::AlignCenter);
  sample_caption_ = new QLabel("No samples yet.", this);
  sample_slider_ = new QSlider(Qt::Horizontal, this);
  sample_slider_->setEnabled(false);
  warnings_ = new QListWidget(this);

  auto* charts = new QGridLayout();
  charts->addWidget(loss_chart_, 0, 0);
  charts->addWidget(d_chart_, 0, 1);
  charts->addWidget(speed_chart_, 1, 0);
  charts->addWidget(parzen_chart_, 1, 1);
  auto* samples_box = new QGroupBox("Samples", this);
  auto* samples_layout = new QVBoxLayout(samples_box);
  samples_layout->addWidget(sample_view_, 1);
  samples_layout->addWidget(sample_slider_);
  samples_layout->addWidget(sample_caption_);
  auto* warnings_box = new QGroupBox("Warnings", this);
  auto* warnings_layout = new QVBoxLayout(warnings_box);
  warnings_layout->addWidget(warnings_);
  auto* bottom = new QHBoxLayout();
  bottom->addWidget(samples_box, 1);
  bottom->addWidget(warnings_box, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(status_);
  auto* progress_row = new QHBoxLayout();
  progress_row->addWidget(progress_, 1);
  progress_row->addWidget(eta_);
  layout->addLayout(progress_row);
  layout->addLayout(charts, 3);
  layout->addLayout(bottom, 2);

  connect(sample_slider_, &QSlider::valueChanged, this, &RunDashboard::showSample);
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
  // Four charts redrawing in the same event-loop pass would stall it: they take turns, one per
  // 60 ms tick (each is redrawn at most every 240 ms).
  chart_turns_.setInterval(60);
  connect(&chart_turns_, &QTimer::timeout, this, [this] {
    widgets::TrainingChart* all[] = {loss_chart_, d_chart_, speed_chart_, parzen_chart_};
    all[next_chart_++ % 4]->redrawIfChanged();
  });
  for (auto* chart : {loss_chart_, d_chart_, speed_chart_, parzen_chart_}) {
    chart->setRedrawInterval(0);
    connect(chart, &widgets::TrainingChart::exportImageRequested, this, [this, chart] { saveChartImage(chart); });
    connect(chart, &widgets::TrainingChart::exportCsvRequested, this, [this, chart] { saveChartCsv(chart); });
  }
  chart_turns_.start();
}

RunDashboard::~RunDashboard() { sample_loader_.waitForFinished(); }

void RunDashboard::saveChartImage(widgets::TrainingChart* chart) {
  const QString path = QFileDialog::getSaveFileName(this, "Save Chart Image", QString(), "PNG image (*.png)");
  if (path.isEmpty()) return;
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || !chart->image().save(&file, "PNG") || !file.commit())
    QMessageBox::warning(this, "Save Chart Image", "Cannot write " + path + ": " + file.errorString());
}

void RunDashboard::saveChartCsv(widgets::TrainingChart* chart) {
  const QString path = QFileDialog::getSaveFileName(this, "Save Chart Data", QString(), "CSV (*.csv)");
  if (path.isEmpty()) return;
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(chart->csv().toUtf8()) < 0 || !file.commit())
    QMessageBox::warning(this, "Save Chart Data", "Cannot write " + path + ": " + file.errorString());
}

void RunDashboard::clear(const QString& run_dir) {
  run_dir_ = run_dir;
  for (auto* chart : {loss_chart_, d_chart_, speed_chart_, parzen_chart_}) chart->clear();
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
  progress_->setValue(0);
  progress_->setFormat("—");
  eta_->clear();
}

void RunDashboard::setStatus(const QString& text) { status_->setText(text); }
QString RunDashboard::statusText() const { return status_->text(); }
int RunDashboard::warningCount() const { return warnings_->count(); }
QString RunDashboard::progressText() const { return progress_->format(); }

void RunDashboard::showProgress(double fraction, const QString& text) {
  progress_->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
  progress_->setFormat(text);
}

void RunDashboard::addEvents(const std::vector<StreamEvent>& events) {
  // The progress line is set once per batch of events, not once per step.
  QString progress_format, eta_text;
  double progress = 0;
  const int samples_before = sample_paths_.size();
  for (const StreamEvent& event : events) {
    const auto& body = event.body;
    if (event.type == "run_started") {
      started_time_ = event.time;
      epochs_total_ = body.contains("config") ? number(body["config"], "epochs") : 0;
      started_epochs_ = std::isfinite(number(body, "epoch")) ? number(body, "epoch") : 0;
      const double images = number(body, "images_seen");
      if (std::isfinite(images)) {
        for (auto* chart : {loss_chart_, d_chart_, speed_chart_, parzen_chart_}) chart->truncateFrom(images + 0.5);
        while (!sample_images_seen_.empty() && sample_images_seen_.back() > images) {
          sample_images_seen_.pop_back();
          sample_paths_.removeLast();
          sample_captions_.removeLast();
        }
      }
      status_->setText(QString("Running on %1: %2").arg(QString::fromStdString(body.value("device", std::string("?"))), run_dir_));
    } else if (event.type == "step") {
      const double images = number(body, "images_seen");
      const double iterations = number(body, "iterations");
      const double epoch = number(body, "epoch") - 1 + number(body, "iteration") / iterations;
      loss_chart_->append(loss_d_, images, epoch, number(body, "loss_d"));
      loss_chart_->append(loss_g_, images, epoch, number(body, "loss_g"));
      d_chart_->append(d_x_, images, epoch, number(body, "d_x"));
      d_chart_->append(d_gz1_, images, epoch, number(body, "d_g_z1"));
      d_chart_->append(d_gz2_, images, epoch, number(body, "d_g_z2"));
      speed_chart_->append(speed_, images, epoch, number(body, "images_per_s"));
      speed_chart_->append(wait_, images, epoch, 100 * number(body, "data_wait_fraction"));
      if (epochs_total_ > 0) {
        progress = std::clamp(epoch / epochs_total_, 0.0, 1.0);
        progress_format = QString("epoch %1/%2, step %3").arg(number(body, "epoch")).arg(epochs_total_).arg(number(body, "step"));
        // This process's pace: the epochs it has done since it started, over the time it took.
        const double done_here = epoch - started_epochs_;
        const double elapsed = event.time - started_time_;
        eta_text = done_here > 0 ? "ETA " + duration(elapsed * (epochs_total_ - epoch) / done_here) : QString();
      }
    } else if (event.type == "samples") {
      sample_paths_ << QDir(run_dir_).filePath(QString::fromStdString(body.value("path", std::string())));
      sample_captions_ << QString("step %1, epoch %2, %3 images seen")
                              .arg(number(body, "step")).arg(number(body, "epoch")).arg(number(body, "images_seen"));
      sample_images_seen_.push_back(number(body, "images_seen"));
    } else if (event.type == "parzen") {
      const double images = number(body, "images_seen"), epoch = number(body, "epoch");
      const double mean = number(body, "mean_ll"), err = number(body, "stderr");
      parzen_chart_->append(parzen_mean_, images, epoch, mean);
      parzen_chart_->append(parzen_low_, images, epoch, mean - err);
      parzen_chart_->append(parzen_high_, images, epoch, mean + err);
    } else if (event.type == "warning") {
      QString text = QString::fromStdString(body.value("message", std::string()));
      if (body.contains("path") && body["path"].is_string()) text += " — " + QString::fromStdString(body["path"].get<std::string>());
      warnings_->addItem(text);
    } else if (event.type == "run_finished") {
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
