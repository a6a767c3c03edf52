// The Runs tab and everything that goes through run directories, offscreen, on real runs of the
// real `streetgan` program: the list and each run's state (completed, stopped, killed, broken),
// opening a finished run (charts rebuilt from events.jsonl), resuming and duplicating from the
// list, delete with its confirmation, a run left running when the window closed and followed by
// the next studio (then stopped from it), a crashing trainer shown as failed with its stderr, the
// quality columns (latest SWD, alarms) from a log's metrics and alarm events or a saved metrics
// file, and screenshots of every tab.
#include "app/studio/control/checkpoint_import_job.h"
#include "app/studio/explore_tab.h"
#include "app/studio/main_window.h"
#include "app/studio/run_dashboard.h"
#include "app/studio/run_list_model.h"
#include "app/studio/runs_tab.h"
#include "app/studio/train_tab.h"
#include "core/runs/quality_evaluation_file.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/dataset_picker.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <signal.h>
#include <sys/stat.h>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

namespace {

/// Clicks `button` of the next message box to appear (polled, as the box runs its own loop).
void answerNextMessageBox(const QString& button, QString* text = nullptr) {
  auto* poll = new QTimer();
  poll->setInterval(20);
  QObject::connect(poll, &QTimer::timeout, [poll, button, text] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    if (!box) return;
    if (text) *text = box->text();
    for (QAbstractButton* b : box->buttons()) {
      if (b->text().remove('&') == button) {
        poll->stop();
        poll->deleteLater();
        b->click();
        return;
      }
    }
  });
  poll->start();
}

QPushButton* buttonOf(QWidget& parent, const QString& text) {
  for (QPushButton* button : parent.findChildren<QPushButton*>())
    if (button->text() == text) return button;
  return nullptr;
}

int stepCount(const QString& run_dir) { return eventsOfType(readEvents(run_dir), "step").size(); }

QString cell(RunListModel& model, const QString& path, int column) {
  return model.index(model.rowOf(path), column).data().toString();
}

}  // namespace

class TestStudioRuns : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void listsEveryRunWithItsState();
  void qualityColumns();
  void unreadableLogsAreRowsThatSayWhy();
  void openingAFinishedRunRebuildsItsCharts();
  void duplicateConfigFillsTheForm();
  void resumeFromTheList();
  void deleteAsksFirst();
  void runLeftRunningIsFollowedByTheNextStudio();
  void crashingTrainerShowsAsFailed();
  void closingCanBeCancelledOrStop();
  void importedCheckpointOpensInExplore();

private:
  /// Starts `streetgan train` into `run_dir` for many epochs and waits for `steps` steps.
  bool startBackgroundRun(QProcess& process, const QString& run_dir, int steps);
  void waitForList(MainWindow& window);

  QTemporaryDir dir_;
  QString data_, runs_, completed_, stopped_, killed_, broken_;
};

void TestStudioRuns::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_runs");
  qputenv("HOME", dir_.path().toUtf8());  // QSettings and the default runs folder stay in the test's folder
  data_ = makeTinyDataset(dir_.filePath("data"));
  runs_ = dir_.filePath("StreetGAN/runs");
  completed_ = runs_ + "/completed";
  stopped_ = runs_ + "/stopped";
  killed_ = runs_ + "/killed";
  broken_ = runs_ + "/broken";
  const auto done = runCli(tinyTrainArgs(data_, completed_, 2));
  QVERIFY2(done.exit_code == 0, qPrintable(done.err));
  QProcess stopping;
  QVERIFY(startBackgroundRun(stopping, stopped_, 3));
  ::kill(static_cast<pid_t>(stopping.processId()), SIGINT);
  QVERIFY(stopping.waitForFinished(60000));
  QCOMPARE(stopping.exitCode(), 0);
  QProcess killing;
  QVERIFY(startBackgroundRun(killing, killed_, 3));
  // Killed after its first checkpoint, so it can resume.
  QTRY_VERIFY_WITH_TIMEOUT(!eventsOfType(readEvents(killed_), "checkpoint").isEmpty(), 120000);
  killing.kill();
  QVERIFY(killing.waitForFinished(60000));
  QDir().mkpath(broken_);
  QFile config(broken_ + "/config.json");
  QVERIFY(config.open(QIODevice::WriteOnly));
  config.write("{ this is not json");
  config.close();
  QDir().mkpath(runs_ + "/not-a-run/photos");  // no config, no log: not listed
}

