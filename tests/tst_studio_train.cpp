// The studio's main window and Train tab offscreen, driving a real `streetgan train` on tiny demo
// data: the form's config runs, every step reaches the charts (compared with events.jsonl), sample
// grids are browsable, stop and resume go through the tab; screenshots of the window are saved.
#include "main_window.h"
#include "test_support.h"
#include "train_tab.h"

#include <QFileInfo>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::test;

class TestStudioTrain : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void shellHasItsTabs();
  void demoDataIsRenderedOnceAndSelected();
  void runFromTheForm();
  void stopAndResumeFromTheTab();

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
  const QList<QPair<QString, QString>> entries = {
      {"batch_size", "8"}, {"ngf", "8"}, {"ndf", "8"}, {"nz", "16"}, {"epochs", QString::number(epochs)},
      {"log_frequency", "3"}, {"save_frequency", "1"}, {"seed", "7"}, {"threads", "2"}, {"sample_count", "16"}};
  for (const auto& [key, value] : entries) tab.form().enterText(key, value);
  QVERIFY2(tab.form().isValid(), "the tiny config was refused");
}

void TestStudioTrain::shellHasItsTabs() {
  MainWindow window(STREETGAN_CLI);
  QCOMPARE(window.tabs().count(), 5);
  QStringList names;
  for (int i = 0; i < window.tabs().count(); ++i) names << window.tabs().tabText(i).remove('&');
  QCOMPARE(names, (QStringList{"Train", "Explore", "Dataset", "Evaluate", "Runs"}));
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

void TestStudioTrain::runFromTheForm() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1600, 1000);
  window.show();
  TrainTab& tab = window.trainTab();
  tab.setRunsRoot(dir_.filePath("runs"));
  tinyConfig(tab, 3);
  QSignalSpy finished(&tab, &TrainTab::runFinished);
  QVERIFY2(tab.startRun(), qPrintable(tab.statusText()));
  QTRY_VERIFY_WITH_TIMEOUT(tab.lossChart().pointCount(0) >= 6, 120000);
  const QString running = testOutputDir() + "/studio-train-running.png";
  QVERIFY(window.grab().save(running));
  QVERIFY(finished.wait(300000));
  QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Completed);
  // Every step of the run is in the charts, nothing more.
  const auto events = readEvents(tab.runDirectory());
  const int steps = eventsOfType(events, "step").size();
  QVERIFY(steps > 0);
  QCOMPARE(static_cast<int>(tab.lossChart().pointCount(0)), steps);
  QCOMPARE(static_cast<int>(tab.discriminatorChart().pointCount(2)), steps);
  QCOMPARE(static_cast<int>(tab.speedChart().pointCount(1)), steps);
  QCOMPARE(tab.sampleCount(), eventsOfType(events, "samples").size());
  QVERIFY(tab.statusText().startsWith("Completed: training completed"));
  tab.lossChart().redraw();
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
  QTRY_VERIFY_WITH_TIMEOUT(tab.lossChart().pointCount(0) >= 1, 120000);
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

QTEST_MAIN(TestStudioTrain)
#include "tst_studio_train.moc"
