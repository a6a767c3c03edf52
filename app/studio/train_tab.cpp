#include "app/studio/train_tab.h"

#include "app/studio/control/run_checkpoints.h"
#include "widgets/dataset_picker.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

namespace streetgan::studio {

TrainTab::TrainTab(QString program, QString runs_root, QWidget* parent)
    : QWidget(parent),
      runs_root_(std::move(runs_root)),
      demo_job_(program),
      cache_job_(program),
      launcher_(program) {
  QWidget* left = buildSettingsPane();
  dashboard_ = new RunDashboard(this);
  auto* splitter = new QSplitter(this);
  splitter->addWidget(left);
  splitter->addWidget(dashboard_);
  splitter->setStretchFactor(1, 3);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(splitter);

  connectSettings();
  connectLauncher();
  auto preset = presetConfig("naive-64");
  if (preset) form_->setConfig(*preset);
  dashboard_->setStatus("Choose a data set folder, or Use Demo Data to train on procedural street scenes.");
  rebuildAlsoOn();
  updateButtons();
}

// Left: what to train, where, and the buttons that start and stop it.
QWidget* TrainTab::buildSettingsPane() {
  preset_ = new QComboBox(this);
  for (const std::string& name : presetNames()) preset_->addItem(QString::fromStdString(name));
  preset_->addItem("custom");
  picker_ = new widgets::DatasetPicker(this);
  form_ = new widgets::ConfigForm();
  auto* form_area = new QScrollArea(this);
  form_area->setWidget(form_);
  form_area->setWidgetResizable(true);
  start_ = new QPushButton("Start", this);
  stop_ = new QPushButton("Stop", this);
  resume_ = new QPushButton("Resume", this);
  start_->setShortcut(QKeySequence("Ctrl+R"));
  start_->setToolTip("Start a new run of this configuration (Ctrl+R)");
  stop_->setShortcut(QKeySequence("Ctrl+."));
  resume_->setShortcut(QKeySequence("Ctrl+Shift+R"));
  stop_->setToolTip("Finish the current step, write a checkpoint and stop (Ctrl+.)");
  resume_->setToolTip("Continue the run shown from its latest checkpoint, up to the epochs set here (Ctrl+Shift+R)");
  fetch_checkpoint_ = new QPushButton("Fetch Checkpoint", this);
  fetch_checkpoint_->setToolTip("Copy the remote run's latest checkpoint to this computer, for the Explore tab");
  run_on_ = new QComboBox(this);
  run_on_->addItem("This computer");
  run_on_->setToolTip("Where new runs train: this computer, or a remote host over SSH");
  also_on_ = new QToolButton(this);
  also_on_->setText("Also on…");
  also_on_->setPopupMode(QToolButton::InstantPopup);
  also_on_->setMenu(new QMenu(also_on_));
  also_on_->setToolTip("Train new runs on more hosts as well, one node each: the host in Run on is node 0 and "
                       "keeps the run's files; every host runs the same ranks and reads the same data set path");
  auto* hosts = new QPushButton("Hosts…", this);
  hosts->setToolTip("Add or edit remote hosts and test their connection");

  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  auto* top = new QGridLayout();
  top->addWidget(new QLabel("Preset", left), 0, 0);
  top->addWidget(preset_, 0, 1);
  top->addWidget(new QLabel("Run on", left), 1, 0);
  auto* run_on_row = new QHBoxLayout();
  run_on_row->addWidget(run_on_, 1);
  run_on_row->addWidget(also_on_);
  run_on_row->addWidget(hosts);
  top->addLayout(run_on_row, 1, 1);
  top->addWidget(new QLabel("Data set", left), 2, 0, Qt::AlignTop);
  top->addWidget(picker_, 2, 1);
  left_layout->addLayout(top);
  left_layout->addWidget(form_area, 1);
  auto* buttons = new QHBoxLayout();
  buttons->addWidget(start_);
  buttons->addWidget(stop_);
  buttons->addWidget(resume_);
  buttons->addWidget(fetch_checkpoint_);
  left_layout->addLayout(buttons);
  connect(hosts, &QPushButton::clicked, this, &TrainTab::hostsRequested);
  return left;
}

void TrainTab::connectSettings() {
  connect(preset_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    auto preset = presetConfig(name.toStdString());
    if (!preset) return;  // "custom": keep the form as it is
    TrainConfig config = *preset;
    config.dataroot = form_->config().dataroot;
    form_->setConfig(config);
  });
  connect(picker_, &widgets::DatasetPicker::pathChosen, this, &TrainTab::setDataroot);
  connect(picker_, &widgets::DatasetPicker::demoRequested, this, [this] {
    preset_->setCurrentText("demo");  // the preset made for the demo scenes
    useDemoData(DemoDataJob::defaultFolder(runs_root_));
  });
  connect(dashboard_, &RunDashboard::buildCacheRequested, this, &TrainTab::buildCache);
  connect(&cache_job_, &CacheBuildJob::progressChanged, this, [this](qint64 done, qint64 total) {
    dashboard_->showCacheBuild(QString("Building the cache: %1/%2 images").arg(done).arg(total), true);
  });
  connect(&cache_job_, &CacheBuildJob::finished, this, [this](bool ok, const QString& file_or_reason) {
    if (ok) {
      form_->enterText("data.cache", file_or_reason);
      dashboard_->showCacheBuild("Cache built: the next run reads it", false);
      dashboard_->setStatus("The cache " + file_or_reason + " is built and set as data.cache: runs started from now on "
                            "read the decoded images from it.");
    } else {
      dashboard_->showCacheBuild(QString(), false);
      dashboard_->setStatus("Could not build the cache: " + file_or_reason);
    }
  });
  connect(form_, &widgets::ConfigForm::configChanged, this, [this] {
    const QString root = QString::fromStdString(form_->config().dataroot);
    if (root != picker_->path()) picker_->setPath(root);
    picker_->setFilter(form_->config().data.filter);
    picker_->setCrop({form_->config().augment.crop_scale, form_->config().img_size});
  });
  connect(start_, &QPushButton::clicked, this, [this] { startRun(); });
  connect(stop_, &QPushButton::clicked, this, &TrainTab::stopRun);
  connect(resume_, &QPushButton::clicked, this, [this] { resumeRun(); });
  connect(fetch_checkpoint_, &QPushButton::clicked, this, &TrainTab::fetchLatestCheckpoint);
  connect(run_on_, &QComboBox::currentIndexChanged, this, [this] {
    // A remote data set is a path on the host: this computer cannot count its images.
    const auto host = runOnHost();
    picker_->setEnabled(!host);
    rebuildAlsoOn();
    if (host) dashboard_->setStatus("New runs train on " + host->label() + ": the data set folder is a path on that host.");
  });
  connect(form_, &widgets::ConfigForm::validityChanged, this, &TrainTab::updateButtons);
  connect(&demo_job_, &DemoDataJob::progressChanged, this, [this](int done, int total) {
    dashboard_->showProgress(static_cast<double>(done) / total, QString("demo data: %1/%2 images").arg(done).arg(total));
  });
  connect(&demo_job_, &DemoDataJob::finished, this, &TrainTab::onDemoDataFinished);
}