bool TestStudioRuns::startBackgroundRun(QProcess& process, const QString& run_dir, int steps) {
  process.setProgram(STREETGAN_CLI);
  process.setArguments(tinyTrainArgs(data_, run_dir, 100000));
  process.setStandardOutputFile(QProcess::nullDevice());
  process.start();
  if (!process.waitForStarted(10000)) return false;
  QElapsedTimer clock;
  clock.start();
  while (stepCount(run_dir) < steps) {
    if (clock.elapsed() > 120000 || process.state() != QProcess::Running) return false;
    QTest::qWait(50);
  }
  return true;
}

void TestStudioRuns::waitForList(MainWindow& window) {
  RunListModel& model = window.runsTab().model();
  QSignalSpy refreshed(&model, &RunListModel::refreshed);
  if (model.isRefreshing() || model.rowCount() == 0) QVERIFY(refreshed.wait(30000));
  QTRY_VERIFY_WITH_TIMEOUT(!model.isRefreshing(), 30000);
}

void TestStudioRuns::listsEveryRunWithItsState() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1500, 700);
  window.show();
  window.tabs().setCurrentWidget(&window.runsTab());
  waitForList(window);
  RunListModel& model = window.runsTab().model();
  QCOMPARE(model.rowCount(), 4);  // not-a-run is not listed
  QCOMPARE(cell(model, completed_, RunListModel::State), QString("completed"));
  QCOMPARE(cell(model, stopped_, RunListModel::State), QString("stopped"));
  QCOMPARE(cell(model, killed_, RunListModel::State), QString("failed"));
  QCOMPARE(cell(model, broken_, RunListModel::State), QString("not started"));
  QVERIFY(model.index(model.rowOf(broken_), 0).data(Qt::ToolTipRole).toString().contains("config.json is not a JSON object"));
  QVERIFY(model.index(model.rowOf(killed_), 0).data(Qt::ToolTipRole).toString().contains("killed or crashed"));
  // The completed run's figures are its log's.
  const auto events = readEvents(completed_);
  const auto last = eventsOfType(events, "step").last();
  QCOMPARE(cell(model, completed_, RunListModel::Epochs), QString("2 / 2"));
  QCOMPARE(cell(model, completed_, RunListModel::ImagesSeen), QLocale().toString(last["images_seen"].toInteger()));
  QCOMPARE(cell(model, completed_, RunListModel::LastLoss),
           QString("D %1, G %2").arg(last["loss_d"].toDouble(), 0, 'f', 3).arg(last["loss_g"].toDouble(), 0, 'f', 3));
  QCOMPARE(cell(model, completed_, RunListModel::Device), QString("cpu"));
  QCOMPARE(cell(model, completed_, RunListModel::Preset), QString("custom"));
  // Buttons follow the selection: a failed run with a checkpoint resumes; a broken one does not.
  RunsTab& tab = window.runsTab();
  QVERIFY(tab.select(killed_));
  QVERIFY(buttonOf(tab, "Resume")->isEnabled());
  QVERIFY(tab.select(broken_));
  QVERIFY(!buttonOf(tab, "Resume")->isEnabled());
  QVERIFY(buttonOf(tab, "Open")->isEnabled());
  QVERIFY(tab.select(completed_));
  const QString shot = testOutputDir() + "/studio-runs.png";
  QVERIFY(window.grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

// A FIFO in place of events.jsonl once froze the list (and the studio could not quit); a sparse
// 20 GB log took 14.5 s. Each is now a row whose tooltip says what is wrong, beside a good run.
void TestStudioRuns::unreadableLogsAreRowsThatSayWhy() {
  QTemporaryDir root;
  QVERIFY(root.isValid());
  const QString fifo = root.filePath("fifo"), huge = root.filePath("huge"), good = root.filePath("good");
  for (const QString& run : {fifo, huge, good}) {
    QVERIFY(QDir().mkpath(run));
    QFile config(run + "/config.json");
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(R"({"epochs":2})");
  }
  QVERIFY(::mkfifo(QFile::encodeName(fifo + "/events.jsonl").constData(), 0600) == 0);
  QFile big(huge + "/events.jsonl");
  QVERIFY(big.open(QIODevice::WriteOnly) && big.resize(qint64(20) << 30));  // sparse: no disk used
  big.close();
  QFile events(good + "/events.jsonl");
  QVERIFY(events.open(QIODevice::WriteOnly));
  events.write(R"({"v":1,"type":"run_started","time":100,"device":"cpu","pid":0,"images_seen":0})" "\n"
               R"({"v":1,"type":"run_finished","time":104,"status":"completed","epoch":2})" "\n");
  events.close();

  RunListModel model;
  QSignalSpy refreshed(&model, &RunListModel::refreshed);
  model.setRoot(root.path());
  QVERIFY(refreshed.wait(30000));
  QCOMPARE(model.rowCount(), 3);
  QCOMPARE(cell(model, good, RunListModel::State), QString("completed"));
  const QString fifo_tip = model.index(model.rowOf(fifo), RunListModel::State).data(Qt::ToolTipRole).toString();
  QVERIFY2(fifo_tip.contains(fifo + "/events.jsonl: not a regular file"), qPrintable(fifo_tip));
  const QString huge_tip = model.index(model.rowOf(huge), RunListModel::State).data(Qt::ToolTipRole).toString();
  QVERIFY2(huge_tip.contains(huge + "/events.jsonl: 20480 MiB, more than the 1024 MiB a run's event log is read up to"),
           qPrintable(huge_tip));
}

void TestStudioRuns::qualityColumns() {
  // Runs of their own (not under the runs folder the other tests count): one whose log has two
  // quality evaluations and two alarms, one with a saved metrics file and no metrics event.
  QTemporaryDir root;
  QVERIFY(root.isValid());
  const QString logged = root.filePath("logged"), saved = root.filePath("saved");
  const QString overfitting = "D is overfitting: r_t is 0.75 on average; try augmentation";
  const QByteArray log =
      R"({"v":1,"type":"run_started","time":100,"device":"cpu","pid":0,"step":0,"images_seen":0,"epoch":0,"config":{"epochs":2}})" "\n"
      R"({"v":1,"type":"step","time":101,"epoch":1,"iteration":1,"iterations":2,"step":1,"images_seen":16,"loss_d":1.5,"loss_g":0.5,"rt":0.5})" "\n"
      R"({"v":1,"type":"metrics","time":102,"epoch":0,"step":1,"images_seen":16,"metrics":{"swd_e3":25.5,"copy_rate":0.125},"feature_space":"pixels32-pca256"})" "\n"
      R"({"v":1,"type":"warning","time":102.5,"message":"memorisation: 12.5% of the samples copy a training image","alarm":"memorisation","step":1})" "\n"
      R"({"v":1,"type":"metrics","time":103,"epoch":1,"step":2,"images_seen":32,"metrics":{"swd_e3":20.25},"feature_space":"pixels32-pca256"})" "\n"
      R"({"v":1,"type":"warning","time":103.5,"message":"D is overfitting: r_t is 0.75 on average; try augmentation","alarm":"overfitting","step":2})" "\n"
      R"({"v":1,"type":"run_finished","time":104,"status":"completed","epoch":2})" "\n";
  QVERIFY(QDir().mkpath(logged));
  QFile events(logged + "/events.jsonl");
  QVERIFY(events.open(QIODevice::WriteOnly));
  events.write(log);
  events.close();
  QVERIFY(QDir().mkpath(saved));
  QFile saved_events(saved + "/events.jsonl");
  QVERIFY(saved_events.open(QIODevice::WriteOnly));
  // A run of two hosts of two ranks each (streetgan train --nnodes 2 --nproc 2).
  saved_events.write(R"({"v":1,"type":"run_started","time":100,"device":"cpu","pid":0,"images_seen":0,)"
                     R"("world_size":4,"nodes":2,"backend":"gloo"})" "\n");
  saved_events.close();
  QualityEvaluation evaluation;
  evaluation.checkpoint = QualityEvaluation::Checkpoint{"step-0000000004.pt", 2, 4, 64};
  evaluation.metrics = {{quality_figure::kSwd, 35.5}};
  const Status wrote = QualityEvaluationFile::write(saved.toStdString(), "step-0000000004", evaluation);
  QVERIFY2(wrote, wrote.error().c_str());

  RunListModel model;
  QSignalSpy refreshed(&model, &RunListModel::refreshed);
  model.setRoot(root.path());
  QVERIFY(refreshed.wait(30000));
  QCOMPARE(model.rowCount(), 2);
  // The new columns come before Last activity.
  QCOMPARE(model.columnCount(), int(RunListModel::ColumnCount));
  QCOMPARE(model.headerData(RunListModel::Swd, Qt::Horizontal, Qt::DisplayRole).toString(), QString::fromUtf8("SWD ×10³"));
  QCOMPARE(model.headerData(RunListModel::Alarms, Qt::Horizontal, Qt::DisplayRole).toString(), QString("Alarms"));
  QCOMPARE(model.headerData(RunListModel::LastActivity, Qt::Horizontal, Qt::DisplayRole).toString(), QString("Last activity"));
  QCOMPARE(cell(model, logged, RunListModel::State), QString("completed"));
  QCOMPARE(cell(model, logged, RunListModel::Swd), QString("20.25"));  // the newest evaluation's
  QCOMPARE(cell(model, logged, RunListModel::Alarms), QString("2"));
  const int row = model.rowOf(logged);
  QCOMPARE(model.index(row, RunListModel::Alarms).data(Qt::ToolTipRole).toString(), overfitting);
  QCOMPARE(model.index(row, RunListModel::Alarms).data(RunListModel::SortRole).toLongLong(), 2LL);
  const QString swd_tip = model.index(row, RunListModel::Swd).data(Qt::ToolTipRole).toString();
  QVERIFY2(swd_tip.contains("Copy rate 12.5%"), qPrintable(swd_tip));
  QCOMPARE(cell(model, saved, RunListModel::Swd), QString("35.50"));  // from evaluations/metrics-step-0000000004.json
  QCOMPARE(cell(model, saved, RunListModel::Alarms), QString());
  QCOMPARE(cell(model, saved, RunListModel::Device), QString::fromUtf8("cpu, 2 hosts × 2 ranks, gloo"));
  QTableView view;
  view.setModel(&model);
  view.resize(1500, 160);
  view.show();
  view.resizeColumnsToContents();
  const QString shot = testOutputDir() + "/studio-runs-quality.png";
  QVERIFY(view.grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

void TestStudioRuns::openingAFinishedRunRebuildsItsCharts() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1600, 1000);
  window.show();
  waitForList(window);
  QVERIFY(window.runsTab().select(completed_));
  QSignalSpy finished(&window.trainTab(), &TrainTab::runFinished);
  buttonOf(window.runsTab(), "Open")->click();
  QCOMPARE(window.tabs().currentWidget(), &window.trainTab());
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Completed);
  const auto events = readEvents(completed_);
  RunDashboard& dashboard = window.trainTab().dashboard();
  QCOMPARE(int(dashboard.lossChart().pointCount(0)), eventsOfType(events, "step").size());
  QCOMPARE(int(dashboard.discriminatorChart().pointCount(1)), eventsOfType(events, "step").size());
  QCOMPARE(dashboard.sampleCount(), eventsOfType(events, "samples").size());
  QVERIFY(dashboard.sampleCount() > 0);
  QSignalSpy shown(&dashboard, &RunDashboard::sampleShown);
  if (dashboard.shownSample().isNull()) QVERIFY(shown.wait(60000));
  QVERIFY(!dashboard.shownSample().isNull());
  QCOMPARE(window.trainTab().form().config().epochs, 2);
  QCOMPARE(window.trainTab().form().config().ngf, 8);
  QCOMPARE(window.trainTab().runDirectory(), completed_);
  QVERIFY(dashboard.progressText().startsWith("epoch 2/2"));
  // The data set of the run is counted beside its field.
  DatasetPicker& picker = window.trainTab().datasetPicker();
  QTRY_VERIFY_WITH_TIMEOUT(!picker.isCounting(), 30000);
  QVERIFY2(picker.lastCount().ok && picker.lastCount().images == 32, qPrintable(picker.lastCount().text));
  // Screenshots of every tab, with this run in the Train tab.
  for (int i = 0; i < window.tabs().count(); ++i) {
    window.tabs().setCurrentIndex(i);
    for (auto* chart : {&dashboard.lossChart(), &dashboard.discriminatorChart(), &dashboard.speedChart(), &dashboard.parzenChart()})
      chart->redraw();
    const QString shot = QString("%1/studio-tab-%2.png").arg(testOutputDir(), window.tabs().tabText(i).remove('&').toLower());
    QVERIFY(window.grab().save(shot));
    qInfo("screenshot: %s", qPrintable(shot));
  }
}

