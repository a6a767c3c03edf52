// The Train tab's dashboard offscreen: every chart's plot area is at least 180 px tall at
// 1280×720 (and more at 1920×1080) with its legend clear of the plot and of the empty-state text;
// one toolbar sets every chart; a double-click gives a chart the whole area; `system` events
// become the Machine chart; `metrics` events and the steps' r_t become the quality charts (a third
// row, shown by the first evaluation), a resume drops their later points, and quality alarms show
// as a badge that opens the warnings and count in the Train tab's title; a data-starved run says
// so and builds a real cache with `streetgan cache build`; the window opens at 85% of the screen
// the first time. Screenshots of each state are saved for a person to look at.
#include "app/studio/main_window.h"
#include "app/studio/run_dashboard.h"
#include "app/studio/train_tab.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/chart_panel.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QFileInfo>
#include <QMessageBox>
#include <QTimer>
#include <QGraphicsView>
#include <QLabel>
#include <QGuiApplication>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

class TestStudioDashboard : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void windowOpensAtMostOfTheScreen();
  void windowAndAboutBoxCarryTheIcon();
  void chartsAreReadable_data();
  void chartsAreReadable();
  void oneToolbarForEveryChart();
  void doubleClickGivesAChartTheWholeArea();
  void systemEventsBecomeTheMachineChart();
  void qualityMetricsBecomeTheQualityCharts();
  void qualityAlarmsShowAsABadge();
  void dataStarvedRunOffersACache();

private:
  QTemporaryDir dir_;
  QString data_;
};

namespace {

StreamEvent makeEvent(const std::string& type, double time, nlohmann::json body) {
  return makeStreamEvent(type, time, std::move(body));
}

/// A run of `steps` steps: its run_started, steps with losses that fall, a Parzen estimate and a
/// system event every 10 steps.
std::vector<StreamEvent> aRun(int steps, double wait_fraction = 0.02) {
  std::vector<StreamEvent> events;
  events.push_back(makeEvent("run_started", 1000, {{"device", "cpu"}, {"config", {{"epochs", 4}}}, {"epoch", 0}, {"images_seen", 0}}));
  for (int i = 1; i <= steps; ++i) {
    const double t = 1000 + i * 0.5;
    events.push_back(makeEvent("step", t, {{"epoch", 1 + (i - 1) / 50}, {"iteration", 1 + (i - 1) % 50}, {"iterations", 50},
                                       {"step", i}, {"images_seen", i * 32}, {"loss_d", 1.4 * std::exp(-i / 80.0) + 0.3},
                                       {"loss_g", 3.0 * std::exp(-i / 60.0) + 0.8}, {"d_x", 0.7}, {"d_g_z1", 0.3},
                                       {"d_g_z2", 0.25}, {"images_per_s", 90 + i % 7}, {"data_wait_fraction", wait_fraction}}));
    if (i % 10 == 0)
      events.push_back(makeEvent("system", t, {{"epoch", 1 + (i - 1) / 50}, {"step", i}, {"images_seen", i * 32}, {"cpu_percent", 190},
                                           {"cores", 2}, {"rss_bytes", 512LL << 20}, {"host_memory_available_bytes", 20LL << 30},
                                           {"host_memory_total_bytes", 24LL << 30}, {"loader_bytes_per_s", 3.5e6}}));
    if (i % 50 == 0)
      events.push_back(makeEvent("parzen", t, {{"epoch", i / 50}, {"step", i}, {"images_seen", i * 32}, {"mean_ll", -900.0 + i},
                                           {"stderr", 12.0}}));
  }
  return events;
}

const char kCollapse[] = "mode collapse: the samples are more alike than the training images (MS-SSIM 0.61 against "
                        "0.25); try a lower lr or more data";
const char kMemorisation[] = "memorisation: 6.0% of the samples are nearer a training image than training images "
                             "are to each other; try more data or augmentation";

/// A run of `steps` steps with ADA's r_t and p on each, a quality evaluation every 25 steps (SWD and FID
/// falling, FID in the pixel space) and, when `alarms`, a collapse alarm at step 50 and a
/// memorisation alarm at step 75.
std::vector<StreamEvent> aQualityRun(int steps, bool alarms) {
  std::vector<StreamEvent> events;
  events.push_back(makeEvent("run_started", 1000, {{"device", "cpu"}, {"config", {{"epochs", 4}}}, {"epoch", 0}, {"images_seen", 0}}));
  for (int i = 1; i <= steps; ++i) {
    const double t = 1000 + i * 0.5;
    events.push_back(makeEvent("step", t, {{"epoch", 1 + (i - 1) / 50}, {"iteration", 1 + (i - 1) % 50}, {"iterations", 50},
                                       {"step", i}, {"images_seen", i * 32}, {"loss_d", 1.0}, {"loss_g", 2.0},
                                       {"d_x", 0.7}, {"d_g_z1", 0.3}, {"d_g_z2", 0.25}, {"rt", 0.1 + i / 200.0},
                                       {"ada_p", (i / 4) * 0.004},
                                       {"images_per_s", 90}, {"data_wait_fraction", 0.01}}));
    if (i % 25 == 0)
      events.push_back(makeEvent("metrics", t, {{"epoch", i / 50}, {"step", i}, {"images_seen", i * 32},
                                            {"feature_space", "pixels32-pca256"},
                                            {"metrics", {{"swd_e3", 80.0 - i / 2.0}, {"fid", 300.0 - i},
                                                         {"msssim_samples", 0.3}, {"msssim_train", 0.25},
                                                         {"ndb_fraction", 0.4}, {"copy_rate", i / 400.0}}}}));
    if (alarms && i == 50)
      events.push_back(makeEvent("warning", t, {{"message", kCollapse}, {"alarm", "collapse"}, {"step", i}}));
    if (alarms && i == 75)
      events.push_back(makeEvent("warning", t, {{"message", kMemorisation}, {"alarm", "memorisation"}, {"step", i}}));
  }
  return events;
}

void saveShot(QWidget& widget, const QString& name) {
  const QString path = testOutputDir() + "/" + name;
  QVERIFY(widget.grab().save(path));
  qInfo("screenshot: %s", qPrintable(path));
}

}  // namespace

