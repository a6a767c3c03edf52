// The Train tab's dashboard offscreen: every chart's plot area is at least 180 px tall at
// 1280×720 (and more at 1920×1080) with its legend clear of the plot and of the empty-state text;
// one toolbar sets every chart; a double-click gives a chart the whole area; `system` events
// become the Machine chart; a data-starved run says so and builds a real cache with
// `streetgan cache build`; the window opens at 85% of the screen the first time. Screenshots of
// each state are saved for a person to look at.
#include "app/studio/main_window.h"
#include "app/studio/run_dashboard.h"
#include "app/studio/train_tab.h"
#include "tests/support/test_support.h"
#include "widgets/chart_panel.h"

#include <QAction>
#include <QApplication>
#include <QFileInfo>
#include <QMessageBox>
#include <QTimer>
#include <QGraphicsView>
#include <QGuiApplication>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

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
  // Empty first: the sentences sit inside the plot areas.
  for (TrainingChart* chart : dashboard.charts().charts()) {
    QVERIFY2(chart->plotArea().height() >= min_plot_height,
             qPrintable(QString("%1: empty plot area %2 px tall").arg(chart->title()).arg(chart->plotArea().height())));
  }
  dashboard.clear(dir_.path());
  dashboard.addEvents(aRun(200));
  dashboard.charts().redrawAll();
  QCoreApplication::processEvents();
  for (TrainingChart* chart : dashboard.charts().charts()) {
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
  for (TrainingChart* chart : dashboard.charts().charts()) lowest = std::min(lowest, chart->plotArea().height());
  qInfo("%dx%d: the lowest plot area is %.0f px tall", size.width(), size.height(), lowest);
  QCOMPARE(dashboard.systemChart().pointCount(0), std::size_t(20));
  saveShot(window, QString("dashboard-%1x%2.png").arg(size.width()).arg(size.height()));
}

void TestStudioDashboard::oneToolbarForEveryChart() {
  RunDashboard dashboard;
  dashboard.resize(1000, 600);
  dashboard.addEvents(aRun(60));
  ChartPanel& panel = dashboard.charts();
  QCOMPARE(panel.charts().size(), 5);
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

QTEST_MAIN(TestStudioDashboard)
#include "tst_studio_dashboard.moc"