void TestStudioRuns::duplicateConfigFillsTheForm() {
  MainWindow window(STREETGAN_CLI);
  waitForList(window);
  QVERIFY(window.runsTab().select(killed_));
  window.trainTab().form().enterText("ngf", "32");
  buttonOf(window.runsTab(), "Duplicate Config")->click();
  QCOMPARE(window.tabs().currentWidget(), &window.trainTab());
  const TrainConfig& config = window.trainTab().form().config();
  QCOMPARE(config.ngf, 8);
  QCOMPARE(config.epochs, 100000);
  QCOMPARE(QString::fromStdString(config.dataroot), data_);
  QVERIFY(window.statusBar()->currentMessage().contains("Start begins a new run with it"));
  // A run without a readable config says why and leaves the form alone.
  QVERIFY(window.runsTab().select(broken_));
  buttonOf(window.runsTab(), "Duplicate Config")->click();
  QCOMPARE(window.trainTab().form().config().ngf, 8);
  QVERIFY2(window.statusBar()->currentMessage().contains("broken/config.json"), qPrintable(window.statusBar()->currentMessage()));
}

void TestStudioRuns::resumeFromTheList() {
  MainWindow window(STREETGAN_CLI);
  waitForList(window);
  const int steps_before = stepCount(stopped_);
  QVERIFY(window.runsTab().select(stopped_));
  TrainTab& tab = window.trainTab();
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  buttonOf(window.runsTab(), "Resume")->click();
  QCOMPARE(window.tabs().currentWidget(), &tab);
  // Its history is read first, then the run goes on: stop it after a few more steps.
  QTRY_VERIFY_WITH_TIMEOUT(tab.session() && tab.session()->state() == SessionState::Running &&
                               tab.dashboard().lossChart().pointCount(0) >= std::size_t(steps_before + 3), 120000);
  tab.stopRun();
  QVERIFY(finished.wait(120000));
  QCOMPARE(finished.last().first().value<SessionState>(), SessionState::Stopped);
  const auto events = readEvents(stopped_);
  QCOMPARE(eventsOfType(events, "run_started").size(), 2);
  // Steps the first process logged past its checkpoint were replaced: the chart holds each step once.
  const auto steps = eventsOfType(events, "step");
  QCOMPARE(qint64(tab.dashboard().lossChart().pointCount(0)), steps.last()["step"].toInteger());
  window.runsTab().model().refresh();
  waitForList(window);
  QCOMPARE(cell(window.runsTab().model(), stopped_, RunListModel::State), QString("stopped"));
}

