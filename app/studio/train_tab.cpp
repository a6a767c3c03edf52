#include "train_tab.h"

#include "child_process.h"
#include "local_process_transport.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSlider>
#include <QSplitter>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

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

TrainTab::TrainTab(QString program, QString runs_root, QWidget* parent)
    : QWidget(parent), program_(std::move(program)), runs_root_(std::move(runs_root)) {
  // Left: what to train.
  preset_ = new QComboBox(this);
  for (const std::string& name : presetNames()) preset_->addItem(QString::fromStdString(name));
  preset_->addItem("custom");
  dataroot_ = new QLineEdit(this);
  dataroot_->setPlaceholderText("folder of images (plain tree or MSLS layout)");
  auto* browse = new QPushButton("Browse…", this);
  demo_ = new QPushButton("Use Demo Data", this);
  demo_->setToolTip("Procedural street scenes (MSLS layout), rendered once on this computer");
  form_ = new widgets::ConfigForm();
  auto* form_area = new QScrollArea(this);
  form_area->setWidget(form_);
  form_area->setWidgetResizable(true);
  start_ = new QPushButton("Start", this);
  stop_ = new QPushButton("Stop", this);
  resume_ = new QPushButton("Resume", this);
  start_->setShortcut(QKeySequence("Ctrl+R"));
  start_->setToolTip("Start a new run of this configuration (Ctrl+R)");
  stop_->setToolTip("Finish the current step, write a checkpoint and stop");
  resume_->setToolTip("Continue the last run from its latest checkpoint");

  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  auto* top = new QGridLayout();
  top->addWidget(new QLabel("Preset", left), 0, 0);
  top->addWidget(preset_, 0, 1, 1, 2);
  top->addWidget(new QLabel("Data set", left), 1, 0);
  top->addWidget(dataroot_, 1, 1);
  top->addWidget(browse, 1, 2);
  top->addWidget(demo_, 2, 1, 1, 2);
  left_layout->addLayout(top);
  left_layout->addWidget(form_area, 1);
  auto* buttons = new QHBoxLayout();
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  buttons->addWidget(resume_);
  left_layout->addLayout(buttons);

  // Right: the run.
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
  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->addWidget(status_);
  auto* progress_row = new QHBoxLayout();
  progress_row->addWidget(progress_, 1);
  progress_row->addWidget(eta_);
  right_layout->addLayout(progress_row);
  right_layout->addLayout(charts, 3);
  right_layout->addLayout(bottom, 2);

  auto* splitter = new QSplitter(this);
  splitter->addWidget(left);
  splitter->addWidget(right);
  splitter->setStretchFactor(1, 3);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);

  connect(preset_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    auto preset = presetConfig(name.toStdString());
    if (!preset) return;  // "custom": keep the form as it is
    TrainConfig config = *preset;
    config.dataroot = form_->config().dataroot;
    form_->setConfig(config);
  });
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, "Data set folder", dataroot_->text());
    if (!dir.isEmpty()) setDataroot(dir);
  });
  connect(demo_, &QPushButton::clicked, this,
          [this] { useDemoData(QDir::cleanPath(QDir(runs_root_).absoluteFilePath("../demo-data"))); });
  connect(dataroot_, &QLineEdit::editingFinished, this, [this] { setDataroot(dataroot_->text()); });
  connect(start_, &QPushButton::clicked, this, [this] { startRun(); });
  connect(stop_, &QPushButton::clicked, this, &TrainTab::stopRun);
  connect(resume_, &QPushButton::clicked, this, [this] { resumeRun(); });
  connect(sample_slider_, &QSlider::valueChanged, this, &TrainTab::showSample);
  // Four charts redrawing in the same event-loop pass would stall it: they take turns, one per
  // 60 ms tick (each is redrawn at most every 240 ms).
  chart_turns_.setInterval(60);
  connect(&chart_turns_, &QTimer::timeout, this, [this] {
    widgets::TrainingChart* charts[] = {loss_chart_, d_chart_, speed_chart_, parzen_chart_};
    charts[next_chart_++ % 4]->redrawIfChanged();
  });
  for (auto* chart : {loss_chart_, d_chart_, speed_chart_, parzen_chart_}) chart->setRedrawInterval(0);
  chart_turns_.start();
  for (auto* chart : {loss_chart_, d_chart_, speed_chart_, parzen_chart_}) {
    connect(chart, &widgets::TrainingChart::exportImageRequested, this, [this, chart] {
      const QString path = QFileDialog::getSaveFileName(this, "Save Chart Image", QString(), "PNG image (*.png)");
      if (!path.isEmpty() && !chart->image().save(path, "PNG"))
        QMessageBox::warning(this, "Save Chart Image", "Cannot write " + path + ".");
    });
    connect(chart, &widgets::TrainingChart::exportCsvRequested, this, [this, chart] {
      const QString path = QFileDialog::getSaveFileName(this, "Save Chart Data", QString(), "CSV (*.csv)");
      if (path.isEmpty()) return;
      QSaveFile file(path);
      if (!file.open(QIODevice::WriteOnly) || file.write(chart->csv().toUtf8()) < 0 || !file.commit())
        QMessageBox::warning(this, "Save Chart Data", "Cannot write " + path + ": " + file.errorString());
    });
  }
  connect(form_, &widgets::ConfigForm::validityChanged, this, &TrainTab::updateButtons);
  auto preset = presetConfig("naive-64");
  if (preset) form_->setConfig(*preset);
  status_->setText("Choose a data set folder, or Use Demo Data to train on procedural street scenes.");
  updateButtons();
}

