// The studio's main window and Train tab offscreen, driving a real `streetgan train` on tiny demo
// data: the form's config runs, every step reaches the charts (compared with events.jsonl), sample
// grids are browsable, stop and resume go through the tab; screenshots of the window are saved.
#include "app/studio/compare_view.h"
#include "app/studio/dataset_tab.h"
#include "app/studio/explore_tab.h"
#include "app/studio/main_window.h"
#include "app/studio/train_tab.h"
#include "core/data/image_dataset.h"
#include "tests/support/test_support.h"
#include "widgets/dataset_picker.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTimer>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

class TestStudioTrain : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void shellHasItsTabs();
  void demoDataIsRenderedOnceAndSelected();
  void demoStartsARunAtOnce();
  void studioProgramOptions();
  void datasetPickerCountsAfterTheFilters();
  void runFromTheForm();
  void stopAndResumeFromTheTab();
  void twoProcessesFromTheTab();
  void guiNeverStallsAt2000EventsPerSecond();

private:
  /// A tiny, fast config in the form (as tinyTrainArgs).
  void tinyConfig(TrainTab& tab, int epochs);

  QTemporaryDir dir_;
  QString data_;
};

void TestStudioTrain::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_train");
  qputenv("HOME", dir_.path().toUtf8());  // QSettings and the default runs folder stay in the test's folder
  data_ = makeTinyDataset(dir_.filePath("data"));
}

void TestStudioTrain::tinyConfig(TrainTab& tab, int epochs) {
  tab.setDataroot(data_);
  for (const auto& [key, value] : tinyFormEntries(epochs)) tab.form().enterText(key, value);
  QVERIFY2(tab.form().isValid(), "the tiny config was refused");
}

void TestStudioTrain::shellHasItsTabs() {
  MainWindow window(STREETGAN_CLI);
  QCOMPARE(window.tabs().count(), 5);
  QStringList names;
  for (int i = 0; i < window.tabs().count(); ++i) names << window.tabs().tabText(i).remove('&');
  QCOMPARE(names, (QStringList{"Train", "Explore", "Dataset", "Evaluate", "Runs"}));
  // Ctrl+1 … Ctrl+5 switch tabs.
  window.show();
  window.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&window));
  QTest::keyClick(&window, Qt::Key_5, Qt::ControlModifier);
  QCOMPARE(window.tabs().currentIndex(), 4);
  QTest::keyClick(&window, Qt::Key_1, Qt::ControlModifier);
  QCOMPARE(window.tabs().currentIndex(), 0);
}

void TestStudioTrain::demoDataIsRenderedOnceAndSelected() {
  MainWindow window(STREETGAN_CLI);
  TrainTab& tab = window.trainTab();
  const QString folder = dir_.filePath("demo-data");
  QSignalSpy ready(&tab, &TrainTab::demoDataFinished);
  tab.useDemoData(folder);
  QVERIFY(tab.demoDataBusy());
  QVERIFY(ready.wait(300000));
  QCOMPARE(ready.first().first().toBool(), true);
  QCOMPARE(QString::fromStdString(tab.form().config().dataroot), folder);
  QVERIFY(QFileInfo(folder + "/train_val").isDir());
  // The second time it is only selected.
  tab.setDataroot(data_);
  tab.useDemoData(folder);
  QVERIFY(!tab.demoDataBusy());
  QCOMPARE(ready.size(), 2);
  QCOMPARE(QString::fromStdString(tab.form().config().dataroot), folder);
}

void TestStudioTrain::demoStartsARunAtOnce() {
  // The main job: --demo renders the demo data (1,000 scenes) and starts a demo run at once;
  // Explore follows it, the Dataset tab shows its data. A second studio opens that run instead.
  MainWindow window(STREETGAN_CLI);
  window.resize(1280, 720);
  window.show();
  TrainTab& tab = window.trainTab();
  QSignalSpy started(&tab, &TrainTab::runStarted);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  window.startDemo();
  QVERIFY(started.wait(300000));
  const QString run = started.first().first().toString();
  QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) >= 1, 120000);  // config.json is written by then
  const QJsonObject config = QJsonDocument::fromJson(readFileBytes(run + "/config.json")).object();
  QCOMPARE(config.value("preset").toString(), QString("demo"));
  QCOMPARE(config.value("dataroot").toString(), window.demoDataFolder());
  QCOMPARE(config.value("ngf").toInt(), 32);
  QCOMPARE(config.value("batch_size").toInt(), 32);
  QCOMPARE(ImageDataset::open(window.demoDataFolder().toStdString(), {}, DatasetPart::All)->size(), std::size_t(1000));
  QCOMPARE(window.tabs().currentWidget(), &tab);
  QVERIFY(window.exploreTab().isFollowing());
  QCOMPARE(window.datasetTab().root(), window.demoDataFolder());
  {
    MainWindow second(STREETGAN_CLI);
    QSignalSpy second_started(&second.trainTab(), &TrainTab::runStarted);
    second.startDemo();
    QTRY_COMPARE_WITH_TIMEOUT(second.trainTab().runDirectory(), run, 60000);
    QCOMPARE(second_started.size(), 0);
    QVERIFY(second.exploreTab().isFollowing());
  }
  tab.stopRun();
  QVERIFY(finished.wait(120000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Stopped);
}