void TestStudioDashboard::initTestCase() {
  QCoreApplication::setOrganizationName("StreetGAN-tests");
  QCoreApplication::setApplicationName("tst_studio_dashboard");
  qputenv("HOME", dir_.path().toUtf8());  // QSettings and the default runs folder stay in the test's folder
  data_ = makeTinyDataset(dir_.filePath("data"));
}

void TestStudioDashboard::windowOpensAtMostOfTheScreen() {
  QSettings().remove("window");
  const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
  MainWindow window(STREETGAN_CLI);
  QCOMPARE(window.size(), QSize(available.width() * 85 / 100, available.height() * 85 / 100));
  QVERIFY(available.contains(window.geometry()));
  // Closed at another size, it opens at that size next time.
  window.show();
  const QSize closed_at = QSize(1150, 700).expandedTo(window.minimumSizeHint());
  window.resize(closed_at);
  window.close();
  MainWindow again(STREETGAN_CLI);
  QCOMPARE(again.size(), closed_at);
  QSettings().remove("window");
}

void TestStudioDashboard::chartsAreReadable_data() {
  QTest::addColumn<QSize>("size");
  QTest::addColumn<int>("min_plot_height");
  QTest::newRow("1280x720") << QSize(1280, 720) << 180;
  QTest::newRow("1920x1080") << QSize(1920, 1080) << 300;
}

