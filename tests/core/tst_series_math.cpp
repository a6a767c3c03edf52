// Chart math of the training dashboard: TensorBoard's debiased smoothing and min/max decimation,
// as tables; the event stream reader with chunked input, garbage and truncated lines; median().
#include "core/runs/event_stream_reader.h"
#include "core/util/median.h"
#include "core/util/series_smoothing.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <cmath>
#include <limits>
#include <random>

using namespace streetgan;

Q_DECLARE_METATYPE(std::vector<double>)

class TestSeriesMath : public QObject {
  Q_OBJECT
private slots:
  void smoothing_data();
  void smoothing();
  void smoothingFollowsAStepWithoutBias();
  void incrementalSmoothingMatches();
  void decimation_data();
  void decimation();
  void decimationOfAMillionPointsKeepsEverySpike();
  void eventsInAnyChunks();
  void garbageAndTruncatedLinesAreCounted_data();
  void garbageAndTruncatedLinesAreCounted();
  void median_data();
  void median();
  void overlongLineIsDroppedWithBoundedMemory();
};

void TestSeriesMath::smoothing_data() {
  QTest::addColumn<std::vector<double>>("values");
  QTest::addColumn<double>("weight");
  QTest::addColumn<std::vector<double>>("expected");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  QTest::newRow("weight 0 is the raw series") << std::vector<double>{1, 5, 2} << 0.0 << std::vector<double>{1, 5, 2};
  // w = 0.5: s1 = 0.5·1 / (1 − 0.5) = 1; s2 = (0.25 + 1.5) / 0.75 = 7/3; s3 = (0.875 + 2.5)/0.875
  QTest::newRow("debiased, w 0.5") << std::vector<double>{1, 3, 5} << 0.5
                                   << std::vector<double>{1, 7.0 / 3, 3.375 / 0.875};
  QTest::newRow("first point is never pulled to zero") << std::vector<double>{10, 10.5} << 0.9
                                                       << std::vector<double>{10, (0.9 + 1.05) / 0.19};
  QTest::newRow("constant series unchanged") << std::vector<double>{2, 2, 2} << 0.99 << std::vector<double>{2, 2, 2};
  QTest::newRow("empty") << std::vector<double>{} << 0.6 << std::vector<double>{};
  QTest::newRow("NaN passes through and does not count")
      << std::vector<double>{1, nan, 3} << 0.5 << std::vector<double>{1, nan, 7.0 / 3};
}

void TestSeriesMath::smoothing() {
  QFETCH(std::vector<double>, values);
  QFETCH(double, weight);
  QFETCH(std::vector<double>, expected);
  const std::vector<double> out = smoothSeries(values, weight);
  QCOMPARE(out.size(), expected.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(expected[i])) {
      QVERIFY(std::isnan(out[i]));
      continue;
    }
    QVERIFY2(std::abs(out[i] - expected[i]) < 1e-12, qPrintable(QString("%1: %2 vs %3").arg(i).arg(out[i]).arg(expected[i])));
  }
}

void TestSeriesMath::smoothingFollowsAStepWithoutBias() {
  std::vector<double> values(200, 1.0);
  for (std::size_t i = 100; i < values.size(); ++i) values[i] = 3.0;
  const auto out = smoothSeries(values, 0.9);
  QCOMPARE(out[0], 1.0);
  QVERIFY(std::abs(out[99] - 1.0) < 1e-9);   // debiased: exactly on the plateau
  QVERIFY(out[100] > 1.0 && out[100] < 3.0);  // moving toward the step
  QVERIFY(std::abs(out[199] - 3.0) < 1e-4);   // 0.9^100 ≈ 2.7e-5 of the old level left
}

void TestSeriesMath::incrementalSmoothingMatches() {
  std::vector<double> values;
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(1, 0.3);
  for (int i = 0; i < 1000; ++i) values.push_back(i == 500 ? std::numeric_limits<double>::quiet_NaN() : noise(rng));
  const auto whole = smoothSeries(values, 0.9);
  SmoothingState state;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double next = smoothNext(state, values[i], 0.9);
    if (std::isnan(whole[i])) QVERIFY(std::isnan(next));
    else QCOMPARE(next, whole[i]);  // bit for bit
  }
}

