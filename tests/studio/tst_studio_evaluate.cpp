// The Evaluate tab offscreen on a real tiny run with a held-out split: Parzen on the latest
// checkpoint (σ curve, result saved in the run's evaluations/ and counted by the Runs tab's
// summary), on every checkpoint (the curve over epochs), a cancel that saves nothing, bad
// held-out folders, and real beside generated grids; a screenshot of the tab. The quality metrics
// page: the suite on the latest checkpoint (the table, saved, read back by a fresh panel, saved as
// CSV and PNG), on every checkpoint (the charts from the saved files), FID kept to one feature
// space, a cancel that saves nothing; the nearest training images (8 samples × 3 neighbours,
// distances ascending, real paths), cancelled, and on a run without a checkpoint; screenshots of
// the page and of the dialog.
#include "app/studio/evaluate_tab.h"
#include "app/studio/main_window.h"
#include "app/studio/nearest_images.h"
#include "app/studio/nearest_images_dialog.h"
#include "app/studio/quality_panel.h"
#include "app/studio/quality_table.h"
#include "core/runs/quality_evaluation_file.h"
#include "core/runs/run_summary.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/sigma_curve_chart.h"
#include "widgets/training_chart.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidgetItem>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>

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
  void qualityMetricsOnTheLatest();
  void qualityMetricsOverTraining();
  void qualityFidOfOneFeatureSpace();
  void qualityMetricsCancelled();
  void nearestTrainingImages();
  void nearestImagesCancelled();
  void nearestImagesWithoutACheckpoint();

private:
  QualityPanel& showQualityPage() {
    EvaluateTab& tab = window_->evaluateTab();
    tab.pages().setCurrentWidget(&tab.qualityPanel());
    return tab.qualityPanel();
  }
  QStringList metricsFiles() const { return QDir(run_ + "/evaluations").entryList({"metrics-*.json"}, QDir::Files, QDir::Name); }
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

void TestStudioEvaluate::qualityMetricsOnTheLatest() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("latest");
  QualityPanel& panel = showQualityPage();
  panel.setSizes(16, 16);  // the tiny data set has 32 images: metrics that need no more
  panel.setMetrics({"swd", "msssim", "memorisation"});
  QSignalSpy done(&panel, &QualityPanel::evaluated);
  QVERIFY2(panel.evaluate(), qPrintable(panel.statusText()));
  QVERIFY(!panel.evaluate());  // one at a time
  QVERIFY(done.wait(120000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QVERIFY2(panel.statusText().startsWith("Saved in "), qPrintable(panel.statusText()));
  const QString latest = QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name).last();
  QCOMPARE(metricsFiles(), QStringList{"metrics-" + QFileInfo(latest).completeBaseName() + ".json"});

  // The table: SWD first, then its levels; MS-SSIM with the training images' figure beside it;
  // every figure under a name of its own.
  QualityTable& table = panel.table();
  QVERIFY(table.rowCount() >= 5);
  QCOMPARE(table.item(0, 0)->text(), QString("SWD ×10³ (mean over the levels)"));
  QCOMPARE(table.item(1, 0)->text(), QString("SWD ×10³ at 64 px"));
  bool diversity = false, copy_rate = false;
  for (int row = 0; row < table.rowCount(); ++row) {
    const QString figure = table.item(row, 0)->data(Qt::UserRole).toString();
    QVERIFY2(table.item(row, 0)->text() != figure, qPrintable(figure));
    QVERIFY(!table.item(row, 1)->text().isEmpty());
    if (figure == "msssim_samples") diversity = table.item(row, 2) && !table.item(row, 2)->text().isEmpty();
    copy_rate = copy_rate || figure == "copy_rate";
  }
  QVERIFY(diversity);
  QVERIFY(copy_rate);
  QVERIFY2(panel.detailsText().contains("16 samples against 16 training images of 64 px."), qPrintable(panel.detailsText()));
  QVERIFY(panel.detailsText().startsWith(latest + ": epoch "));
  QCOMPARE(int(panel.chartPointCount("swd_e3")), 1);
  QCOMPARE(int(panel.chartPointCount("copy_rate")), 1);

  // Saved as CSV (full precision, the figure first) and as an image.
  const QString csv = testOutputDir() + "/quality-metrics.csv";
  QCOMPARE(table.saveCsv(csv), QString());
  const QList<QByteArray> lines = readFileBytes(csv).trimmed().split('\n');
  QCOMPARE(int(lines.size()), table.rowCount() + 1);
  QCOMPARE(lines.first(), QByteArray("figure,metric,value,training images,good is"));
  QVERIFY(lines.at(1).startsWith("swd_e3,"));
  const QString png = testOutputDir() + "/quality-metrics-table.png";
  QCOMPARE(table.saveImage(png), QString());
  QVERIFY(!QImage(png).isNull());

  // A fresh panel shows what is saved.
  QualityPanel again(STREETGAN_CLI);
  again.setRun(run_);
  again.setTarget("latest");
  QCOMPARE(again.table().rowCount(), table.rowCount());
  QCOMPARE(again.detailsText(), panel.detailsText());

  // The verdicts `streetgan metrics` gave are said under the figures, one a line.
  QualityEvaluation judged;
  judged.n_samples = judged.n_train = 40;
  judged.image_size = 64;
  judged.alarms = {{"memorisation", "memorisation: 100.0% of the samples are nearer a training image"}};
  QVERIFY(QualityTable::describe(judged).endsWith(
      "\nAlarm: memorisation: 100.0% of the samples are nearer a training image."));
}