void TestStudioRuns::deleteAsksFirst() {
  MainWindow window(STREETGAN_CLI);
  waitForList(window);
  RunsTab& tab = window.runsTab();
  QVERIFY(tab.select(killed_));
  QString question;
  answerNextMessageBox("Cancel", &question);
  QVERIFY(!tab.deleteSelected());
  QVERIFY(question.contains("Delete the run killed?"));
  QVERIFY(QDir(killed_).exists());
  answerNextMessageBox("Yes");
  QVERIFY(tab.deleteSelected());
  QVERIFY(!QDir(killed_).exists());
  QSignalSpy refreshed(&tab.model(), &RunListModel::refreshed);
  QVERIFY(refreshed.wait(30000));
  QCOMPARE(tab.model().rowOf(killed_), -1);
  QVERIFY(QDir(completed_).exists());
}

void TestStudioRuns::runLeftRunningIsFollowedByTheNextStudio() {
  QString run_dir;
  {
    // The first studio starts a run and is closed with Leave It Running.
    MainWindow window(STREETGAN_CLI);
    window.show();
    TrainTab& tab = window.trainTab();
    tab.setDataroot(data_);
    for (const auto& [key, value] : QList<QPair<QString, QString>>{{"batch_size", "8"}, {"ngf", "8"}, {"ndf", "8"}, {"nz", "16"},
                                                                   {"epochs", "100000"}, {"save_frequency", "1"}, {"threads", testThreadsText()}, {"name", "left"}})
      tab.form().enterText(key, value);
    QVERIFY(tab.startRun());
    run_dir = tab.runDirectory();
    QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) >= 3, 120000);
    QString question;
    answerNextMessageBox("Leave It Running", &question);
    QVERIFY(window.close());
    QVERIFY(question.contains("Training is still running in " + run_dir));
    QCOMPARE(tab.session()->state(), SessionState::Detached);
  }
  // It goes on without the studio (a busy machine may take a while between steps).
  const int steps_then = stepCount(run_dir);
  QTRY_VERIFY2_WITH_TIMEOUT(stepCount(run_dir) > steps_then + 2, "the run stopped when its window closed", 60000);

  // The next studio lists it as running and follows it.
  MainWindow window(STREETGAN_CLI);
  window.resize(1600, 1000);
  window.show();
  waitForList(window);
  RunListModel& model = window.runsTab().model();
  QCOMPARE(cell(model, run_dir, RunListModel::State), QString("running"));
  QVERIFY2(window.statusBar()->currentMessage().contains("1 run is still running without the studio"),
           qPrintable(window.statusBar()->currentMessage()));
  const QString images_then = cell(model, run_dir, RunListModel::ImagesSeen);
  QTRY_VERIFY_WITH_TIMEOUT(cell(model, run_dir, RunListModel::ImagesSeen) != images_then, 60000);
  QVERIFY(window.runsTab().select(run_dir));
  QVERIFY(!window.runsTab().deleteSelected(true));  // never a running run
  QVERIFY(window.runsTab().messageText().contains("in use by a running training process"));
  QVERIFY(QDir(run_dir).exists());

  // Open shows it live; Stop interrupts the process the earlier studio started.
  TrainTab& tab = window.trainTab();
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  buttonOf(window.runsTab(), "Open")->click();
  QTRY_VERIFY_WITH_TIMEOUT(tab.session()->state() == SessionState::Running, 30000);
  const std::size_t points = tab.dashboard().lossChart().pointCount(0);
  QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) > points + 2, 30000);
  QTRY_VERIFY_WITH_TIMEOUT(!tab.datasetPicker().isCounting(), 30000);
  const QString shot = testOutputDir() + "/studio-train-followed.png";
  QVERIFY(window.grab().save(shot));
  tab.stopRun();
  QVERIFY(finished.wait(120000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Stopped);
  const auto events = readEvents(run_dir);
  QCOMPARE(events.last()["status"].toString(), QString("stopped"));
  QCOMPARE(int(tab.dashboard().lossChart().pointCount(0)), eventsOfType(events, "step").size());
}