void TestSeriesMath::decimation_data() {
  QTest::addColumn<std::vector<double>>("xs");
  QTest::addColumn<std::vector<double>>("ys");
  QTest::addColumn<double>("x_min");
  QTest::addColumn<double>("x_max");
  QTest::addColumn<int>("columns");
  QTest::addColumn<std::vector<double>>("indices");  // as doubles, for the table
  QTest::newRow("fewer points than columns: all")
      << std::vector<double>{0, 1, 2, 3} << std::vector<double>{5, 1, 4, 2} << 0.0 << 3.0 << 100
      << std::vector<double>{0, 1, 2, 3};
  // One column holding 6 points: first (0), min (4: y −9), max (2: y 9), last (5).
  QTest::newRow("one column: first, extremes in x order, last")
      << std::vector<double>{0, 1, 2, 3, 4, 5} << std::vector<double>{0, 1, 9, 2, -9, 3} << 0.0 << 6.0 << 1
      << std::vector<double>{0, 2, 4, 5};
  QTest::newRow("neighbours outside the view are kept")
      << std::vector<double>{0, 1, 2, 3, 4} << std::vector<double>{0, 1, 2, 3, 4} << 1.5 << 3.5 << 10
      << std::vector<double>{1, 2, 3, 4};
  QTest::newRow("empty view") << std::vector<double>{0, 1} << std::vector<double>{0, 1} << 2.0 << 2.0 << 10
                              << std::vector<double>{};
  QTest::newRow("no columns") << std::vector<double>{0, 1} << std::vector<double>{0, 1} << 0.0 << 1.0 << 0
                              << std::vector<double>{};
}

void TestSeriesMath::decimation() {
  QFETCH(std::vector<double>, xs);
  QFETCH(std::vector<double>, ys);
  QFETCH(double, x_min);
  QFETCH(double, x_max);
  QFETCH(int, columns);
  QFETCH(std::vector<double>, indices);
  const auto out = decimateForDrawing(xs, ys, x_min, x_max, columns);
  std::vector<double> got(out.begin(), out.end());
  QCOMPARE(got, indices);
}

void TestSeriesMath::decimationOfAMillionPointsKeepsEverySpike() {
  const std::size_t n = 1'000'000;
  std::vector<double> xs(n), ys(n);
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.1);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = static_cast<double>(i);
    ys[i] = std::sin(i * 1e-5) + noise(rng);
  }
  ys[123457] = 50;   // a loss spike
  ys[876543] = -50;
  const int columns = 800;
  QElapsedTimer timer;
  timer.start();
  const auto out = decimateForDrawing(xs, ys, 0, static_cast<double>(n - 1), columns);
  qInfo("decimating %zu points to %zu: %.1f ms", n, out.size(), timer.nsecsElapsed() / 1e6);
  QVERIFY2(out.size() <= 4u * (columns + 1) + 2, qPrintable(QString::number(out.size())));
  QVERIFY(std::is_sorted(out.begin(), out.end()));
  QVERIFY(std::find(out.begin(), out.end(), 123457u) != out.end());
  QVERIFY(std::find(out.begin(), out.end(), 876543u) != out.end());
  // Each column's extremes are those of the raw points in it.
  double raw_max = -1e9, drawn_max = -1e9;
  for (std::size_t i = 0; i < n; ++i) raw_max = std::max(raw_max, ys[i]);
  for (std::size_t i : out) drawn_max = std::max(drawn_max, ys[i]);
  QCOMPARE(drawn_max, raw_max);
}

void TestSeriesMath::eventsInAnyChunks() {
  const std::string stream =
      "{\"v\":1,\"type\":\"run_started\",\"time\":1.5}\n"
      "{\"v\":1,\"type\":\"step\",\"time\":2,\"loss_d\":0.25}\n"
      "{\"v\":1,\"type\":\"run_finished\",\"time\":3,\"status\":\"completed\"}\n";
  for (std::size_t chunk : {1u, 2u, 7u, 40u, 1000u}) {
    EventStreamReader reader;
    std::vector<StreamEvent> events;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      auto got = reader.feed(std::string_view(stream).substr(at, chunk));
      events.insert(events.end(), got.begin(), got.end());
    }
    QCOMPARE(events.size(), 3u);
    QCOMPARE(events[0].type, std::string("run_started"));
    QCOMPARE(events[0].time, 1.5);
    QCOMPARE(events[1].body["loss_d"].get<double>(), 0.25);
    QCOMPARE(events[2].body["status"].get<std::string>(), std::string("completed"));
    QCOMPARE(reader.malformedLines(), 0);
    QCOMPARE(reader.completeBytes(), static_cast<std::uint64_t>(stream.size()));
  }
}

