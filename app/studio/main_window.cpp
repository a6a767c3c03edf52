#include "app/studio/main_window.h"
#include "app/studio/host_dialog.h"

#include "app/studio/compare_view.h"
#include "app/studio/generator_exporter.h"
#include "app/studio/control/checkpoint_import_job.h"
#include "app/studio/control/demo_data_job.h"
#include "app/studio/control/host_profile.h"
#include "app/studio/dataset_tab.h"
#include "app/studio/evaluate_tab.h"
#include "app/studio/explore_tab.h"
#include "app/studio/run_list_model.h"
#include "app/studio/runs_tab.h"
#include "app/studio/train_tab.h"
#include "core/config/train_config.h"

#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGuiApplication>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>


// The library is static, so its resources are registered by hand; Q_INIT_RESOURCE must be
// called from the global namespace.
static void initStudioResources() { Q_INIT_RESOURCE(studio); }

namespace streetgan::studio {

namespace {

/// The data set folder of a run's config.json ("" when it cannot be read), read as the Train tab
/// reads a run's config.
std::string configRoot(const QString& run_dir) {
  QFile file(run_dir + "/config.json");
  if (!file.open(QIODevice::ReadOnly)) return {};
  const auto config = applyConfigText(TrainConfig(), file.readAll().toStdString(), ConfigScope::All, file.fileName().toStdString());
  return config ? config->dataroot : std::string();
}

}  // namespace

QIcon MainWindow::applicationIcon() {
  initStudioResources();
  QIcon icon;
  for (int size : {16, 32, 48, 64, 128, 256})
    icon.addFile(QString(":/icons/hicolor/%1x%1/apps/org.streetgan.Studio.png").arg(size), QSize(size, size));
  return icon;
}

MainWindow::MainWindow(QString program, QWidget* parent)
    : QMainWindow(parent), program_(program), settings_(StudioSettings::load()),
      generator_exporter_(new GeneratorExporter(program_, this)) {
  setWindowTitle("StreetGAN Studio");
  setWindowIcon(applicationIcon());
  buildTabs();
  setCentralWidget(tabs_);
  status_ = new QLabel(programAndRunsText(), this);
  statusBar()->addWidget(status_, 1);
  buildMenus();
  restoreWindow();
  connectTabs();
}

// The five tabs, and the Train tab's hosts, alarms and run defaults.
void MainWindow::buildTabs() {
  tabs_ = new QTabWidget(this);
  train_tab_ = new TrainTab(program_, settings_.runs_root, tabs_);
  tabs_->addTab(train_tab_, "&Train");
  explore_tab_ = new ExploreTab(settings_.runs_root, tabs_);
  explore_tab_->setDevice(settings_.device);
  tabs_->addTab(explore_tab_, "&Explore");
  dataset_tab_ = new DatasetTab(tabs_);
  tabs_->addTab(dataset_tab_, "&Dataset");
  evaluate_tab_ = new EvaluateTab(program_, settings_.runs_root, tabs_);
  tabs_->addTab(evaluate_tab_, "E&valuate");
  runs_tab_ = new RunsTab(settings_.runs_root, tabs_);
  tabs_->addTab(runs_tab_, "R&uns");
  train_tab_->setHostProfiles(loadHostProfiles());
  connect(train_tab_, &TrainTab::hostsRequested, this, &MainWindow::showHosts);
  // The run's quality alarms, counted in the Train tab's title ("Train ⚠ 2").
  connect(&train_tab_->dashboard(), &RunDashboard::alarmsChanged, this, [this](int alarms) {
    tabs_->setTabText(tabs_->indexOf(train_tab_), alarms > 0 ? QString("&Train ⚠ %1").arg(alarms) : QString("&Train"));
  });
  train_tab_->setRunDefaults(settings_.device == "auto" ? QString() : settings_.device, settings_.threads,
                             settings_.processes);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Import Checkpoint…", QKeySequence(Qt::CTRL | Qt::Key_I), this, &MainWindow::chooseCheckpointToImport);
  file->addAction("&Export Generator…", this, [this] { generator_exporter_->chooseAndExport(explore_tab_->explorer().get()); });
  file->addSeparator();
  file->addAction("&Settings…", QKeySequence::Preferences, this, &MainWindow::showSettings);
  file->addAction("&Hosts…", this, &MainWindow::showHosts);
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  QMenu* view = menuBar()->addMenu("&View");
  for (int i = 0; i < tabs_->count(); ++i) {
    view->addAction(tabs_->tabText(i).remove('&') + " Tab", QKeySequence(QString("Ctrl+%1").arg(i + 1)), this,
                    [this, i] { tabs_->setCurrentIndex(i); });
  }
  QMenu* help = menuBar()->addMenu("&Help");
  help->addAction("&About StreetGAN Studio", this, &MainWindow::showAbout);
}

// The window's size, state and tab as it was closed.
void MainWindow::restoreWindow() {
  QSettings settings;
  if (!restoreGeometry(settings.value("window/geometry").toByteArray())) {
    // The first time: about 85% of the screen, centred; afterwards the size it was closed at.
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
      const QRect available = screen->availableGeometry();
      const QSize size(available.width() * 85 / 100, available.height() * 85 / 100);
      resize(size);
      move(available.center() - QPoint(size.width() / 2, size.height() / 2));
    }
  }
  restoreState(settings.value("window/state").toByteArray());
  tabs_->setCurrentIndex(settings.value("window/tab", 0).toInt());
}