TrainTab::~TrainTab() = default;

void TrainTab::useDemoData(const QString& folder) {
  const QString clean = QDir::cleanPath(folder);
  if (DemoDataJob::isRendered(clean)) {
    setDataroot(clean);
    dashboard_->setStatus("Data set: the demo street scenes in " + clean);
    emit demoDataFinished(true, clean);
    return;
  }
  if (demo_job_.isRunning()) return;
  dashboard_->setStatus("Rendering the demo street scenes into " + clean + " …");
  dashboard_->showProgress(0, "demo data");
  if (Status started = demo_job_.start(clean); !started) {
    dashboard_->setStatus("Could not render the demo data: " + errorText(started));
    emit demoDataFinished(false, errorText(started));
  }
  updateButtons();
}

void TrainTab::startDemo(const QString& folder) {
  preset_->setCurrentText("demo");
  connect(this, &TrainTab::demoDataFinished, this, [this](bool ok) {
    if (ok) startRun();
  }, Qt::SingleShotConnection);
  useDemoData(folder);
}

QString TrainTab::cacheFileFor(const TrainConfig& config) const {
  // One cache per data set and decoded size, beside the runs folder.
  const QString name = QDir(QString::fromStdString(config.dataroot)).dirName();
  return QDir::cleanPath(QDir(runs_root_).absoluteFilePath(
      QString("../caches/%1-%2px-%3ch.sgcache").arg(name).arg(config.img_size).arg(config.nc)));
}

