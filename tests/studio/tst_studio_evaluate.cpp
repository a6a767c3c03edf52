// The Evaluate tab offscreen on a real tiny run with a held-out split: Parzen on the latest
// checkpoint (σ curve, result saved in the run's evaluations/ and counted by the Runs tab's
// summary), on every checkpoint (the curve over epochs), a cancel that saves nothing, bad
// held-out folders, and real beside generated grids; a screenshot of the tab.
#include "app/studio/evaluate_tab.h"
#include "app/studio/main_window.h"
#include "core/runs/run_summary.h"
#include "tests/support/test_support.h"
#include "widgets/sigma_curve_chart.h"
#include "widgets/training_chart.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

class TestStudioEvaluate : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void latestCheckpoint();
  void everyCheckpoint();
  void cancelSavesNothing();
  void heldOutFoldersGoTogether();
  void realBesideGenerated();

private:
  QStringList evaluations() const { return QDir(run_ + "/evaluations").entryList({"*.json"}, QDir::Files, QDir::Name); }

  QTemporaryDir dir_;
  QString data_, run_;
  std::unique_ptr<MainWindow> window_;
};

void TestStudioEvaluate::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_evaluate");
  qputenv("HOME", dir_.path().toUtf8());
  data_ = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("StreetGAN/runs/tiny");
  const auto trained = runCli(tinyTrainArgs(data_, run_, 2) << "--holdout-fraction" << "0.3");
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  QCOMPARE(QDir(run_ + "/checkpoints").entryList({"*.pt"}).size(), 2);
  window_ = std::make_unique<MainWindow>(STREETGAN_CLI);
  window_->resize(1600, 1000);
  window_->show();
  window_->tabs().setCurrentWidget(&window_->evaluateTab());
}

void TestStudioEvaluate::latestCheckpoint() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("latest");
  tab.setSizes(64, 4, 4);
  QSignalSpy done(&tab, &EvaluateTab::evaluated);
  QVERIFY2(tab.evaluate(), qPrintable(tab.statusText()));
  QVERIFY(done.wait(120000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QVERIFY2(tab.resultText().startsWith("Parzen log-likelihood (test): "), qPrintable(tab.resultText()));
  QCOMPARE(tab.sigmaChart().pointCount(), 10);  // the default σ grid
  // Saved in the run folder, and counted by the Runs tab's summary.
  const QString latest = QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name).last();
  const QString saved = run_ + "/evaluations/parzen-" + QFileInfo(latest).completeBaseName() + ".json";
  QFile file(saved);
  QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(saved));
  const QJsonObject result = QJsonDocument::fromJson(file.readAll()).object();
  QCOMPARE(result["kind"].toString(), QString("checkpoint"));
  QCOMPARE(result["n_samples"].toInt(), 64);
  QCOMPARE(result["sigma"].toDouble(), tab.sigmaChart().chosenSigma());
  QVERIFY(tab.resultText().contains(QString::number(result["mean_ll"].toDouble(), 'f', 2)));
  const auto summary = readRunSummary(run_.toStdString());
  QVERIFY(summary.ok());
  QCOMPARE(summary->evaluations, 1);
  QVERIFY(summary->best_parzen.has_value());
  QCOMPARE(*summary->best_parzen, result["mean_ll"].toDouble());
  // A fresh tab shows what is saved.
  EvaluateTab again(STREETGAN_CLI, dir_.filePath("StreetGAN/runs"));
  QVERIFY(again.selectRun(run_));
  QCOMPARE(again.resultText(), tab.resultText());
}

void TestStudioEvaluate::everyCheckpoint() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("every");
  tab.setSizes(64, 4, 4);
  QSignalSpy done(&tab, &EvaluateTab::evaluated);
  QVERIFY(tab.evaluate());
  QVERIFY(done.wait(120000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QCOMPARE(int(tab.epochChart().pointCount(0)), 2);
  QVERIFY(tab.resultText().startsWith("Over 2 checkpoints at σ"));
  QVERIFY(evaluations().contains("parzen-run.json"));
}

void TestStudioEvaluate::cancelSavesNothing() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget(QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name).first());
  tab.setSizes(400000, 4, 4);  // long enough to cancel
  const QStringList before = evaluations();
  QSignalSpy done(&tab, &EvaluateTab::evaluated);
  QVERIFY(tab.evaluate());
  QTest::qWait(500);
  tab.cancel();
  QVERIFY(done.wait(30000));
  QCOMPARE(done.first().first().toBool(), false);
  QVERIFY2(tab.statusText().contains("cancelled"), qPrintable(tab.statusText()));
  QCOMPARE(evaluations(), before);
  QVERIFY(!tab.isRunning());
}

void TestStudioEvaluate::heldOutFoldersGoTogether() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setHeldOutFolders(data_, QString());
  QVERIFY(!tab.evaluate());
  QCOMPARE(tab.statusText(), QString("Give both a validation and a test folder, or neither (the run's held-out split)."));
  tab.setHeldOutFolders(dir_.filePath("missing-valid"), dir_.filePath("missing-test"));
  tab.setTarget("latest");
  tab.setSizes(16, 4, 4);
  QSignalSpy done(&tab, &EvaluateTab::evaluated);
  QVERIFY(tab.evaluate());
  QVERIFY(done.wait(60000));
  QCOMPARE(done.first().first().toBool(), false);
  QVERIFY2(tab.statusText().contains("missing-valid"), qPrintable(tab.statusText()));
  tab.setHeldOutFolders(QString(), QString());
}

void TestStudioEvaluate::realBesideGenerated() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("latest");
  QSignalSpy ready(&tab, &EvaluateTab::comparisonReady);
  tab.compare();
  QVERIFY(ready.wait(60000));
  QCOMPARE(ready.first().first().toString(), QString());
  const QSize grid(4 * 64 + 5 * 2, 4 * 64 + 5 * 2);
  QCOMPARE(tab.realGrid().size(), grid);
  QCOMPARE(tab.generatedGrid().size(), grid);
  QVERIFY(tab.realGrid() != tab.generatedGrid());
  QTest::qWait(200);  // the layout takes the new images in
  const QString shot = testOutputDir() + "/studio-tab-evaluate.png";
  QVERIFY(window_->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

QTEST_MAIN(TestStudioEvaluate)
#include "tst_studio_evaluate.moc"