void TestStudioEvaluate::qualityMetricsOverTraining() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("every");
  QualityPanel& panel = showQualityPage();
  panel.setSizes(16, 16);
  panel.setMetrics({"swd", "msssim", "memorisation"});
  QSignalSpy done(&panel, &QualityPanel::evaluated);
  QVERIFY2(panel.evaluate(), qPrintable(panel.statusText()));
  QVERIFY(done.wait(240000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QCOMPARE(int(metricsFiles().size()), 2);
  // The charts read the saved files: a point per checkpoint.
  QCOMPARE(int(panel.chartPointCount("swd_e3")), 2);
  QCOMPARE(int(panel.chartPointCount("msssim_samples")), 2);
  QCOMPARE(int(panel.chartPointCount("msssim_train")), 2);
  QCOMPARE(int(panel.chartPointCount("copy_rate")), 2);
  QCOMPARE(int(panel.chartPointCount("fid")), 0);
  QCOMPARE(panel.chartsText(), QString("2 saved results over training."));
  tab.setTarget("latest");
  QTest::qWait(200);  // the layout takes the new table and charts in
  const QString shot = testOutputDir() + "/studio-tab-evaluate-quality.png";
  QVERIFY(window_->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

void TestStudioEvaluate::qualityFidOfOneFeatureSpace() {
  // Saved results of one run in two feature spaces, and a file that is not JSON.
  const QString run = dir_.filePath("spaces");
  const char* spaces[] = {"torchscript:0123456789abcdef@299px", "pixels32-pca256", "pixels32-pca256"};
  for (int i = 0; i < 3; ++i) {
    QualityEvaluation evaluation;
    evaluation.checkpoint = QualityEvaluation::Checkpoint{"step-000000000" + std::to_string(i + 1) + ".pt", i + 1, 10 * (i + 1), 80 * (i + 1)};
    evaluation.n_samples = 100;
    evaluation.n_train = 100;
    evaluation.image_size = 64;
    evaluation.feature_space = spaces[i];
    evaluation.metrics = {{quality_figure::kFid, 100.0 - i}, {quality_figure::kSwd, 50.0 - i}};
    const Status written = QualityEvaluationFile::write(run.toStdString(), "step-000000000" + std::to_string(i + 1), evaluation);
    QVERIFY2(written.ok(), written.error().c_str());
  }
  QFile broken(run + "/evaluations/metrics-broken.json");
  QVERIFY(broken.open(QIODevice::WriteOnly));
  broken.write("not JSON");
  broken.close();
  QualityPanel panel(STREETGAN_CLI);
  panel.setRun(run);
  QCOMPARE(int(panel.chartPointCount("swd_e3")), 3);
  QCOMPARE(int(panel.chartPointCount("fid")), 2);
  QCOMPARE(panel.chartsText(), QString("3 saved results over training. FID in pixels32-pca256. 1 result of another feature "
                                       "space left out of the FID curve. 1 unreadable file passed over."));
  QCOMPARE(panel.detailsText(), QString("Choose a run with a checkpoint."));
}

void TestStudioEvaluate::qualityMetricsCancelled() {
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("latest");
  QualityPanel& panel = showQualityPage();
  panel.setSizes(150000, 16);  // long enough to cancel while sampling, under the suite's 8 GiB
  panel.setMetrics({"swd"});
  const QStringList before = evaluations();
  QSignalSpy done(&panel, &QualityPanel::evaluated);
  QVERIFY(panel.evaluate());
  QTest::qWait(500);
  panel.cancel();
  QVERIFY(done.wait(30000));
  QCOMPARE(done.first().first().toBool(), false);
  QVERIFY2(panel.statusText().contains("cancelled"), qPrintable(panel.statusText()));
  QCOMPARE(evaluations(), before);
  QVERIFY(!panel.isRunning());
}

void TestStudioEvaluate::nearestTrainingImages() {
  // The worker alone: 8 samples, each with its 3 nearest training photographs.
  NearestImagesRequest request;
  request.run_dir = run_;
  std::atomic<bool> cancel{false};
  std::int64_t last_done = -1, last_total = -1;
  const NearestImagesResult result = findNearestImages(request, cancel, [&](std::int64_t done, std::int64_t total) {
    QVERIFY(done >= last_done);
    last_done = done;
    last_total = total;
  });
  QVERIFY2(result.status.ok(), qPrintable(errorText(result.status)));
  QCOMPARE(result.checkpoint, QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name).last());
  QCOMPARE(result.image_size, 64);
  QCOMPARE(result.compare_size, 32);
  QVERIFY(result.train_total > 3);
  QCOMPARE(result.train_searched, result.train_total);  // fewer than the cap: every one
  QCOMPARE(result.train_skipped, std::int64_t(0));
  QCOMPARE(last_done, result.train_total);
  QCOMPARE(last_total, result.train_total);
  QCOMPARE(int(result.rows.size()), 8);
  for (int i = 0; i < result.rows.size(); ++i) {
    const NearestImagesRow& row = result.rows[i];
    QCOMPARE(row.seed, std::uint64_t(i));
    QCOMPARE(row.sample.size(), QSize(64, 64));
    QCOMPARE(int(row.nearest.size()), 3);
    for (int j = 0; j < row.nearest.size(); ++j) {
      const NearestTrainingImage& image = row.nearest[j];
      QVERIFY2(QFileInfo(image.path).isFile(), qPrintable(image.path));
      QCOMPARE(QFileInfo(QDir(result.dataroot).filePath(image.relative_path)).canonicalFilePath(),
               QFileInfo(image.path).canonicalFilePath());
      QVERIFY(!image.relative_path.startsWith('/'));
      QVERIFY(image.distance > 0);
      QVERIFY(!image.image.isNull());
      QCOMPARE(image.image.width(), image.image.height());  // the center square
      if (j > 0) QVERIFY(image.distance >= row.nearest[j - 1].distance);
    }
  }

  // Through the quality page: the dialog.
  EvaluateTab& tab = window_->evaluateTab();
  QVERIFY(tab.selectRun(run_));
  tab.setTarget("latest");
  QualityPanel& panel = showQualityPage();
  QSignalSpy ready(&panel, &QualityPanel::nearestImagesReady);
  panel.showNearestImages();
  QVERIFY(panel.isSearching());
  QVERIFY(ready.wait(120000));
  QCOMPARE(ready.first().first().toString(), QString());
  NearestImagesDialog* dialog = panel.nearestDialog();
  QVERIFY(dialog);
  QCOMPARE(dialog->rowCount(), 8);
  const QStringList captions = dialog->captions(0);
  QCOMPARE(int(captions.size()), 3);
  QCOMPARE(captions.first(), QString("distance %1 · %2").arg(result.rows[0].nearest[0].distance, 0, 'f', 2)
                                 .arg(result.rows[0].nearest[0].relative_path));
  QVERIFY2(dialog->headerText().contains(QString("Searched all %1 training images.").arg(qlonglong(result.train_total))),
           qPrintable(dialog->headerText()));
  QTest::qWait(200);
  const QString shot = testOutputDir() + "/studio-nearest-images.png";
  QVERIFY(dialog->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
  dialog->close();
}

void TestStudioEvaluate::nearestImagesCancelled() {
  NearestImagesRequest request;
  request.run_dir = run_;
  std::atomic<bool> cancel{true};
  QCOMPARE(errorText(findNearestImages(request, cancel).status), QString("cancelled"));
  // Cancelled between chunks, once the first was searched.
  request.chunk = 4;
  cancel = false;
  int reports = 0;
  const NearestImagesResult result = findNearestImages(request, cancel, [&](std::int64_t done, std::int64_t) {
    ++reports;
    if (done > 0) cancel = true;
  });
  QCOMPARE(errorText(result.status), QString("cancelled"));
  QCOMPARE(reports, 2);  // before the first chunk and after it
  QVERIFY(result.rows.isEmpty());
}

void TestStudioEvaluate::nearestImagesWithoutACheckpoint() {
  const QString empty = dir_.filePath("StreetGAN/empty-run");
  QVERIFY(QDir().mkpath(empty + "/checkpoints"));
  NearestImagesRequest request;
  request.run_dir = empty;
  std::atomic<bool> cancel{false};
  const NearestImagesResult result = findNearestImages(request, cancel);
  QCOMPARE(errorText(result.status), QString("No checkpoint in " + empty + "/checkpoints."));
  QVERIFY(result.rows.isEmpty());
  // The page says so too, and refuses to evaluate.
  QualityPanel panel(STREETGAN_CLI);
  panel.setRun(empty);
  QVERIFY(!panel.evaluate());
  QCOMPARE(panel.statusText(), QString("Choose a run with a checkpoint first."));
  QSignalSpy ready(&panel, &QualityPanel::nearestImagesReady);
  panel.showNearestImages();
  QVERIFY(ready.wait(30000));
  QCOMPARE(ready.first().first().toString(), errorText(result.status));
  QCOMPARE(panel.statusText(), "Nearest training images: " + errorText(result.status));
  QVERIFY(!panel.nearestDialog());
}

STREETGAN_TEST_MAIN(TestStudioEvaluate)
#include "tst_studio_evaluate.moc"