void TrainTab::buildCache() {
  const TrainConfig config = form_->config();
  if (config.dataroot.empty()) {
    dashboard_->setStatus("Choose a data set first: the cache holds its images.");
    return;
  }
  if (runOnHost()) {
    dashboard_->setStatus("A cache is built on this computer; for a run on a host, build it there with "
                          "streetgan cache build and set data.cache to its path.");
    return;
  }
  auto cache_config = RunLauncher::writeTemporaryConfig(config, "streetgan-cache-config-XXXXXX.json");
  if (!cache_config) {
    dashboard_->setStatus(errorText(cache_config));
    return;
  }
  cache_config_ = std::move(*cache_config);
  const QString out = cacheFileFor(config);
  if (Status started = cache_job_.start(QString::fromStdString(config.dataroot), cache_config_->fileName(), out);
      !started) {
    dashboard_->setStatus("Could not build the cache: " + errorText(started));
    return;
  }
  dashboard_->showCacheBuild("Building the cache …", true);
  dashboard_->setStatus("Building a cache of " + QString::fromStdString(config.dataroot) + " in " + out +
                        "; the run shown goes on.");
}

void TrainTab::onDemoDataFinished(bool ok, const QString& folder_or_reason) {
  if (ok) {
    setDataroot(folder_or_reason);
    dashboard_->setStatus("Data set: the demo street scenes in " + folder_or_reason);
    dashboard_->showProgress(1, "demo data ready");
  } else {
    dashboard_->setStatus("Could not render the demo data: " + folder_or_reason);
  }
  updateButtons();
  emit demoDataFinished(ok, ok ? folder_or_reason : dashboard_->statusText());
}

void TrainTab::setDataroot(const QString& path) {
  picker_->setPath(path);
  form_->enterText("dataroot", path);
}

void TrainTab::setRunDefaults(const QString& device, int threads, int processes) {
  launcher_.setRunDefaults(device, threads, processes);
}

QString TrainTab::statusText() const { return dashboard_->statusText(); }

bool TrainTab::startRun() {
  if (runActive()) {
    dashboard_->setStatus("A run is in progress here; stop it first.");
    return false;
  }
  if (!form_->isValid()) {
    dashboard_->setStatus("Fix the fields marked in red first.");
    return false;
  }
  const auto request = launcher_.prepareNewRun(form_->config(), runs_root_, runOnHost(), alsoOnHosts());
  if (!request) {
    dashboard_->setStatus(errorText(request));
    return false;
  }
  return launch(*request, false);
}

bool TrainTab::resumeRun(const QString& run_dir) {
  const QString dir = run_dir.isEmpty() ? run_dir_ : run_dir;
  if (dir.isEmpty()) {
    dashboard_->setStatus("No run to resume yet.");
    return false;
  }
  if (runActive()) {
    dashboard_->setStatus("A run is in progress here; stop it first.");
    return false;
  }
  if (dir != dashboard_->runDirectory()) {
    // Its history first, so the charts show the whole run; the resume follows once it is read.
    if (!openRun(dir)) return false;
    resume_after_opening_ = dir;
    return true;
  }
  TrainingRequest request;
  request.run_dir = dir;
  request.resume = true;
  request.extra_arguments = {"--epochs", QString::number(form_->config().epochs)};
  return launch(request, true);
}

bool TrainTab::openRun(const QString& run_dir) {
  if (runActive()) {
    if (run_dir == run_dir_) return true;  // already shown
    dashboard_->setStatus("A run is in progress here (" + run_dir_ + "); stop it before opening another.");
    return false;
  }
  resume_after_opening_.clear();
  loadConfigOf(run_dir);
  run_dir_ = run_dir;
  dashboard_->clear(run_dir);
  following_ = true;
  launcher_.newSession(run_dir, true);
  connectSession();
  dashboard_->setStatus("Reading " + runEventsPath(run_dir) + " …");
  TrainingRequest request;
  request.run_dir = run_dir;
  const bool started = launcher_.start(request, form_->config());
  updateButtons();
  return started;
}