void TestStudioRuns::crashingTrainerShowsAsFailed() {
  QTemporaryDir dir;
  const QString script = dir.filePath("crashing-trainer");
  QVERIFY(writeScript(script,
                      "printf '{\"v\":1,\"type\":\"run_started\",\"time\":0,\"device\":\"cpu\",\"config\":{\"epochs\":1}}\\n'\n"
                      "printf '{\"v\":1,\"type\":\"step\",\"time\":1,\"epoch\":1,\"iteration\":1,\"iterations\":2,\"step\":1,"
                      "\"images_seen\":8,\"loss_d\":1.5,\"loss_g\":0.5}\\n'\n"
                      "echo 'CUDA error: an illegal memory access was encountered' >&2\n"
                      "kill -SEGV $$\n"));
  MainWindow window(script);
  TrainTab& tab = window.trainTab();
  tab.setRunsRoot(dir.filePath("runs"));
  tab.setDataroot(data_);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  QVERIFY(tab.startRun());
  QVERIFY(finished.wait(30000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Failed);
  QVERIFY2(tab.statusText().startsWith("Failed: the training process was killed by signal 11"), qPrintable(tab.statusText()));
  QVERIFY(tab.statusText().contains("CUDA error: an illegal memory access was encountered"));
  QCOMPARE(int(tab.dashboard().lossChart().pointCount(0)), 1);
  // The GUI carries on: another run starts.
  QVERIFY(tab.startRun());
  QVERIFY(finished.wait(30000));
}

void TestStudioRuns::closingCanBeCancelledOrStop() {
  MainWindow window(STREETGAN_CLI);
  window.show();
  TrainTab& tab = window.trainTab();
  tab.setRunsRoot(dir_.filePath("runs-close"));
  tab.setDataroot(data_);
  for (const auto& [key, value] : QList<QPair<QString, QString>>{{"batch_size", "8"}, {"ngf", "8"}, {"ndf", "8"}, {"nz", "16"},
                                                                 {"epochs", "100000"}, {"threads", testThreadsText()}})
    tab.form().enterText(key, value);
  QVERIFY(tab.startRun());
  QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) >= 2, 120000);
  answerNextMessageBox("Cancel");
  QVERIFY(!window.close());
  QVERIFY(window.isVisible());
  QCOMPARE(tab.session()->state(), SessionState::Running);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  answerNextMessageBox("Stop the Run");
  window.close();  // waits for the checkpoint, then closes
  QVERIFY(finished.wait(120000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Stopped);
  QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 60000);
  QVERIFY(!QDir(tab.runDirectory() + "/checkpoints").entryList({"*.pt"}).isEmpty());
}

