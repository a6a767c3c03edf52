// `streetgan train`'s status line (core/runs/training_status.h): the rate, the ETAs of the epoch
// and of the run on a steady run, on steps that arrive in bursts and after the rate changes (data
// tables of exact figures on a clock of the test's own), the durations as written, and the line
// itself: within its width, whole fields only, and no carriage return or newline.
#include "core/runs/training_status.h"
#include "tests/support/test_suite.h"

#include <QTest>

#include <cmath>

using namespace streetgan;

namespace {

events::Step stepAt(std::int64_t step, std::int64_t iterations, std::int64_t images_per_step, double wait = 0.25) {
  events::Step s;
  s.step = step;
  s.epoch = (step - 1) / iterations + 1;
  s.iteration = (step - 1) % iterations + 1;
  s.iterations = iterations;
  s.images_seen = step * images_per_step;
  s.loss_d = 1.25;
  s.loss_g = 2.5;
  s.d_x = 0.625;
  s.d_g_z1 = 0.375;
  s.data_wait_fraction = wait;
  return s;
}

events::RunStarted startedFor(std::int64_t epochs) {
  events::RunStarted r;
  r.config_epochs = epochs;
  return r;
}

}  // namespace

class TestTrainingStatus : public QObject {
  Q_OBJECT

private slots:
  // A steady run: 3 epochs of 50 steps, one step every 0.5 s, 16 images a step.
  void steadyRun_data() {
    QTest::addColumn<int>("after");  // steps done
    QTest::addColumn<double>("epochEta");
    QTest::addColumn<double>("runEta");
    QTest::newRow("second step") << 2 << 24.0 << 74.0;
    QTest::newRow("mid first epoch") << 25 << 12.5 << 62.5;
    QTest::newRow("end of the first epoch") << 50 << 0.0 << 50.0;
    QTest::newRow("first step of the second") << 51 << 24.5 << 49.5;
    QTest::newRow("mid last epoch") << 130 << 10.0 << 10.0;
    QTest::newRow("last step") << 150 << 0.0 << 0.0;
  }
  void steadyRun() {
    QFETCH(int, after);
    QFETCH(double, epochEta);
    QFETCH(double, runEta);
    TrainingStatus status;
    status.onRunStarted(startedFor(3), 100.0);
    for (int s = 1; s <= after; ++s) status.onStep(stepAt(s, 50, 16), 100.0 + 0.5 * s);
    QCOMPARE(status.stepsPerSecond(), 2.0);
    QCOMPARE(status.imagesPerSecond(), 32.0);
    QCOMPARE(status.dataWaitFraction(), 0.25);
    QCOMPARE(status.epochEtaSeconds(), epochEta);
    QCOMPARE(status.runEtaSeconds(), runEta);
    QCOMPARE(status.elapsedSeconds(100.0 + 0.5 * after), 0.5 * after);
  }

  // Steps that arrive ten at a time every 5 s (one copy of a CUDA device's statistics): the
  // rate over the window is still 2 steps a second.
  void bursts() {
    TrainingStatus status(30.0);
    status.onRunStarted(startedFor(2), 0.0);
    for (int burst = 1; burst <= 12; ++burst)
      for (int i = 1; i <= 10; ++i) status.onStep(stepAt((burst - 1) * 10 + i, 100, 8), 5.0 * burst);
    QCOMPARE(status.stepsPerSecond(), 2.0);
    QCOMPARE(status.runEtaSeconds(), 40.0);  // 80 steps left
  }

  // The rate follows a change within the window: 20 slow steps (1 s), then fast ones (0.1 s).
  void rateChange() {
    TrainingStatus status(5.0);
    status.onRunStarted(startedFor(1), 0.0);
    double t = 0;
    for (int s = 1; s <= 20; ++s) status.onStep(stepAt(s, 1000, 1), t += 1.0);
    QCOMPARE(status.stepsPerSecond(), 1.0);
    for (int s = 21; s <= 200; ++s) status.onStep(stepAt(s, 1000, 1), t += 0.1);
    QVERIFY2(std::abs(status.stepsPerSecond() - 10.0) < 1e-6, qPrintable(QString::number(status.stepsPerSecond())));
    QVERIFY(std::abs(status.runEtaSeconds() - 80.0) < 1e-6);
  }