bool TrainTab::loadConfigOf(const QString& run_dir) {
  QFile file(runConfigPath(run_dir));
  if (!file.open(QIODevice::ReadOnly)) {
    dashboard_->setStatus("Cannot read " + file.fileName() + ": " + file.errorString());
    return false;
  }
  auto config = applyConfigText(TrainConfig(), file.readAll().toStdString(), ConfigScope::All, file.fileName().toStdString());
  if (!config) {  // the form keeps what it had
    dashboard_->setStatus(QString::fromStdString(config.error()));
    return false;
  }
  const QSignalBlocker block(preset_);
  const int preset = preset_->findText(QString::fromStdString(config->preset));
  preset_->setCurrentIndex(preset >= 0 ? preset : preset_->count() - 1);
  form_->setConfig(*config);
  return true;
}

bool TrainTab::launch(const TrainingRequest& request, bool keep_history) {
  if (runActive()) return false;
  if (!keep_history) dashboard_->clear(request.run_dir);
  run_dir_ = request.run_dir;
  following_ = false;
  launcher_.newSession(request.run_dir, false);
  connectSession();
  dashboard_->setStatus((request.resume ? "Resuming " : "Starting ") + run_dir_ + " on " + launcher_.where() + " …");
  const bool started = launcher_.start(request, form_->config());
  updateButtons();
  if (started) emit runStarted(run_dir_);
  return started;
}

void TrainTab::connectSession() {
  TrainingSession* session = launcher_.session();
  connect(session, &TrainingSession::eventsReceived, dashboard_, &RunDashboard::addEvents);
  connect(session, &TrainingSession::finished, this, &TrainTab::onFinished);
  connect(session, &TrainingSession::stateChanged, this, [this] { updateButtons(); });
  connect(session, &TrainingSession::connectionChanged, this, [this](bool connected, const QString& message) {
    dashboard_->setStatus((connected ? "Running: " : "Reconnecting: ") + message + "\n" + run_dir_);
  });
}

void TrainTab::connectLauncher() {
  // A remote run's files: sample grids go to the dashboard, a fetched checkpoint is announced.
  connect(&launcher_, &RunLauncher::fileFetched, this, &TrainTab::onFileFetched);
  connect(&launcher_, &RunLauncher::fetchProgress, this, [this](const QString& relative, qint64 done, qint64 total) {
    if (relative.startsWith("samples/") || total <= 0) return;
    dashboard_->setStatus(QString("Fetching %1 from %2: %3 of %4 MB")
                              .arg(relative, launcher_.where())
                              .arg(done / 1048576.0, 0, 'f', 1)
                              .arg(total / 1048576.0, 0, 'f', 1));
  });
  connect(&launcher_, &RunLauncher::fetchFailed, this, [this](const QString& relative, const QString& message) {
    if (!relative.startsWith("samples/")) dashboard_->setStatus("Cannot fetch " + relative + ": " + message);
  });
}

void TrainTab::onFileFetched(const QString& relative, const QString& path) {
  if (relative.startsWith("samples/")) {
    dashboard_->refreshSample(path);
  } else {
    dashboard_->setStatus("Fetched " + relative + " from " + launcher_.where() + " to " + path +
                          "; the Explore tab can open it.");
    emit checkpointFetched(path);
  }
}

void TrainTab::setHostProfiles(const QList<HostProfile>& hosts) {
  const QString chosen = run_on_->currentText();
  hosts_ = hosts;
  const QSignalBlocker block(run_on_);
  run_on_->clear();
  run_on_->addItem("This computer");
  for (const auto& host : hosts_) run_on_->addItem(host.label());
  run_on_->setCurrentIndex(std::max(0, run_on_->findText(chosen)));
  rebuildAlsoOn();
}

