// Runs side by side, offscreen, on runs of the real `streetgan` program: Runs tab → Compare on
// three runs overlays every step of each (checked against events.jsonl), the table's images/s,
// time per epoch and dollars per million images follow from the logs and the cost per hour of
// where each trained, the sample slider shows each run's grid nearest the point, the view saves
// as PNG and CSV; a run still training is followed until it ends; the quality figures (SWD and FID
// charts, FID only within one feature space; the latest SWD, FID, copy rate and the alarms in the
// table) from hand-written logs. Screenshots are saved.
#include "app/studio/compare_view.h"
#include "app/studio/config_difference_table.h"
#include "app/studio/main_window.h"
#include "app/studio/runs_tab.h"
#include "app/studio/studio_settings.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QJsonArray>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <tuple>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::test;

class TestStudioCompare : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void compareFromTheRunsTab();
  void followsARunStillTraining();
  void qualityFiguresSideBySide();

private:
  QTemporaryDir dir_;
  QString data_, runs_;
  QStringList trained_;
};

namespace {

double medianRate(const QString& run) {
  std::vector<double> rates;
  for (const QJsonObject& step : eventsOfType(readEvents(run), "step")) rates.push_back(step.value("images_per_s").toDouble());
  std::sort(rates.begin(), rates.end());
  const std::size_t n = rates.size();
  return n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
}

int column(const QTableWidget& table, const QString& name) {
  for (int c = 0; c < table.columnCount(); ++c)
    if (table.horizontalHeaderItem(c)->text() == name) return c;
  return -1;
}

}  // namespace

void TestStudioCompare::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_compare");
  qputenv("HOME", dir_.path().toUtf8());
  data_ = makeTinyDataset(dir_.filePath("data"));
  runs_ = dir_.filePath("StreetGAN/runs");
  // Three runs: two epochs at batch 8, three at batch 8, two at batch 16.
  const QList<std::tuple<QString, int, int>> runs{{"batch8-2ep", 2, 8}, {"batch8-3ep", 3, 8}, {"batch16-2ep", 2, 16}};
  for (const auto& [name, epochs, batch] : runs) {
    QStringList args = tinyTrainArgs(data_, runs_ + "/" + name, epochs);
    const auto t = args.indexOf("-t");
    args[t + 1] = QString(R"({"batch_size":%1,"ngf":8,"ndf":8,"nz":16})").arg(batch);
    const CliResult r = runCli(args);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    trained_ << runs_ + "/" + name;
  }
}