void TestStudioDashboard::chartsAreReadable() {
  QFETCH(QSize, size);
  QFETCH(int, min_plot_height);
  MainWindow window(STREETGAN_CLI);
  window.resize(size);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  RunDashboard& dashboard = window.trainTab().dashboard();
  // Empty first: the sentences sit inside the plot areas. The quality charts' row is hidden until
  // a run has quality metrics.
  QVERIFY(dashboard.qualityChart().isHidden() && dashboard.distanceChart().isHidden());
  for (TrainingChart* chart : dashboard.charts().charts()) {
    if (chart->isHidden()) continue;
    QVERIFY2(chart->plotArea().height() >= min_plot_height,
             qPrintable(QString("%1: empty plot area %2 px tall").arg(chart->title()).arg(chart->plotArea().height())));
  }
  dashboard.clear(dir_.path());
  dashboard.addEvents(aRun(200));
  dashboard.charts().redrawAll();
  QCoreApplication::processEvents();
  QVERIFY(!dashboard.qualityChartsShown());  // a run without metrics leaves the row hidden
  for (TrainingChart* chart : dashboard.charts().charts()) {
    if (chart->isHidden()) continue;
    const QRectF plot = chart->plotArea();
    QVERIFY2(plot.height() >= min_plot_height,
             qPrintable(QString("%1: plot area %2 px tall at %3x%4").arg(chart->title()).arg(plot.height()).arg(size.width()).arg(size.height())));
    QVERIFY2(plot.width() >= 200, qPrintable(QString("%1: plot area %2 px wide").arg(chart->title()).arg(plot.width())));
    // The legend lies below the plot area, not over it.
    const QRectF legend = chart->legendArea();
    QVERIFY2(legend.height() > 0 && !legend.intersects(plot),
             qPrintable(QString("%1: legend %2,%3 %4x%5 overlaps the plot").arg(chart->title()).arg(legend.x()).arg(legend.y())
                            .arg(legend.width()).arg(legend.height())));
    QVERIFY2(chart->drawnPointCount(0) > 0 || chart == &dashboard.systemChart(), qPrintable(chart->title()));
  }
  double lowest = 1e9;
  for (TrainingChart* chart : dashboard.charts().charts())
    if (!chart->isHidden()) lowest = std::min(lowest, chart->plotArea().height());
  qInfo("%dx%d: the lowest plot area is %.0f px tall", size.width(), size.height(), lowest);
  QCOMPARE(dashboard.systemChart().pointCount(0), std::size_t(20));
  saveShot(window, QString("dashboard-%1x%2.png").arg(size.width()).arg(size.height()));
}

void TestStudioDashboard::oneToolbarForEveryChart() {
  RunDashboard dashboard;
  dashboard.resize(1000, 600);
  dashboard.addEvents(aRun(60));
  ChartPanel& panel = dashboard.charts();
  QCOMPARE(panel.charts().size(), 7);
  panel.setLogY(true);
  panel.setXAxis(TrainingChart::XAxis::WallTime);
  panel.setSmoothing(0.9);
  for (TrainingChart* chart : panel.charts()) {
    QVERIFY(chart->logY());
    QCOMPARE(chart->xAxis(), TrainingChart::XAxis::WallTime);
  }
  QCOMPARE(dashboard.lossChart().smoothing(), 0.9);
  // The Parzen and machine charts keep their points unsmoothed.
  QCOMPARE(dashboard.parzenChart().smoothing(), 0.0);
  QCOMPARE(dashboard.systemChart().smoothing(), 0.0);
  QCOMPARE(dashboard.qualityChart().smoothing(), 0.0);
  QCOMPARE(dashboard.distanceChart().smoothing(), 0.0);
  // On the time axis, x is seconds since the run started: the 60th step came 30 s in.
  dashboard.lossChart().setSmoothing(0);
  QVERIFY2(dashboard.lossChart().readoutAt(30).startsWith("images seen 1920, epoch 1.20, 30 s"),
           qPrintable(dashboard.lossChart().readoutAt(30)));
  const QStringList csv = dashboard.lossChart().csv().split('\n');
  QCOMPARE(csv[0], QString("series,images_seen,epoch,seconds,value,smoothed"));
  QVERIFY2(csv[1].startsWith("loss_d,32,0.02,0.5,"), qPrintable(csv[1]));
}

void TestStudioDashboard::doubleClickGivesAChartTheWholeArea() {
  RunDashboard dashboard;
  dashboard.resize(1200, 700);
  dashboard.show();
  QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
  dashboard.addEvents(aRun(100));
  TrainingChart& loss = dashboard.lossChart();
  const QSize before = loss.size();
  QWidget* viewport = loss.findChild<QGraphicsView*>()->viewport();
  QVERIFY(viewport);
  QTest::mouseDClick(viewport, Qt::LeftButton, {}, viewport->rect().center());
  QCoreApplication::processEvents();
  QCOMPARE(dashboard.charts().maximizedCell(), &loss);
  QVERIFY(loss.width() > before.width() * 2 && loss.height() > before.height() * 3 / 2);
  QVERIFY(!dashboard.discriminatorChart().isVisible());
  saveShot(dashboard, "dashboard-loss-enlarged.png");
  QTest::mouseDClick(viewport, Qt::LeftButton, {}, viewport->rect().center());
  QCoreApplication::processEvents();
  QCOMPARE(dashboard.charts().maximizedCell(), nullptr);
  QVERIFY(dashboard.discriminatorChart().isVisible());
  QCOMPARE(loss.size(), before);
}