// What one tab asks of another.
void MainWindow::connectTabs() {
  connect(train_tab_, &TrainTab::runFinished, this, [this](SessionState, const QString& message) {
    statusBar()->showMessage(message.section('\n', 0, 0), 10000);
    runs_tab_->model().refresh();
  });
  connect(train_tab_, &TrainTab::runStarted, this, [this](const QString& run_dir) {
    runs_tab_->model().refresh();
    // Explore follows the run being trained, unless it shows a checkpoint chosen by hand.
    if (!explore_tab_->explorer() || explore_tab_->isFollowing()) explore_tab_->openRun(run_dir, true);
  });
  connect(train_tab_, &TrainTab::demoDataFinished, this, [this](bool ok, const QString& folder) {
    if (ok && dataset_tab_->root().isEmpty()) dataset_tab_->setRoot(folder);
  });
  connect(runs_tab_, &RunsTab::openRequested, this, [this](const QString& run_dir) {
    if (train_tab_->openRun(run_dir)) tabs_->setCurrentWidget(train_tab_);
    else statusBar()->showMessage(train_tab_->statusText(), 10000);
  });
  connect(runs_tab_, &RunsTab::resumeRequested, this, [this](const QString& run_dir) {
    if (train_tab_->resumeRun(run_dir)) tabs_->setCurrentWidget(train_tab_);
    else statusBar()->showMessage(train_tab_->statusText(), 10000);
  });
  connect(runs_tab_, &RunsTab::duplicateRequested, this, [this](const QString& run_dir) {
    if (train_tab_->loadConfigOf(run_dir)) {
      tabs_->setCurrentWidget(train_tab_);
      statusBar()->showMessage("The config of " + QDir(run_dir).dirName() + " is in the form; Start begins a new run with it.", 10000);
    } else {
      statusBar()->showMessage(train_tab_->statusText(), 10000);
    }
  });
  connect(dataset_tab_, &DatasetTab::findInLatentSpaceRequested, this, [this](const QString& path) {
    tabs_->setCurrentWidget(explore_tab_);
    explore_tab_->findInLatentSpace(path);
  });
  connect(dataset_tab_, &DatasetTab::settingsForTraining, this, [this](const QString& root, const QMap<QString, QString>& keys) {
    train_tab_->setDataroot(root);
    for (auto it = keys.begin(); it != keys.end(); ++it) train_tab_->form().enterText(it.key(), it.value());
    tabs_->setCurrentWidget(train_tab_);
    statusBar()->showMessage("The data set, its filters and the augmentation settings are in the Train tab's form.", 10000);
  });
  connect(runs_tab_, &RunsTab::compareRequested, this, &MainWindow::showComparison);
  runs_tab_->setBusyCheck([this](const QString& path) {
    return train_tab_->session() && train_tab_->session()->isActive() && train_tab_->runDirectory() == path;
  });
  // Runs an earlier studio left running are found by their logs and followed.
  connect(&runs_tab_->model(), &RunListModel::refreshed, this, [this] {
    const int running = runs_tab_->model().runningCount();
    if (running > 0 && !(train_tab_->session() && train_tab_->session()->isActive()))
      statusBar()->showMessage(QString("%1 run%2 still running without the studio: the Runs tab follows %3 (Open shows it live).")
                                   .arg(running).arg(running == 1 ? " is" : "s are").arg(running == 1 ? "it" : "them"), 15000);
  }, Qt::SingleShotConnection);
}