void TestStudioCompare::compareFromTheRunsTab() {
  StudioSettings settings = StudioSettings::load();
  settings.cost_per_hour = 0.5;  // this computer: 50 cents an hour
  settings.save();
  MainWindow window(STREETGAN_CLI);
  window.resize(1280, 720);
  window.show();
  RunsTab& runs = window.runsTab();
  window.tabs().setCurrentWidget(&runs);
  runs.model().refresh();
  QTRY_VERIFY_WITH_TIMEOUT(!runs.model().isRefreshing() && runs.model().rowCount() == 3, 30000);
  QPushButton* compare = nullptr;
  for (QPushButton* button : runs.findChildren<QPushButton*>())
    if (button->text() == "Compare") compare = button;
  QVERIFY(compare);
  QVERIFY(runs.select(trained_[0]));
  QVERIFY(!compare->isEnabled());  // one run: nothing to compare
  QVERIFY(runs.selectRuns(trained_));
  QVERIFY(compare->isEnabled());
  compare->click();
  CompareView* view = window.lastComparison();
  QVERIFY(view);
  QSignalSpy updated(view, &CompareView::updated);
  QVERIFY(updated.wait(30000));
  QCOMPARE(view->runCount(), 3);

  for (int k = 0; k < 3; ++k) {
    const auto events = readEvents(trained_[k]);
    const int steps = eventsOfType(events, "step").size();
    QCOMPARE(int(view->lossChart().pointCount(2 * k)), steps);      // loss_d of run k
    QCOMPARE(int(view->lossChart().pointCount(2 * k + 1)), steps);  // loss_g
    QCOMPARE(int(view->speedChart().pointCount(k)), steps);
  }
  QCOMPARE(view->lossChart().pointCount(2), std::size_t(3 * 4));  // 32 images at batch 8: 4 steps an epoch

  QTableWidget& table = view->table();
  QCOMPARE(table.rowCount(), 3);
  for (int k = 0; k < 3; ++k) {
    QCOMPARE(table.item(k, 0)->text(), QDir(trained_[k]).dirName());
    QCOMPARE(table.item(k, column(table, "Trained on"))->text(), QString("this computer"));
    const double rate = medianRate(trained_[k]);
    QCOMPARE(table.item(k, column(table, "Images/s"))->text(), QString::number(rate, 'f', 1));
    QCOMPARE(table.item(k, column(table, "$/hour"))->text(), QString("0.50"));
    QCOMPARE(table.item(k, column(table, "$ per million images"))->text(), QString::number(0.5 / (rate * 3600) * 1e6, 'f', 2));
    QVERIFY(table.item(k, column(table, "Peak memory"))->text().endsWith(" GiB"));
    QCOMPARE(table.item(k, column(table, "Mean GPU %"))->text(), QString("—"));  // CPU runs
  }
  QCOMPARE(table.item(2, column(table, "Batch"))->text(), QString("16"));
  // A row per config key that differs: the epochs and the batch size (and the run folders' names),
  // not the keys the three share.
  ConfigDifferenceTable& differences = view->configDifferences();
  const QStringList keys = differences.keys();
  QVERIFY2(keys.contains("batch_size") && keys.contains("epochs"), qPrintable(keys.join(",")));
  QVERIFY2(!keys.contains("lr") && !keys.contains("ngf") && !keys.contains("augment.shift"), qPrintable(keys.join(",")));
  const int batch_row = static_cast<int>(keys.indexOf("batch_size"));
  QCOMPARE(differences.columnCount(), 4);
  QCOMPARE(differences.horizontalHeaderItem(1)->text(), QDir(trained_[0]).dirName());
  QCOMPARE(differences.item(batch_row, 1)->text(), QString("8"));
  QCOMPARE(differences.item(batch_row, 3)->text(), QString("16"));
  QCOMPARE(differences.item(static_cast<int>(keys.indexOf("epochs")), 2)->text(), QString("3"));

  // The slider: at 0 each run shows its first grid, at the end its last.
  auto* slider = view->findChild<QSlider*>();
  QVERIFY(slider);
  slider->setValue(0);
  for (int k = 0; k < 3; ++k) {
    const QString first = eventsOfType(readEvents(trained_[k]), "samples").first().value("path").toString();
    QTRY_VERIFY_WITH_TIMEOUT(view->shownSamplePath(k).endsWith(first) && !view->shownSample(k).isNull(), 30000);
  }
  slider->setValue(slider->maximum());
  for (int k = 0; k < 3; ++k) {
    const QString last = eventsOfType(readEvents(trained_[k]), "samples").last().value("path").toString();
    QTRY_VERIFY_WITH_TIMEOUT(view->shownSamplePath(k).endsWith(last) && !view->shownSample(k).isNull(), 30000);
  }

  const QString png = dir_.filePath("comparison.png"), csv = dir_.filePath("comparison.csv");
  QVERIFY(view->saveImage(png));
  QCOMPARE(QImage(png).size(), view->size());
  QVERIFY(view->saveCsv(csv));
  const QStringList lines = QString::fromUtf8(readFileBytes(csv)).trimmed().split('\n');
  QCOMPARE(lines.size(), 4);
  QVERIFY(lines[0].startsWith("Run,Trained on,Preset,Batch,Device,World size,Images/s,Images/hour,Time per epoch,Best Parzen,"));
  QVERIFY(lines[3].startsWith("batch16-2ep,this computer,"));
  // Every chart with points has its axes: the plot leaves room for the labels.
  for (auto* chart : {&view->lossChart(), &view->discriminatorChart(), &view->speedChart()}) {
    QVERIFY(!chart->image().isNull());
    QVERIFY2(chart->plotArea().width() < chart->width() - 30, qPrintable(chart->title()));
  }
  const QString shot = testOutputDir() + "/compare-3-runs.png";
  QVERIFY(view->grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
  view->close();
}

void TestStudioCompare::followsARunStillTraining() {
  // A run that is still training beside one that ended: its steps arrive while the view is open.
  const QString live = runs_ + "/live";
  QProcess trainer;
  trainer.start(STREETGAN_CLI, tinyTrainArgs(data_, live, 12));
  QVERIFY(trainer.waitForStarted());
  QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(live + "/events.jsonl").size() > 0, 60000);
  CompareView view({{trained_[0], {}, 0}, {live, {}, 0}});
  view.resize(1200, 800);
  view.show();
  QSignalSpy updated(&view, &CompareView::updated);
  QVERIFY(updated.wait(30000));
  const std::size_t first = view.lossChart().pointCount(2);
  QVERIFY(trainer.waitForFinished(300000));
  QCOMPARE(trainer.exitCode(), 0);
  const int steps = eventsOfType(readEvents(live), "step").size();
  QCOMPARE(steps, 12 * 4);
  QTRY_COMPARE_WITH_TIMEOUT(int(view.lossChart().pointCount(2)), steps, 30000);
  QVERIFY(first < std::size_t(steps));
  QCOMPARE(view.table().item(1, column(view.table(), "$/hour"))->text(), QString("not set"));
  QCOMPARE(view.table().item(1, column(view.table(), "$ per million images"))->text(), QString("—"));
}