// The hosts besides the one in "Run on", checkable; the checks of those still listed are kept.
void TrainTab::rebuildAlsoOn() {
  QStringList checked;
  for (const QAction* action : also_on_->menu()->actions())
    if (action->isChecked()) checked << action->text();
  also_on_->menu()->clear();
  const auto host = runOnHost();
  for (const auto& profile : hosts_) {
    if (host && profile.label() == host->label()) continue;
    QAction* action = also_on_->menu()->addAction(profile.label());
    action->setCheckable(true);
    action->setChecked(checked.contains(profile.label()));
    connect(action, &QAction::toggled, this, [this] {
      const auto more = alsoOnHosts();
      also_on_->setText(more.isEmpty() ? QString("Also on…") : QString("Also on %1 more").arg(more.size()));
      if (const auto first = runOnHost(); first && !more.isEmpty())
        dashboard_->setStatus(QString("New runs train on %1 hosts, one node each; %2 is node 0 and keeps the run's "
                                      "files. The data set folder is a path on every host.")
                                  .arg(more.size() + 1)
                                  .arg(first->label()));
    });
  }
  also_on_->setEnabled(host.has_value() && !also_on_->menu()->isEmpty());
  const auto more = alsoOnHosts();
  also_on_->setText(more.isEmpty() ? QString("Also on…") : QString("Also on %1 more").arg(more.size()));
}

bool TrainTab::setAlsoOn(const QStringList& labels) {
  if (!runOnHost() && !labels.isEmpty()) return false;
  QList<QAction*> chosen;
  for (const QString& label : labels) {
    QAction* found = nullptr;
    for (QAction* action : also_on_->menu()->actions())
      if (action->text() == label) found = action;
    if (!found) return false;
    chosen << found;
  }
  for (QAction* action : also_on_->menu()->actions()) action->setChecked(chosen.contains(action));
  return true;
}

QList<HostProfile> TrainTab::alsoOnHosts() const {
  QList<HostProfile> more;
  if (!runOnHost()) return more;
  for (const QAction* action : also_on_->menu()->actions())
    if (action->isChecked())
      for (const auto& profile : hosts_)
        if (profile.label() == action->text()) more << profile;
  return more;
}

bool TrainTab::setRunOn(const QString& label) {
  const int index = run_on_->findText(label);
  if (index < 0) return false;
  run_on_->setCurrentIndex(index);
  return true;
}

std::optional<HostProfile> TrainTab::runOnHost() const {
  const int index = run_on_->currentIndex() - 1;
  if (index < 0 || index >= hosts_.size()) return std::nullopt;
  return hosts_[index];
}

bool TrainTab::fetchLatestCheckpoint() {
  if (!launcher_.isRemote()) {
    dashboard_->setStatus("Only a remote run's checkpoints need fetching; open one first.");
    return false;
  }
  const QString latest = launcher_.latestCheckpoint();
  if (latest.isEmpty()) {
    dashboard_->setStatus("The run has written no checkpoint yet.");
    return false;
  }
  launcher_.fetchFile(latest);
  dashboard_->setStatus("Fetching " + latest + " from " + launcher_.where() + " …");
  return true;
}

void TrainTab::stopRun() {
  if (!runActive()) return;
  launcher_.session()->stop();
  dashboard_->setStatus("Stopping after the current step …");
}

void TrainTab::onFinished(SessionState state, const QString& message) {
  const QString name = TrainingSession::stateName(state);
  QString text = name.left(1).toUpper() + name.mid(1) + ": " + message + "\n" + run_dir_;
  if (const TrainingSession* session = launcher_.session(); session && session->malformedLines() > 0)
    text += QString("\n%1 malformed event lines were skipped.").arg(session->malformedLines());
  dashboard_->setStatus(text);
  updateButtons();
  if (!resume_after_opening_.isEmpty()) {
    const QString dir = std::exchange(resume_after_opening_, QString());
    if (dir == run_dir_ && state != SessionState::Detached) {
      resumeRun(dir);
      return;
    }
  }
  emit runFinished(state, message);
}

void TrainTab::updateButtons() {
  const bool active = runActive();
  start_->setEnabled(!active && form_->isValid() && !demo_job_.isRunning());
  picker_->demoButton().setEnabled(!demo_job_.isRunning());
  stop_->setEnabled(active && launcher_.session()->state() != SessionState::Stopping);
  resume_->setEnabled(!active && !run_dir_.isEmpty());
  fetch_checkpoint_->setVisible(launcher_.isRemote());
}

}  // namespace streetgan::studio