void TestStudioDashboard::systemEventsBecomeTheMachineChart() {
  RunDashboard dashboard;
  auto events = aRun(30);
  events.push_back(makeEvent("system", 1020, {{"epoch", 1}, {"step", 30}, {"images_seen", 960}, {"cpu_percent", 95}, {"cores", 2},
                                          {"rss_bytes", 3LL << 30}, {"host_memory_available_bytes", 10LL << 30},
                                          {"host_memory_total_bytes", 16LL << 30}, {"loader_bytes_per_s", 12.5e6},
                                          {"gpu", {{"index", 0}, {"utilization_percent", 97}, {"memory_used_bytes", 20LL << 30},
                                                   {"memory_total_bytes", 80LL << 30}, {"power_w", 310.4}}}}));
  dashboard.addEvents(events);
  TrainingChart& machine = dashboard.systemChart();
  QCOMPARE(machine.pointCount(0), std::size_t(4));
  const QStringList csv = machine.csv().split('\n');
  // CPU as a share of its 2 cores; memory as a share of RAM; the GPU only in the last event.
  QVERIFY(csv.contains("CPU %,960,0,20,47.5,47.5"));
  QVERIFY2(csv.contains("RAM %,960,0,20,18.75,18.75"), qPrintable(machine.csv()));
  QVERIFY(csv.contains("GPU %,960,0,20,97,97"));
  QVERIFY(csv.contains("GPU mem %,960,0,20,25,25"));
  QCOMPARE(machine.title(), QString("Machine: CPU 95% · 3.0 GiB resident · 10.0 GiB free · loader 12.5 MB/s · GPU 97% · "
                                    "20.0 GiB / 80.0 GiB · 310 W"));
}

void TestStudioDashboard::qualityMetricsBecomeTheQualityCharts() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1920, 1080);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  window.tabs().setCurrentWidget(&window.trainTab());
  RunDashboard& dashboard = window.trainTab().dashboard();
  dashboard.clear(dir_.path());
  TrainingChart& quality = dashboard.qualityChart();
  TrainingChart& distance = dashboard.distanceChart();
  // Series: MS-SSIM of samples, of training images, NDB share, copy rate, r_t, ADA's p; SWD, FID.
  const auto events = aQualityRun(100, false);
  // Steps before the first evaluation: r_t is kept, the row stays hidden.
  const auto first_metrics = std::find_if(events.begin(), events.end(), [](const StreamEvent& e) { return e.type == "metrics"; });
  dashboard.addEvents(std::vector<StreamEvent>(events.begin(), first_metrics));
  QCOMPARE(quality.pointCount(4), std::size_t(25));
  QCOMPARE(quality.pointCount(0), std::size_t(0));
  QVERIFY(!dashboard.qualityChartsShown());
  QVERIFY(quality.isHidden());
  // The first evaluation shows the row.
  dashboard.addEvents(std::vector<StreamEvent>(first_metrics, events.end()));
  QVERIFY(dashboard.qualityChartsShown());
  QVERIFY(quality.isVisible() && distance.isVisible());
  for (int series = 0; series < 4; ++series) QCOMPARE(quality.pointCount(series), std::size_t(4));
  QCOMPARE(quality.pointCount(4), std::size_t(100));
  QCOMPARE(quality.pointCount(5), std::size_t(100));  // ADA's p beside r_t
  QVERIFY2(quality.csv().contains("\nADA's p,3200,2,50,0.1"), qPrintable(quality.csv().right(400)));
  QCOMPARE(distance.pointCount(0), std::size_t(4));
  QCOMPARE(distance.pointCount(1), std::size_t(4));
  QCOMPARE(distance.title(), QString("Distance to the data (FID in pixels32-pca256)"));
  const QStringList csv = distance.csv().split('\n');
  QVERIFY2(csv.contains(QString::fromUtf8("SWD ×10³,800,0,12.5,67.5,67.5")), qPrintable(distance.csv()));
  QVERIFY2(quality.csv().split('\n').contains("copy rate,3200,2,50,0.25,0.25"), qPrintable(quality.csv()));
  dashboard.charts().redrawAll();
  QCoreApplication::processEvents();
  QVERIFY(quality.drawnPointCount(4) > 0);
  saveShot(window, "dashboard-quality-1920x1080.png");

  // A chart given the whole area and given back leaves the row as the box says.
  QCheckBox* box = nullptr;
  for (QCheckBox* b : dashboard.findChildren<QCheckBox*>())
    if (b->text() == "Quality charts") box = b;
  QVERIFY(box && box->isChecked());
  box->setChecked(false);
  QVERIFY(quality.isHidden() && distance.isHidden());
  QWidget* viewport = dashboard.lossChart().findChild<QGraphicsView*>()->viewport();
  QTest::mouseDClick(viewport, Qt::LeftButton, {}, viewport->rect().center());
  QCOMPARE(dashboard.charts().maximizedCell(), &dashboard.lossChart());
  QTest::mouseDClick(viewport, Qt::LeftButton, {}, viewport->rect().center());
  QCOMPARE(dashboard.charts().maximizedCell(), nullptr);
  QVERIFY(dashboard.discriminatorChart().isVisible());
  QVERIFY(quality.isHidden() && distance.isHidden());
  box->setChecked(true);
  QVERIFY(quality.isVisible());

  // A resume from step 50 (1,600 images) drops the later points, as the other charts do.
  dashboard.addEvents({makeEvent("run_started", 2000, {{"device", "cpu"}, {"config", {{"epochs", 4}}}, {"epoch", 1},
                                                       {"step", 50}, {"images_seen", 1600}})});
  QCOMPARE(quality.pointCount(4), std::size_t(50));
  QCOMPARE(quality.pointCount(0), std::size_t(2));
  QCOMPARE(distance.pointCount(0), std::size_t(2));
  QCOMPARE(dashboard.lossChart().pointCount(0), std::size_t(50));
  // A new run forgets them and the feature space.
  dashboard.clear(dir_.path());
  QCOMPARE(quality.pointCount(4), std::size_t(0));
  QCOMPARE(distance.title(), QString("Distance to the data"));
}