void TestStudioCompare::qualityFiguresSideBySide() {
  // Three runs of their own: two evaluations in the pixel space and an alarm; one evaluation in a
  // network's space; none.
  QTemporaryDir root;
  QVERIFY(root.isValid());
  const QString pixels = root.filePath("pixels"), network = root.filePath("network"), plain = root.filePath("plain");
  const QByteArray start = R"({"v":1,"type":"run_started","time":100,"device":"cpu","images_seen":0,"config":{"batch_size":16,"epochs":2}})" "\n";
  const QByteArray step = R"({"v":1,"type":"step","time":101,"epoch":1,"iteration":1,"iterations":2,"step":1,"images_seen":16,"loss_d":1.5,"loss_g":0.5,"rt":0.5,"images_per_s":40})" "\n";
  const QList<QPair<QString, QByteArray>> logs{
      {pixels, start + step +
                   R"({"v":1,"type":"metrics","time":102,"epoch":0,"step":1,"images_seen":16,"metrics":{"swd_e3":25.5,"fid":130.5,"copy_rate":0.125},"feature_space":"pixels32-pca256"})" "\n"
                   R"({"v":1,"type":"warning","time":102.5,"message":"memorisation: 12.5% of the samples copy a training image","alarm":"memorisation","step":1})" "\n"
                   R"({"v":1,"type":"metrics","time":103,"epoch":1,"step":2,"images_seen":32,"metrics":{"swd_e3":20.25,"fid":110.5},"feature_space":"pixels32-pca256"})" "\n"},
      {network, start + step +
                    R"({"v":1,"type":"metrics","time":102,"epoch":0,"step":1,"images_seen":16,"metrics":{"swd_e3":30,"fid":95},"feature_space":"torchscript:0123456789abcdef@299px"})" "\n"},
      {plain, start + step}};
  for (const auto& [path, log] : logs) {
    QVERIFY(QDir().mkpath(path));
    QFile file(path + "/events.jsonl");
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(log);
  }
  CompareView view({{pixels, {}, 0}, {network, {}, 0}, {plain, {}, 0}});
  view.resize(1400, 1000);
  view.show();
  QSignalSpy updated(&view, &CompareView::updated);
  QVERIFY(updated.wait(30000));
  QCOMPARE(view.swdChart().pointCount(0), std::size_t(2));
  QCOMPARE(view.swdChart().pointCount(1), std::size_t(1));
  QCOMPARE(view.swdChart().pointCount(2), std::size_t(0));
  // FID in the first space seen; the run in another space is left out and named.
  QCOMPARE(view.fidSpace(), QString("pixels32-pca256"));
  QCOMPARE(view.fidChart().pointCount(0), std::size_t(2));
  QCOMPARE(view.fidChart().pointCount(1), std::size_t(0));
  QCOMPARE(view.fidChart().title(), QString("FID in pixels32-pca256 (left out, in another feature space: network)"));
  QTableWidget& table = view.table();
  const int swd = column(table, QString::fromUtf8("SWD ×10³")), fid = column(table, "FID");
  const int copies = column(table, "Copy rate"), alarms = column(table, "Alarms");
  QVERIFY(swd > column(table, "Best Parzen") && fid > 0 && copies > 0 && alarms > 0);
  QCOMPARE(table.item(0, swd)->text(), QString("20.25"));
  QCOMPARE(table.item(0, fid)->text(), QString("110.50 (pixels32-pca256)"));
  QCOMPARE(table.item(0, copies)->text(), QString("12.5%"));
  QCOMPARE(table.item(0, alarms)->text(), QString("1"));
  QCOMPARE(table.item(1, swd)->text(), QString("30.00"));
  QCOMPARE(table.item(1, fid)->text(), QString("95.00 (torchscript:0123456789abcdef@299px)"));
  QCOMPARE(table.item(1, copies)->text(), QString("—"));
  QCOMPARE(table.item(1, alarms)->text(), QString("0"));
  QCOMPARE(table.item(2, swd)->text(), QString("—"));
  QCOMPARE(table.item(2, fid)->text(), QString("—"));
  QVERIFY(view.tableCsv().section('\n', 0, 0).contains(QString::fromUtf8("Best Parzen,SWD ×10³,FID,Copy rate,Alarms,")));
  view.charts().redrawAll();
  const QString shot = testOutputDir() + "/compare-quality.png";
  QVERIFY(view.grab().save(shot));
  qInfo("screenshot: %s", qPrintable(shot));
}

STREETGAN_TEST_MAIN(TestStudioCompare)
#include "tst_studio_compare.moc"