// File ▸ Import Checkpoint…: a checkpoint saved by PyTorch (tests/cli/reference_dcgan.py) becomes a
// run that the Runs tab lists and Explore shows; a file that is not one is refused by name.
void TestStudioRuns::importedCheckpointOpensInExplore() {
  const QString reference = dir_.filePath("reference");
  QProcess python;
  python.setProcessChannelMode(QProcess::MergedChannels);
  python.start("/usr/bin/python3", {STREETGAN_SOURCE_DIR "/tests/cli/reference_dcgan.py", "make", "--out", reference});
  QVERIFY(python.waitForFinished(300000));
  QVERIFY2(python.exitCode() == 0, python.readAll().constData());

  MainWindow window(STREETGAN_CLI);
  window.resize(1280, 800);
  window.show();
  waitForList(window);
  QSignalSpy imported(&window, &MainWindow::importFinished);
  window.importCheckpoint(reference + "/full.pt");
  QVERIFY(imported.wait(120000));
  QVERIFY2(imported.first().at(0).toBool(), qPrintable(imported.first().at(1).toString()));
  const QString run_dir = imported.first().at(1).toString();
  QCOMPARE(QDir(run_dir).dirName(), QString("full-imported"));
  QCOMPARE(window.tabs().currentWidget(), static_cast<QWidget*>(&window.exploreTab()));
  QTRY_VERIFY_WITH_TIMEOUT(window.exploreTab().explorer() != nullptr, 60000);
  QTRY_VERIFY_WITH_TIMEOUT(window.runsTab().model().rowOf(run_dir) >= 0, 30000);
  QTest::qWait(500);
  const QString shot = testOutputDir() + "/runs-imported-checkpoint.png";
  QVERIFY(window.grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));

  // The same file again gets a name of its own; a file that is not a checkpoint is refused.
  QCOMPARE(CheckpointImportJob::runDirFor(QFileInfo(run_dir).absolutePath(), reference + "/full.pt"),
           QDir::cleanPath(run_dir + "-2"));
  imported.clear();
  window.importCheckpoint(reference + "/other-keys.pt");
  QVERIFY(imported.wait(120000));
  QVERIFY(!imported.first().at(0).toBool());
  const QString reason = imported.first().at(1).toString();
  QVERIFY2(reason.contains("other-keys.pt") && reason.contains("\"weights\""), qPrintable(reason));
  QVERIFY(!QFileInfo::exists(QFileInfo(run_dir).absolutePath() + "/other-keys-imported"));
  QTRY_VERIFY(qobject_cast<QMessageBox*>(QApplication::activeModalWidget()) != nullptr);
  auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
  QCOMPARE(box->informativeText(), reason);
  box->close();
}

STREETGAN_TEST_MAIN(TestStudioRuns)
#include "tst_studio_runs.moc"