  // What is not known yet is NaN, and "-" on the line; resumed with --epochs, epoch_end says
  // the run's length.
  void unknownFigures() {
    TrainingStatus status;
    QVERIFY(std::isnan(status.stepsPerSecond()));
    QVERIFY(std::isnan(status.dataWaitFraction()));
    status.onStep(stepAt(1, 10, 4), 1.0);
    QVERIFY(std::isnan(status.stepsPerSecond()));
    QVERIFY(std::isnan(status.epochEtaSeconds()));
    QVERIFY(std::isnan(status.runEtaSeconds()));  // no run_started: the epochs are unknown
    QVERIFY2(status.liveLine(1.0, 200).find("ETA -, run -") != std::string::npos, status.liveLine(1.0, 200).c_str());
    status.onStep(stepAt(2, 10, 4), 2.0);
    QCOMPARE(status.epochEtaSeconds(), 8.0);
    QVERIFY(std::isnan(status.runEtaSeconds()));
    events::EpochEnd end;
    end.epochs = 4;
    status.onEpochEnd(end, 2.0);
    QCOMPARE(status.runEtaSeconds(), 38.0);
  }

  void durations_data() {
    QTest::addColumn<double>("seconds");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << 0.0 << "0s";
    QTest::newRow("rounded") << 41.6 << "42s";
    QTest::newRow("a minute") << 60.0 << "1m00s";
    QTest::newRow("minutes") << 365.0 << "6m05s";
    QTest::newRow("just under an hour") << 3599.4 << "59m59s";
    QTest::newRow("hours") << 11220.0 << "3h07m";
    QTest::newRow("days") << 183600.0 << "51h00m";
    QTest::newRow("NaN") << std::nan("") << "-";
    QTest::newRow("negative") << -1.0 << "-";
    QTest::newRow("infinite") << HUGE_VAL << "-";
    QTest::newRow("beyond 10,000 hours") << 3.7e7 << "-";
  }
  void durations() {
    QFETCH(double, seconds);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(formatDuration(seconds)), text);
  }

  // The live line fits its width in whole fields; the widest has everything; none has a
  // carriage return or newline. The plain line has every figure.
  void lines_data() {
    QTest::addColumn<int>("width");
    QTest::addColumn<QStringList>("has");
    QTest::addColumn<QStringList>("hasNot");
    const QStringList all = {"epoch 2/3", "[####......]", "20/50", "32.0 img/s", "data 25%", "ETA 15s, run 40s",
                             "D 1.250 G 2.500", "D(x) 0.62 D(G(z)) 0.38", "elapsed 35s"};
    QTest::newRow("wide") << 400 << all << QStringList{};
    QTest::newRow("80 columns, less one") << 79 << all.mid(0, 6) << all.mid(6);
    QTest::newRow("narrow") << 30 << all.mid(0, 3) << all.mid(3);
    QTest::newRow("narrower than the first field: what fits of it") << 5 << QStringList{"epoch"} << all;
  }
  void lines() {
    QFETCH(int, width);
    QFETCH(QStringList, has);
    QFETCH(QStringList, hasNot);
    TrainingStatus status;
    status.onRunStarted(startedFor(3), 0.0);
    for (int s = 1; s <= 70; ++s) status.onStep(stepAt(s, 50, 16), 0.5 * s);
    const QString line = QString::fromStdString(status.liveLine(35.0, static_cast<std::size_t>(width)));
    QVERIFY2(line.size() <= width, qPrintable(line));
    for (const QString& text : has) QVERIFY2(line.contains(text), qPrintable(text + " not in: " + line));
    for (const QString& text : hasNot) QVERIFY2(!line.contains(text), qPrintable(text + " in: " + line));
    QVERIFY(!line.contains('\r') && !line.contains('\n'));
    const QString plain = QString::fromStdString(status.plainLine(35.0));
    QCOMPARE(plain, QString("[35s] epoch 2/3  step 20/50 (40%)  32.0 img/s  data wait 25%  loss_d 1.2500  loss_g 2.5000  "
                            "D(x) 0.625  D(G(z)) 0.375  epoch ETA 15s  run ETA 40s"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestTrainingStatus)
#include "tst_training_status.moc"