MainWindow::~MainWindow() = default;

QString MainWindow::demoDataFolder() const { return DemoDataJob::defaultFolder(settings_.runs_root); }

void MainWindow::chooseCheckpointToImport() {
  const QString path = QFileDialog::getOpenFileName(
      this, "Import a Checkpoint of the Original Tool", QString(),
      "PyTorch checkpoints (*.pt *.pth *.tar *.ckpt);;All files (*)");
  if (!path.isEmpty()) importCheckpoint(path);
}

void MainWindow::importCheckpoint(const QString& checkpoint) {
  if (!import_job_) {
    import_job_ = new CheckpointImportJob(program_, this);
    connect(import_job_, &CheckpointImportJob::finished, this, [this](bool ok, const QString& result) {
      if (ok) {
        runs_tab_->model().refresh();
        explore_tab_->openRun(result, false);
        tabs_->setCurrentWidget(explore_tab_);
        statusBar()->showMessage("Imported as the run " + QDir(result).dirName() +
                                     ": it is in Explore, Evaluate and the Runs tab.", 15000);
      } else {
        statusBar()->clearMessage();
        auto* box = new QMessageBox(QMessageBox::Warning, "Import Checkpoint", "The checkpoint was not imported.",
                                    QMessageBox::Ok, this);
        box->setInformativeText(result);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
      }
      emit importFinished(ok, result);
    });
  }
  const QString run_dir = CheckpointImportJob::runDirFor(settings_.runs_root, checkpoint);
  if (Status started = import_job_->start(checkpoint, run_dir); !started) {
    emit importFinished(false, errorText(started));
    statusBar()->showMessage(errorText(started), 10000);
    return;
  }
  statusBar()->showMessage("Importing " + QFileInfo(checkpoint).fileName() + " …");
}

void MainWindow::startDemo() {
  tabs_->setCurrentWidget(train_tab_);
  auto go = [this] {
    // A demo run still going (left running by an earlier studio) is opened, not started again.
    const RunListModel& model = runs_tab_->model();
    for (int row = 0; row < model.rowCount(); ++row) {
      const RunSummary& run = model.summary(row);
      if (run.state != RunState::Running || run.preset != "demo") continue;
      const QString path = QString::fromStdString(run.path);
      if (!train_tab_->openRun(path)) break;
      explore_tab_->openRun(path, true);
      dataset_tab_->setRoot(QString::fromStdString(configRoot(path)));
      statusBar()->showMessage("A demo run is already going: showing it.", 10000);
      return;
    }
    train_tab_->startDemo(demoDataFolder());
  };
  // The runs folder as it is now: a run started by another studio a moment ago must be seen.
  connect(&runs_tab_->model(), &RunListModel::refreshed, this, go, Qt::SingleShotConnection);
  runs_tab_->model().refresh();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  TrainingSession* session = train_tab_->session();
  if (session && session->state() == SessionState::Stopping) {
    event->ignore();  // it closes on its own once the run has stopped
    return;
  }
  if (session && session->isActive()) {
    QMessageBox box(QMessageBox::Question, "A run is in progress",
                    "Training is still running in " + train_tab_->runDirectory() + ".", QMessageBox::NoButton, this);
    QPushButton* stop = box.addButton("Stop the Run", QMessageBox::DestructiveRole);
    QPushButton* leave = box.addButton("Leave It Running", QMessageBox::AcceptRole);
    box.addButton(QMessageBox::Cancel);
    box.setInformativeText("Stop it (a checkpoint is written, and Resume continues it), or leave it running: it "
                           "keeps writing its run directory without the studio.");
    box.exec();
    if (box.clickedButton() == stop) {
      // Close once the run has finished its step and written its checkpoint: closing now would
      // take the process down with the window.
      session->stop();
      statusBar()->showMessage("Stopping the run; the window closes once its checkpoint is written …");
      connect(session, &TrainingSession::finished, this, [this] { close(); }, Qt::SingleShotConnection);
      event->ignore();
      return;
    } else if (box.clickedButton() == leave) {
      session->detach();
    } else {
      event->ignore();
      return;
    }
  }
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  settings.setValue("window/tab", tabs_->currentIndex());
  event->accept();
}