void TrainTab::useDemoData(const QString& folder) {
  const QString clean = QDir::cleanPath(folder);
  if (QFileInfo(clean + "/train_val").isDir()) {
    setDataroot(clean);
    status_->setText("Data set: the demo street scenes in " + clean);
    emit demoDataFinished(true, clean);
    return;
  }
  if (demo_process_) return;
  demo_process_ = std::make_unique<ChildProcess>();
  demo_stderr_.clear();
  status_->setText("Rendering the demo street scenes into " + clean + " …");
  progress_->setValue(0);
  connect(demo_process_.get(), &ChildProcess::standardError, this, [this](const QByteArray& bytes) {
    demo_stderr_ += bytes;
    // "rendered 16/240 images": show the latest count.
    const int at = demo_stderr_.lastIndexOf("rendered ");
    if (at < 0) return;
    const QByteArray tail = demo_stderr_.mid(at + 9).split(' ').value(0);
    const QList<QByteArray> parts = tail.split('/');
    if (parts.size() == 2 && parts[1].toInt() > 0) {
      progress_->setValue(1000 * parts[0].toInt() / parts[1].toInt());
      progress_->setFormat("demo data: " + QString::fromUtf8(tail) + " images");
    }
  });
  connect(demo_process_.get(), &ChildProcess::finished, this, [this, clean](int exit_code, int) {
    demo_process_.release()->deleteLater();
    const bool ok = exit_code == 0 && QFileInfo(clean + "/train_val").isDir();
    if (ok) {
      setDataroot(clean);
      status_->setText("Data set: the demo street scenes in " + clean);
      progress_->setFormat("demo data ready");
      progress_->setValue(1000);
    } else {
      const QString why = QString::fromUtf8(demo_stderr_).trimmed().section('\n', -1);
      status_->setText("Could not render the demo data: " + (why.isEmpty() ? QString("exit code %1").arg(exit_code) : why));
    }
    updateButtons();
    emit demoDataFinished(ok, ok ? clean : status_->text());
  });
  QString error;
  QDir().mkpath(QFileInfo(clean).absolutePath());
  if (!demo_process_->start(program_, {"demo-data", "--out", clean, "--cities", "4", "--sequences", "6", "--frames", "10"},
                            &error)) {
    demo_process_.reset();
    status_->setText("Could not render the demo data: " + error);
    emit demoDataFinished(false, error);
  }
  updateButtons();
}

TrainTab::~TrainTab() = default;

void TrainTab::setDataroot(const QString& path) {
  dataroot_->setText(path);
  form_->enterText("dataroot", path);
}

QString TrainTab::statusText() const { return status_->text(); }
int TrainTab::warningCount() const { return warnings_->count(); }

bool TrainTab::startRun() {
  if (!form_->isValid()) {
    status_->setText("Fix the fields marked in red first.");
    return false;
  }
  const TrainConfig& config = form_->config();
  if (config.dataroot.empty() || !QFileInfo(QString::fromStdString(config.dataroot)).isDir()) {
    status_->setText("Choose a data set folder first (it must exist).");
    return false;
  }
  QDir().mkpath(runs_root_);
  // A fresh run directory: <root>/<name>-<date-time>.
  const QString name = QString::fromStdString(config.name) + "-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
  TrainingRequest request;
  request.run_dir = QDir(runs_root_).filePath(name);
  config_file_ = std::make_unique<QTemporaryFile>(QDir::temp().filePath("streetgan-config-XXXXXX.json"));
  if (!config_file_->open()) {
    status_->setText("Cannot write the config file: " + config_file_->errorString());
    return false;
  }
  config_file_->write(QByteArray::fromStdString(configToJson(config).dump(2)));
  config_file_->flush();
  request.config_file = config_file_->fileName();
  return launch(request);
}