void TestStudioTrain::studioProgramOptions() {
  // The program itself: a screenshot of a chosen tab, and plain errors for bad options.
  QProcess studio;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert("QT_QPA_PLATFORM", "offscreen");
  studio.setProcessEnvironment(environment);
  const QString shot = dir_.filePath("runs-tab.png");
  studio.start(STREETGAN_STUDIO, {"--tab", "runs", "--size", "1600x1000", "--screenshot", shot, "--after", "0.5"});
  QVERIFY(studio.waitForFinished(60000));
  QCOMPARE(studio.exitCode(), 0);
  QCOMPARE(QImage(shot).size(), QSize(1600, 1000));
  const QList<QPair<QStringList, QString>> bad = {
      {{"--tab", "sideways"}, "streetgan-studio: --tab: \"sideways\" is not one of train, explore, dataset, evaluate, runs"},
      {{"--size", "big"}, "streetgan-studio: --size: \"big\" is not <width>x<height>"},
      {{"--after", "-1"}, "streetgan-studio: --after: \"-1\" is not a number of seconds"}};
  for (const auto& [arguments, message] : bad) {
    studio.start(STREETGAN_STUDIO, arguments);
    QVERIFY(studio.waitForFinished(60000));
    QCOMPARE(studio.exitCode(), 2);
    // (Qt itself may warn first, e.g. about XDG_RUNTIME_DIR; the last line is ours.)
    QCOMPARE(QString::fromUtf8(studio.readAllStandardError()).trimmed().section('\n', -1), message);
  }
}

void TestStudioTrain::datasetPickerCountsAfterTheFilters() {
  MainWindow window(STREETGAN_CLI);
  TrainTab& tab = window.trainTab();
  DatasetPicker& picker = tab.datasetPicker();
  auto countFinished = [&picker] {
    QSignalSpy counted(&picker, &DatasetPicker::counted);
    return picker.isCounting() ? counted.wait(30000) : true;
  };
  tab.setDataroot(data_);
  QVERIFY(countFinished());
  QVERIFY2(picker.lastCount().ok, qPrintable(picker.lastCount().text));
  QCOMPARE(picker.lastCount().images, 32);
  QVERIFY2(picker.lastCount().text.startsWith("MSLS layout: 32 images to train on"), qPrintable(picker.lastCount().text));
  // A filter from the form narrows it at once (one frame per sequence).
  tab.form().enterText("data.max_per_sequence", "1");
  QVERIFY(countFinished());
  DatasetFilter filter;
  filter.max_per_sequence = 1;
  const auto expected = ImageDataset::open(data_.toStdString(), filter);
  QVERIFY(expected.ok());
  QVERIFY(expected->size() < 32);
  QCOMPARE(picker.lastCount().images, qint64(expected->size()));
  QVERIFY2(picker.lastCount().text.contains("→"), qPrintable(picker.lastCount().text));  // each filter's count
  // A held-out split is counted apart.
  tab.form().enterText("data.max_per_sequence", "0");
  tab.form().enterText("data.holdout_fraction", "0.25");
  QVERIFY(countFinished());
  QVERIFY(picker.lastCount().held_out > 0);
  QCOMPARE(picker.lastCount().images + picker.lastCount().held_out, 32);
  // Bad choices are said beside the field.
  tab.form().enterText("data.cities", "atlantis");
  QVERIFY(countFinished());
  QVERIFY(!picker.lastCount().ok);
  QVERIFY2(picker.lastCount().text.contains("atlantis"), qPrintable(picker.lastCount().text));
  tab.setDataroot(dir_.filePath("no-such-folder"));
  QVERIFY(countFinished());
  QCOMPARE(picker.lastCount().text, dir_.filePath("no-such-folder") + " does not exist.");
  const QString shot = testOutputDir() + "/studio-dataset-picker-error.png";
  window.resize(1400, 900);
  QVERIFY(window.grab().save(shot));
}