void TestStudioDashboard::qualityAlarmsShowAsABadge() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1280, 720);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  window.tabs().setCurrentWidget(&window.trainTab());
  RunDashboard& dashboard = window.trainTab().dashboard();
  dashboard.clear(dir_.path());
  auto* badge = dashboard.findChild<QLabel*>("qualityAlarm");
  QVERIFY(badge);
  QVERIFY(!badge->isVisible());
  QCOMPARE(dashboard.alarmCount(), 0);
  QSignalSpy changed(&dashboard, &RunDashboard::alarmsChanged);
  dashboard.addEvents(aQualityRun(60, true));  // the collapse alarm at step 50
  QCOMPARE(dashboard.alarmCount(), 1);
  QVERIFY(badge->isVisible());
  QCOMPARE(dashboard.alarmText(), QString::fromUtf8("⚠ ") + kCollapse);
  QCOMPARE(changed.size(), 1);
  QCOMPARE(changed.last().first().toInt(), 1);
  QCOMPARE(window.tabs().tabText(0), QString::fromUtf8("&Train ⚠ 1"));
  // The newest alarm is shown, the others counted.
  dashboard.clear(dir_.path());
  QCOMPARE(window.tabs().tabText(0), QString("&Train"));
  dashboard.addEvents(aQualityRun(100, true));
  QCOMPARE(dashboard.alarmCount(), 2);
  QCOMPARE(dashboard.alarmText(), QString::fromUtf8("⚠ ") + kMemorisation + QString::fromUtf8(" — and 1 more"));
  QCOMPARE(dashboard.warningCount(), 2);
  QCOMPARE(window.tabs().tabText(0), QString::fromUtf8("&Train ⚠ 2"));
  dashboard.charts().redrawAll();
  QCoreApplication::processEvents();
  saveShot(window, "dashboard-quality-alarm.png");
  // A click on the badge opens the warnings.
  auto* side = dashboard.findChild<QTabWidget*>();
  QVERIFY(side);
  side->setCurrentIndex(0);
  QTest::mouseClick(badge, Qt::LeftButton);
  QCOMPARE(side->currentIndex(), 1);
  QVERIFY(side->tabText(1).startsWith("Warnings (2)"));
  // Alarms have no place on the axis: a resume keeps them.
  dashboard.addEvents({makeEvent("run_started", 2000, {{"device", "cpu"}, {"epoch", 1}, {"step", 40}, {"images_seen", 1280}})});
  QCOMPARE(dashboard.alarmCount(), 2);
  dashboard.clear(dir_.path());
  QCOMPARE(dashboard.alarmCount(), 0);
  QVERIFY(!badge->isVisible());
  QCOMPARE(changed.last().first().toInt(), 0);
  QCOMPARE(window.tabs().tabText(0), QString("&Train"));
}