bool TrainTab::resumeRun(const QString& run_dir) {
  TrainingRequest request;
  request.run_dir = run_dir.isEmpty() ? run_dir_ : run_dir;
  if (request.run_dir.isEmpty()) {
    status_->setText("No run to resume yet.");
    return false;
  }
  request.resume = true;
  request.extra_arguments = {"--epochs", QString::number(form_->config().epochs)};
  return launch(request);
}

bool TrainTab::launch(const TrainingRequest& request) {
  if (session_ && session_->isActive()) return false;
  clearRun();
  run_dir_ = request.run_dir;
  session_ = std::make_unique<TrainingSession>(std::make_unique<LocalProcessTransport>(program_));
  connect(session_.get(), &TrainingSession::eventsReceived, this, &TrainTab::onEvents);
  connect(session_.get(), &TrainingSession::finished, this, &TrainTab::onFinished);
  connect(session_.get(), &TrainingSession::stateChanged, this, [this] { updateButtons(); });
  status_->setText((request.resume ? "Resuming " : "Starting ") + run_dir_ + " …");
  const bool started = session_->start(request);
  updateButtons();
  return started;
}

void TrainTab::stopRun() {
  if (!session_) return;
  session_->stop();
  status_->setText("Stopping after the current step …");
}

void TrainTab::clearRun() {
  for (auto* chart : {loss_chart_, d_chart_, speed_chart_, parzen_chart_}) chart->clear();
  sample_paths_.clear();
  sample_captions_.clear();
  sample_slider_->setRange(0, 0);
  sample_slider_->setEnabled(false);
  sample_view_->clear();
  sample_caption_->setText("No samples yet.");
  warnings_->clear();
  progress_->setValue(0);
  progress_->setFormat("—");
  eta_->clear();
}

void TrainTab::onEvents(const std::vector<StreamEvent>& events) {
  // The progress line is set once per batch of events, not once per step.
  QString progress_format, eta_text;
  for (const StreamEvent& event : events) {
    const auto& body = event.body;
    if (event.type == "run_started") {
      started_time_ = event.time;
      epochs_total_ = body.contains("config") ? number(body["config"], "epochs") : 0;
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
        const double done = std::clamp(epoch / epochs_total_, 0.0, 1.0);
        last_progress_ = done;
        progress_format = QString("epoch %1/%2, step %3").arg(number(body, "epoch")).arg(epochs_total_).arg(number(body, "step"));
        const double elapsed = event.time - started_time_;
        eta_text = done > 0 ? "ETA " + duration(elapsed * (1 - done) / done) : QString();
      }
    } else if (event.type == "samples") {
      sample_paths_ << QDir(run_dir_).filePath(QString::fromStdString(body.value("path", std::string())));
      sample_captions_ << QString("step %1, epoch %2, %3 images seen")
                              .arg(number(body, "step")).arg(number(body, "epoch")).arg(number(body, "images_seen"));
      const bool at_end = sample_slider_->value() == sample_slider_->maximum();
      sample_slider_->setEnabled(true);
      sample_slider_->setRange(0, sample_paths_.size() - 1);
      if (at_end) sample_slider_->setValue(sample_paths_.size() - 1);
      if (sample_paths_.size() == 1) showSample(0);
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
    }
  }
  if (!progress_format.isEmpty()) {
    progress_->setValue(static_cast<int>(last_progress_ * 1000));
    progress_->setFormat(progress_format);
    eta_->setText(eta_text);
  }
}

void TrainTab::showSample(int index) {
  if (index < 0 || index >= sample_paths_.size()) return;
  // A sample grid is a small PNG (about 100 KB): quick enough to read here.
  QImage image(sample_paths_[index]);
  if (image.isNull()) {
    sample_caption_->setText("Cannot read " + sample_paths_[index]);
    return;
  }
  sample_view_->setPixmap(QPixmap::fromImage(image.scaled(sample_view_->size(), Qt::KeepAspectRatio, Qt::SmoothTransformation)));
  sample_caption_->setText(QString("%1 of %2: %3").arg(index + 1).arg(sample_paths_.size()).arg(sample_captions_[index]));
}

void TrainTab::onFinished(SessionState state, const QString& message) {
  status_->setText(TrainingSession::stateName(state).left(1).toUpper() + TrainingSession::stateName(state).mid(1) +
                   ": " + message + "\n" + run_dir_);
  config_file_.reset();
  updateButtons();
  emit runFinished(state, message);
}

void TrainTab::updateButtons() {
  const bool active = session_ && session_->isActive();
  start_->setEnabled(!active && form_->isValid() && !demo_process_);
  demo_->setEnabled(!demo_process_);
  stop_->setEnabled(active && session_->state() != SessionState::Stopping);
  resume_->setEnabled(!active && !run_dir_.isEmpty());
}

}  // namespace streetgan::studio