void MainWindow::showComparison(const QStringList& run_dirs) {
  const QList<HostProfile> hosts = loadHostProfiles();
  QList<ComparedRun> runs;
  for (const QString& path : run_dirs) {
    ComparedRun run;
    run.path = path;
    const int row = runs_tab_->model().rowOf(path);
    run.host = row >= 0 ? runs_tab_->model().hostOf(row) : QString();
    run.cost_per_hour = settings_.cost_per_hour;
    if (!run.host.isEmpty()) {
      run.cost_per_hour = 0;  // a host without a profile any more: not known
      for (const HostProfile& host : hosts)
        if (host.label() == run.host) run.cost_per_hour = host.cost_per_hour;
    }
    runs << run;
  }
  // Its own window, beside the main one: several comparisons may stay open.
  auto* view = new CompareView(runs, this);
  view->setWindowFlag(Qt::Window);
  view->setAttribute(Qt::WA_DeleteOnClose);
  view->resize(1280, 900);
  view->show();
  compare_ = view;
}

CompareView* MainWindow::lastComparison() const { return compare_.data(); }

void MainWindow::showHosts() {
  HostDialog dialog(loadHostProfiles(), this);
  if (dialog.exec() == QDialog::Accepted) train_tab_->setHostProfiles(dialog.profiles());
}

void MainWindow::showSettings() {
  QDialog dialog(this);
  dialog.setWindowTitle("Settings");
  auto* root = new QLineEdit(settings_.runs_root, &dialog);
  auto* device = new QComboBox(&dialog);
  device->setEditable(true);
  device->addItems({"auto", "cpu", "cuda", "hpu"});
  device->setCurrentText(settings_.device);
  auto* processes = new QSpinBox(&dialog);
  processes->setObjectName("processes");
  processes->setRange(1, 64);
  processes->setValue(settings_.processes);
  processes->setToolTip("Ranks of a run on this computer (streetgan train --nproc): each trains on its share of "
                        "every batch (batch size is per rank) on its own device (cuda:0, cuda:1, … or the CPU), "
                        "and they average their gradients. 1: one process.");
  auto* threads = new QSpinBox(&dialog);
  threads->setRange(0, 1024);
  threads->setSpecialValueText("every core");
  threads->setValue(settings_.threads);
  auto* cost = new QDoubleSpinBox(&dialog);
  cost->setObjectName("costPerHour");
  cost->setRange(0, 100000);
  cost->setDecimals(2);
  cost->setPrefix("$ ");
  cost->setSpecialValueText("Not known");
  cost->setValue(settings_.cost_per_hour);
  cost->setToolTip("What an hour of this computer costs, in dollars (power, or what a cloud machine like it "
                   "rents for): the Runs tab's Compare turns it into dollars per million images");
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  auto* form = new QFormLayout(&dialog);
  form->addRow("Runs folder", root);
  form->addRow("Default device", device);
  form->addRow("Processes", processes);
  form->addRow("CPU threads", threads);
  form->addRow("Cost per hour", cost);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  if (dialog.exec() != QDialog::Accepted) return;
  settings_.runs_root = root->text();
  settings_.device = device->currentText();
  settings_.threads = threads->value();
  settings_.processes = processes->value();
  settings_.cost_per_hour = cost->value();
  settings_.save();
  train_tab_->setRunsRoot(settings_.runs_root);
  train_tab_->setRunDefaults(settings_.device == "auto" ? QString() : settings_.device, settings_.threads,
                             settings_.processes);
  runs_tab_->setRunsRoot(settings_.runs_root);
  explore_tab_->setRunsRoot(settings_.runs_root);
  evaluate_tab_->setRunsRoot(settings_.runs_root);
  explore_tab_->setDevice(settings_.device);
  status_->setText(programAndRunsText());
}

// The status bar's line: which streetgan runs the work and where runs go, the home folder as ~.
QString MainWindow::programAndRunsText() const {
  const QString home = QDir::homePath();
  const auto shown = [&home](const QString& path) {
    return home.size() > 1 && path.startsWith(home + "/") ? "~" + path.mid(home.size()) : path;
  };
  return QString("streetgan: %1   runs: %2").arg(shown(program_), shown(settings_.runs_root));
}

void MainWindow::showAbout() {
  QMessageBox::about(this, "About StreetGAN Studio",
                     QString("<b>StreetGAN Studio %1</b><p>Train a DCGAN on street-level photographs, watch it "
                             "learn, explore its latent space and export videos.</p><p>Built on LibTorch, Qt %2, "
                             "OpenCV and FFmpeg.</p>")
                         .arg(STREETGAN_VERSION, qVersion()));
}

}  // namespace streetgan::studio