void TestStudioTrain::runFromTheForm() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1600, 1000);
  window.show();
  TrainTab& tab = window.trainTab();
  tab.setRunsRoot(dir_.filePath("runs"));
  tinyConfig(tab, 3);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  QVERIFY2(tab.startRun(), qPrintable(tab.statusText()));
  QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) >= 6, 120000);
  const QString running = testOutputDir() + "/studio-train-running.png";
  QVERIFY(window.grab().save(running));
  QVERIFY(finished.wait(300000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Completed);
  // Every step of the run is in the charts, nothing more.
  const auto events = readEvents(tab.runDirectory());
  const int steps = eventsOfType(events, "step").size();
  QVERIFY(steps > 0);
  QCOMPARE(static_cast<int>(tab.dashboard().lossChart().pointCount(0)), steps);
  QCOMPARE(static_cast<int>(tab.dashboard().discriminatorChart().pointCount(2)), steps);
  QCOMPARE(static_cast<int>(tab.dashboard().speedChart().pointCount(1)), steps);
  QCOMPARE(tab.dashboard().sampleCount(), eventsOfType(events, "samples").size());
  QVERIFY(tab.statusText().startsWith("Completed: training completed"));
  tab.dashboard().lossChart().redraw();
  const QString done = testOutputDir() + "/studio-train-completed.png";
  QVERIFY(window.grab().save(done));
  qInfo("screenshots: %s, %s", qPrintable(running), qPrintable(done));
}

void TestStudioTrain::stopAndResumeFromTheTab() {
  MainWindow window(STREETGAN_CLI);
  TrainTab& tab = window.trainTab();
  tab.setRunsRoot(dir_.filePath("runs-stop"));
  tinyConfig(tab, 300);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  QVERIFY(tab.startRun());
  QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) >= 1, 120000);
  tab.stopRun();
  QVERIFY(finished.wait(120000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Stopped);
  const QString run = tab.runDirectory();
  tab.form().enterText("epochs", "2");
  QVERIFY(tab.resumeRun());
  QVERIFY(finished.wait(300000));
  QCOMPARE(finished.last().first().value<SessionState>(), SessionState::Completed);
  QCOMPARE(tab.runDirectory(), run);
  const auto events = readEvents(run);
  QCOMPARE(eventsOfType(events, "run_started").size(), 2);
  QCOMPARE(events.last().value("status").toString(), QString("completed"));
}