void TestStudioDashboard::dataStarvedRunOffersACache() {
  MainWindow window(STREETGAN_CLI);
  window.resize(1280, 720);
  window.show();
  TrainTab& tab = window.trainTab();
  RunDashboard& dashboard = tab.dashboard();
  auto* starved = dashboard.findChild<QPushButton*>("dataStarved");
  QVERIFY(starved);
  // A run that keeps up: nothing is said.
  dashboard.addEvents(aRun(60, 0.05));
  QVERIFY(!starved->isVisible());
  QVERIFY(dashboard.dataStarvedShare() < 0);
  // One that waits 45% of the time: said, with the share.
  dashboard.clear(dir_.path());
  dashboard.addEvents(aRun(60, 0.45));
  QVERIFY(starved->isVisible());
  QVERIFY2(starved->text().contains("45% waiting on data"), qPrintable(starved->text()));
  saveShot(window, "dashboard-data-starved.png");
  // Build the cache (what the button does once its question is answered): a real build.
  tab.setDataroot(data_);
  for (const auto& [key, value] : tinyFormEntries(1)) tab.form().enterText(key, value);
  tab.buildCache();
  QTRY_VERIFY_WITH_TIMEOUT(!tab.form().config().data.cache.empty(), 120000);
  const QString cache = QString::fromStdString(tab.form().config().data.cache);
  QVERIFY2(QFileInfo(cache).isFile() && QFileInfo(cache).size() > 0, qPrintable(cache));
  QVERIFY2(dashboard.statusText().contains("is built and set as data.cache"), qPrintable(dashboard.statusText()));
  const CliResult info = runCli({"cache", "info", cache});
  QVERIFY2(info.exit_code == 0 && info.out.contains("32"), qPrintable(info.out + info.err));
  // A data set that is not there: a plain error, no cache set.
  tab.form().enterText("data.cache", "");
  tab.setDataroot(dir_.filePath("no-such-folder"));
  tab.buildCache();
  QTRY_VERIFY_WITH_TIMEOUT(dashboard.statusText().startsWith("Could not build the cache: "), 60000);
  QVERIFY2(dashboard.statusText().contains("no-such-folder"), qPrintable(dashboard.statusText()));
  QVERIFY(tab.form().config().data.cache.empty());
}

// The icon of resources/studio.qrc is the window's, at every size a desktop asks for, and the
// About box shows it.
void TestStudioDashboard::windowAndAboutBoxCarryTheIcon() {
  MainWindow window(STREETGAN_CLI);
  const QIcon icon = window.windowIcon();
  QVERIFY(!icon.isNull());
  for (int size : {16, 32, 48, 256}) QVERIFY2(icon.availableSizes().contains(QSize(size, size)), qPrintable(QString::number(size)));
  QCOMPARE(icon.pixmap(256, 256).toImage().pixel(128, 200),
           QImage(STREETGAN_SOURCE_DIR "/resources/icons/hicolor/256x256/apps/org.streetgan.Studio.png").pixel(128, 200));
  window.show();
  QAction* about = nullptr;
  for (QAction* action : window.findChildren<QAction*>())
    if (action->text() == "&About StreetGAN Studio") about = action;
  QVERIFY(about);
  QImage shown;
  QTimer::singleShot(200, [&shown] {
    if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
      shown = box->iconPixmap().toImage();
      const QString shot = testOutputDir() + "/about-box.png";
      box->grab().save(shot);
      box->accept();
    }
  });
  about->trigger();
  QVERIFY2(!shown.isNull() && shown.width() >= 32, "the About box shows no icon");
}

STREETGAN_TEST_MAIN(TestStudioDashboard)
#include "tst_studio_dashboard.moc"