void TestSeriesMath::garbageAndTruncatedLinesAreCounted_data() {
  QTest::addColumn<QByteArray>("stream");
  QTest::addColumn<int>("events");
  QTest::addColumn<int>("malformed");
  QTest::newRow("plain text") << QByteArray("hello\n{\"type\":\"step\"}\n") << 1 << 1;
  QTest::newRow("JSON but not an object") << QByteArray("[1,2]\n42\n\"step\"\n") << 0 << 3;
  QTest::newRow("object without type") << QByteArray("{\"v\":1}\n{\"type\":7}\n") << 0 << 2;
  QTest::newRow("half an object") << QByteArray("{\"type\":\"st\n{\"type\":\"step\"}\n") << 1 << 1;
  QTest::newRow("blank and CRLF lines") << QByteArray("\n  \n{\"type\":\"step\"}\r\n") << 1 << 0;
  QTest::newRow("binary garbage") << QByteArray("\x00\xff\xfe{{\n", 6) + QByteArray("{\"type\":\"x\"}\n") << 1 << 1;
  QTest::newRow("truncated last line") << QByteArray("{\"type\":\"step\"}\n{\"type\":\"ste") << 1 << 1;
  QTest::newRow("last line without newline") << QByteArray("{\"type\":\"step\"}\n{\"type\":\"end\"}") << 2 << 0;
}

void TestSeriesMath::garbageAndTruncatedLinesAreCounted() {
  QFETCH(QByteArray, stream);
  QFETCH(int, events);
  QFETCH(int, malformed);
  EventStreamReader reader;
  auto got = reader.feed(std::string_view(stream.constData(), static_cast<std::size_t>(stream.size())));
  auto rest = reader.finish();
  QCOMPARE(static_cast<int>(got.size() + rest.size()), events);
  QCOMPARE(reader.malformedLines(), malformed);
  QCOMPARE(static_cast<int>(reader.malformedSamples().size()), malformed);
}

void TestSeriesMath::overlongLineIsDroppedWithBoundedMemory() {
  EventStreamReader reader(1024);
  const std::string big(600, 'x');
  QVERIFY(reader.feed(big).empty());
  QVERIFY(reader.feed(big).empty());  // now over the limit: dropped as it arrives
  QVERIFY(reader.feed(big + "\n{\"type\":\"step\"}\n").size() == 1);
  QCOMPARE(reader.malformedLines(), 1);
  QCOMPARE(reader.completeBytes(), static_cast<std::uint64_t>(3 * 600 + 1 + 16));
}

void TestSeriesMath::median_data() {
  QTest::addColumn<QVector<double>>("values");
  QTest::addColumn<double>("expected");
  QTest::newRow("none") << QVector<double>{} << 0.0;
  QTest::newRow("one") << QVector<double>{7.5} << 7.5;
  QTest::newRow("odd, unsorted") << QVector<double>{9, 1, 5} << 5.0;
  QTest::newRow("even: the two middle ones' mean") << QVector<double>{4, 1, 3, 2} << 2.5;
  QTest::newRow("repeated values") << QVector<double>{2, 2, 2, 9} << 2.0;
  QTest::newRow("an outlier does not move it") << QVector<double>{1.0, 1.1, 1.2, 1000.0, 0.9} << 1.1;
}

void TestSeriesMath::median() {
  QFETCH(QVector<double>, values);
  QFETCH(double, expected);
  QCOMPARE(streetgan::median(std::vector<double>(values.begin(), values.end())), expected);
}

STREETGAN_TEST_GUILESS_MAIN(TestSeriesMath)
#include "tst_series_math.moc"
