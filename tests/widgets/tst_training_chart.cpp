// TrainingChart under the offscreen platform: every point kept while drawing stays decimated, the
// smoothed line follows the core smoothing, log scale, x in epochs, the hover read-out, CSV of every
// point; a screenshot of a million-point chart is saved for a person to look at.
#include "core/util/series_smoothing.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/training_chart.h"

#include <QElapsedTimer>
#include <QLogValueAxis>
#include <QtTest>

#include <cmath>
#include <random>

using namespace streetgan;
using namespace streetgan::widgets;

class TestTrainingChart : public QObject {
  Q_OBJECT
private slots:
  void keepsEveryPointAndDrawsFew();
  void csvHoldsEveryPointWithItsSmoothing();
  void logScaleAndEpochAxis();
  void readoutNamesTheNearestPoints();
};

namespace {

/// A loss curve: decaying, noisy, with rare spikes; D and G.
void fill(TrainingChart& chart, int d, int g, int n) {
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0, 0.08);
  for (int i = 0; i < n; ++i) {
    const double images = 64.0 * (i + 1), epoch = i / 1000.0;
    chart.append(d, images, epoch, 0.4 + 1.2 * std::exp(-i / 3e5) + noise(rng) + (i % 99991 == 0 ? 3 : 0));
    chart.append(g, images, epoch, 2.0 + 3.0 * std::exp(-i / 2e5) + 2 * noise(rng));
  }
}

}  // namespace

void TestTrainingChart::keepsEveryPointAndDrawsFew() {
  TrainingChart chart("Loss");
  const int d = chart.addSeries("loss_d", QColor(31, 119, 180));
  const int g = chart.addSeries("loss_g", QColor(255, 127, 14));
  chart.resize(900, 420);
  chart.show();
  const int n = 1'000'000;
  fill(chart, d, g, n);
  QCOMPARE(chart.pointCount(d), static_cast<std::size_t>(n));
  chart.redraw();  // the first one also lays the chart out
  QElapsedTimer timer;
  timer.start();
  chart.redraw();
  const qint64 ms = timer.elapsed();
  qInfo("redraw of 2 x %d points: %lld ms, %d + %d points drawn", n, ms, chart.drawnPointCount(d), chart.drawnPointCount(g));
  QVERIFY(chart.drawnPointCount(d) > 100);
  QVERIFY2(chart.drawnPointCount(d) <= 4 * 900 + 2, qPrintable(QString::number(chart.drawnPointCount(d))));
  const QImage image = chart.image();
  QVERIFY(!image.isNull());
  const QString path = test::testOutputDir() + "/training-chart-1M-points.png";
  QVERIFY(image.save(path));
  qInfo("screenshot: %s", qPrintable(path));
}

void TestTrainingChart::csvHoldsEveryPointWithItsSmoothing() {
  TrainingChart chart("Loss");
  const int d = chart.addSeries("loss_d", Qt::blue);
  const std::vector<double> values{1.0, 3.0, 5.0, 2.0};
  for (std::size_t i = 0; i < values.size(); ++i) chart.append(d, 8.0 * (i + 1), 0.25 * i, values[i]);
  chart.setSmoothing(0.5);
  const QStringList lines = chart.csv().trimmed().split('\n');
  QCOMPARE(lines.size(), 5);
  QCOMPARE(lines[0], QString("series,images_seen,epoch,seconds,value,smoothed"));
  const auto smoothed = smoothSeries(values, 0.5);
  for (int i = 0; i < 4; ++i) {
    const QStringList cells = lines[i + 1].split(',');
    QCOMPARE(cells[0], QString("loss_d"));
    QCOMPARE(cells[1].toDouble(), 8.0 * (i + 1));
    QCOMPARE(cells[3], QString());  // no time given
    QCOMPARE(cells[4].toDouble(), values[i]);
    QCOMPARE(cells[5].toDouble(), smoothed[i]);  // written with 17 digits: exact
  }
}

void TestTrainingChart::logScaleAndEpochAxis() {
  TrainingChart chart("Loss");
  const int d = chart.addSeries("loss_d", Qt::blue);
  for (int i = 0; i < 100; ++i) chart.append(d, 10.0 * i, i / 10.0, i == 50 ? 0.0 : std::exp(-i / 20.0));
  chart.resize(600, 300);
  chart.setLogY(true);
  chart.redraw();
  QVERIFY(chart.logY());
  QCOMPARE(chart.drawnPointCount(d), 99);  // the zero cannot be drawn on a log scale
  chart.setXAxis(TrainingChart::XAxis::Epochs);
  QCOMPARE(chart.xAxis(), TrainingChart::XAxis::Epochs);
  QVERIFY(chart.readoutAt(2.0).startsWith("images seen 200, epoch 2.00"));
  chart.setLogY(false);
  chart.redraw();
  QCOMPARE(chart.drawnPointCount(d), 100);
}

void TestTrainingChart::readoutNamesTheNearestPoints() {
  TrainingChart chart("D outputs");
  const int x = chart.addSeries("D(x)", Qt::darkGreen);
  const int z = chart.addSeries("D(G(z))", Qt::red);
  for (int i = 0; i < 10; ++i) {
    chart.append(x, 100.0 * i, i, 0.9 - 0.01 * i);
    chart.append(z, 100.0 * i, i, 0.1 + 0.01 * i);
  }
  chart.setSmoothing(0);
  QCOMPARE(chart.readoutAt(340), QString("images seen 300, epoch 3.00   D(x) 0.87 (smoothed 0.87)   D(G(z)) 0.13 (smoothed 0.13)"));
  QVERIFY(chart.readoutAt(-50).startsWith("images seen 0,"));
  QVERIFY(chart.readoutAt(1e9).startsWith("images seen 900,"));
}

STREETGAN_TEST_MAIN(TestTrainingChart)
#include "tst_training_chart.moc"