void TestStudioTrain::guiNeverStallsAt2000EventsPerSecond() {
  // A real process that speaks the protocol at about 2,000 step events a second for 5 s (100,
  // then a 45 ms sleep), in place of `streetgan train`; a comparison of 4 runs is open meanwhile.
  QTemporaryDir dir;
  const QString script = dir.filePath("fast-trainer");
  QVERIFY(writeScript(script,
             "printf '{\"v\":1,\"type\":\"run_started\",\"time\":0,\"device\":\"cpu\",\"config\":{\"epochs\":1}}\\n'\n"
             "i=0\n"
             "while [ $i -lt 10000 ]; do\n"
             "  j=0\n"
             "  while [ $j -lt 100 ]; do\n"
             "    i=$((i+1)); j=$((j+1))\n"
             "    printf '{\"v\":1,\"type\":\"step\",\"time\":%d,\"epoch\":1,\"iteration\":%d,\"iterations\":10000,"
             "\"step\":%d,\"images_seen\":%d,\"loss_d\":0.%d,\"loss_g\":1.%d,\"d_x\":0.7,\"d_g_z1\":0.3,\"d_g_z2\":0.2,"
             "\"images_per_s\":500,\"data_wait_fraction\":0.01}\\n' $i $i $i $((i*64)) $((i%97)) $((i%89))\n"
             "  done\n"
             "  sleep 0.045\n"
             "done\n"
             "printf '{\"v\":1,\"type\":\"run_finished\",\"status\":\"completed\"}\\n'\n"));

  // This VM is shared: another tenant can take the CPU for tens of milliseconds at any moment,
  // which no GUI code can prevent. The probe's control timer, on an idle thread of its own, tells
  // such attempts apart: an attempt counts when the control was never late by more than 20 ms
  // (then the GUI thread must stay under the 50 ms); up to six attempts of 5 s. Measured
  // on the 2-core dev VM: GUI 10-20 ms when quiet; 50-97 ms in a noisy period when the same binary
  // measured 15.5 ms in CI minutes before. Four charts redrawing in one pass with antialiasing
  // stalled 60-85 ms on a quiet machine.
  // With a comparison of 4 earlier runs open beside it (20,000 steps each, read from their logs).
  QStringList compared;
  for (int r = 0; r < 4; ++r) {
    const QString run = dir.filePath(QString("earlier-%1").arg(r));
    QVERIFY(QDir().mkpath(run));
    QFile log(run + "/events.jsonl");
    QVERIFY(log.open(QIODevice::WriteOnly));
    QByteArray bytes = "{\"v\":1,\"type\":\"run_started\",\"time\":0,\"device\":\"cpu\",\"config\":{\"epochs\":1,\"batch_size\":64}}\n";
    for (int i = 1; i <= 20000; ++i)
      bytes += QString("{\"v\":1,\"type\":\"step\",\"time\":%1,\"epoch\":1,\"iteration\":%2,\"iterations\":20000,\"step\":%2,"
                       "\"images_seen\":%3,\"loss_d\":0.%4,\"loss_g\":1.%5,\"d_x\":0.7,\"d_g_z1\":0.3,\"d_g_z2\":0.2,"
                       "\"images_per_s\":%6,\"data_wait_fraction\":0.01}\n")
                   .arg(i * 0.1).arg(i).arg(i * 64).arg(i % 97).arg(i % 89).arg(400 + 50 * r).toUtf8();
    QVERIFY(log.write(bytes) == bytes.size());
    compared << run;
  }
  double judged = -1, noisiest = 0;
  for (int attempt = 1; attempt <= 6 && judged < 0; ++attempt) {
    MainWindow window(script);
    window.resize(1600, 1000);
    window.show();
    TrainTab& tab = window.trainTab();
    tab.setRunsRoot(dir.filePath(QString("runs-%1").arg(attempt)));
    tab.setDataroot(data_);
    QSignalSpy finished(&tab, &TrainTab::runFinished);
    window.showComparison(compared);
    QVERIFY(window.lastComparison());
    QSignalSpy compared_read(window.lastComparison(), &CompareView::updated);
    QVERIFY(compared_read.wait(60000));
    QCOMPARE(window.lastComparison()->lossChart().pointCount(6), std::size_t(20000));
    QTest::qWait(500);  // the comparison is open and shown: its first paint is done
    TimerLatenessProbe probe;
    probe.start();
    QVERIFY(tab.startRun());
    QVERIFY(finished.wait(120000));
    probe.stop();
    const double seconds = probe.seconds();
    QCOMPARE(static_cast<int>(tab.dashboard().lossChart().pointCount(0)), 10000);
    qInfo("attempt %d: 10,000 events in %.1f s (%.0f/s); worst timer lateness %.1f ms over %d ticks "
          "(control thread: %.1f ms)", attempt, seconds, 10000 / seconds, probe.worstMs(), probe.ticks(), probe.controlWorstMs());
    if (probe.controlWorstMs() < 20) judged = probe.worstMs();
    noisiest = std::max(noisiest, probe.controlWorstMs());
  }
  if (judged < 0)
    QSKIP(qPrintable(QString("the machine itself stalled (the idle control thread was late up to %1 ms) in every "
                             "attempt; the GUI cannot be judged now").arg(noisiest)));
  qInfo("judged attempt: %.1f ms (target 50 ms)", judged);
  QVERIFY2(judged < 50, qPrintable(QString("the GUI thread stalled %1 ms while the machine was quiet").arg(judged)));
}

// Settings → Processes 2: the tab starts `streetgan train --nproc 2`; its stop reaches both
// ranks through the launcher, and the run resumes.
void TestStudioTrain::twoProcessesFromTheTab() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1600, 1000);
  window.show();
  TrainTab& tab = window.trainTab();
  tab.setRunsRoot(dir_.filePath("runs-ranks"));
  tab.setRunDefaults("cpu", 1, 2);
  tinyConfig(tab, 300);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  QVERIFY2(tab.startRun(), qPrintable(tab.statusText()));
  QTRY_VERIFY_WITH_TIMEOUT(tab.dashboard().lossChart().pointCount(0) >= 3, 120000);
  tab.stopRun();
  QVERIFY(finished.wait(120000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Stopped);
  const QString run = tab.runDirectory();
  const auto started = eventsOfType(readEvents(run), "run_started");
  QCOMPARE(started.size(), 1);
  QCOMPARE(started.first().value("world_size").toInt(), 2);
  QCOMPARE(started.first().value("backend").toString(), QString("gloo"));
  const auto stopped = eventsOfType(readEvents(run), "run_finished").last();
  QCOMPARE(stopped.value("status").toString(), QString("stopped"));
  const auto checksums = stopped.value("rank_checksums").toArray();
  QCOMPARE(checksums.size(), 2);
  QCOMPARE(checksums[0].toDouble(), checksums[1].toDouble());
  tab.form().enterText("epochs", QString::number(stopped.value("epoch").toInt() + 1));
  QVERIFY(tab.resumeRun());
  QVERIFY(finished.wait(300000));
  QCOMPARE(finished.last().first().value<SessionState>(), SessionState::Completed);
  QCOMPARE(eventsOfType(readEvents(run), "run_started").last().value("world_size").toInt(), 2);
  const QString shot = testOutputDir() + "/studio-train-two-processes.png";
  QVERIFY(window.grab().save(shot));
}

QTEST_MAIN(TestStudioTrain)
#include "tst_studio_train.moc"
