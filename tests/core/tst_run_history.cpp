// RunHistory: a run's log read into points, fed whole or in pieces cut anywhere (lines split
// across feeds), a resumed run's replaced points dropped, malformed lines counted; the compare
// table's figures (median images/s, time per epoch, best Parzen, peak memory, mean use, the latest
// quality figures and the alarms) and the cost per million images, as data tables.
#include "core/runs/quality_evaluation_file.h"
#include "core/runs/run_history.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <cmath>
#include <string>

using namespace streetgan;

class TestRunHistory : public QObject {
  Q_OBJECT
private slots:
  void readsInAnyPieces_data();
  void readsInAnyPieces();
  void resumeReplacesThePointsPastIt();
  void figures();
  void qualityFiguresAndAlarms();
  void dollarsPerMillion_data();
  void dollarsPerMillion();
};

namespace {

const std::string kLog =
    R"({"v":1,"type":"run_started","time":100,"device":"cuda:0","world_size":2,"backend":"nccl","images_seen":0,"config":{"preset":"demo","batch_size":32,"epochs":3}})" "\n"
    R"({"v":1,"type":"step","time":101,"epoch":1,"iteration":1,"iterations":2,"step":1,"images_seen":64,"loss_d":1.5,"loss_g":2.5,"d_x":0.6,"d_g_z1":0.4,"d_g_z2":0.3,"images_per_s":100,"data_wait_fraction":0.1})" "\n"
    R"({"v":1,"type":"step","time":102,"epoch":1,"iteration":2,"iterations":2,"step":2,"images_seen":128,"loss_d":1.4,"loss_g":2.4,"d_x":0.6,"d_g_z1":0.4,"d_g_z2":0.3,"images_per_s":300,"data_wait_fraction":0.1})" "\n"
    R"({"v":1,"type":"system","time":102.5,"epoch":1,"step":2,"images_seen":128,"cpu_percent":150,"cores":2,"rss_bytes":1000,"host_memory_total_bytes":8000,"gpu":{"utilization_percent":90,"memory_used_bytes":5000}})" "\n"
    R"({"v":1,"type":"epoch_end","time":102.6,"epoch":1,"seconds":2.5})" "\n"
    "this line is not JSON\n"
    R"({"v":1,"type":"samples","time":102.7,"path":"samples/step-2.png","images_seen":128})" "\n"
    R"({"v":1,"type":"parzen","time":103,"epoch":1,"step":2,"images_seen":128,"mean_ll":-800.5,"stderr":9})" "\n"
    R"({"v":1,"type":"step","time":104,"epoch":2,"iteration":1,"iterations":2,"step":3,"images_seen":192,"loss_d":1.3,"loss_g":2.3,"d_x":0.6,"d_g_z1":0.4,"d_g_z2":0.3,"images_per_s":200,"data_wait_fraction":0.1})" "\n"
    R"({"v":1,"type":"system","time":105,"epoch":2,"step":3,"images_seen":192,"cpu_percent":50,"cores":2,"rss_bytes":3000,"host_memory_total_bytes":8000,"gpu":{"utilization_percent":70,"memory_used_bytes":4000}})" "\n"
    R"({"v":1,"type":"epoch_end","time":105.5,"epoch":2,"seconds":3.5})" "\n"
    R"({"v":1,"type":"parzen","time":106,"epoch":2,"step":3,"images_seen":192,"mean_ll":-700.25,"stderr":8})" "\n";

RunHistory readWhole(const std::string& log) {
  RunHistoryReader reader;
  reader.feed(log);
  return reader.history();
}

}  // namespace

void TestRunHistory::readsInAnyPieces_data() {
  QTest::addColumn<int>("piece");
  QTest::newRow("whole") << 0;
  QTest::newRow("1 byte at a time") << 1;
  QTest::newRow("7 bytes") << 7;
  QTest::newRow("100 bytes") << 100;
}

void TestRunHistory::readsInAnyPieces() {
  QFETCH(int, piece);
  RunHistoryReader reader;
  if (piece == 0) {
    reader.feed(kLog);
  } else {
    for (std::size_t at = 0; at < kLog.size(); at += static_cast<std::size_t>(piece)) reader.feed(std::string_view(kLog).substr(at, piece));
  }
  const RunHistory& h = reader.history();
  QCOMPARE(reader.bytesRead(), quint64(kLog.size()));
  QCOMPARE(h.preset, std::string("demo"));
  QCOMPARE(h.device, std::string("cuda:0"));
  QCOMPARE(h.backend, std::string("nccl"));
  QCOMPARE(h.world_size, qint64(2));
  QCOMPARE(h.batch_size, qint64(32));
  QCOMPARE(h.steps.size(), std::size_t(3));
  QCOMPARE(h.steps[1].seconds, 2.0);
  QCOMPARE(h.steps[1].epoch, 1.0);   // the end of the first epoch
  QCOMPARE(h.steps[2].epoch, 1.5);
  QCOMPARE(h.steps[2].loss_g, 2.3);
  QCOMPARE(h.parzen.size(), std::size_t(2));
  QCOMPARE(h.parzen[1].mean_ll, -700.25);
  QCOMPARE(h.samples.size(), std::size_t(1));
  QCOMPARE(h.samples[0].path, std::string("samples/step-2.png"));
  QCOMPARE(h.system.size(), std::size_t(2));
  QCOMPARE(h.system[0].gpu_utilization_percent, 90.0);
  QCOMPARE(h.malformed_lines, qint64(1));
  // A last line without its newline waits.
  reader.feed(R"({"v":1,"type":"step","time":107,"images_seen":256)");
  QCOMPARE(reader.history().steps.size(), std::size_t(3));
  QCOMPARE(reader.bytesRead(), quint64(kLog.size()));
}

void TestRunHistory::resumeReplacesThePointsPastIt() {
  // Killed after the third step, resumed from the checkpoint at 128 images: the third step, the
  // second system event and the second Parzen estimate are logged again by the new process.
  const std::string resumed =
      kLog + R"({"v":1,"type":"run_started","time":200,"device":"cpu","world_size":1,"images_seen":128,"config":{"preset":"other","batch_size":8}})" "\n"
             R"({"v":1,"type":"step","time":201,"epoch":2,"iteration":1,"iterations":2,"step":3,"images_seen":192,"loss_d":1.0,"loss_g":2.0,"d_x":0.6,"d_g_z1":0.4,"d_g_z2":0.3,"images_per_s":50,"data_wait_fraction":0.1})" "\n";
  const RunHistory h = readWhole(resumed);
  QCOMPARE(h.steps.size(), std::size_t(3));
  QCOMPARE(h.steps[2].loss_d, 1.0);
  QCOMPARE(h.steps[2].seconds, 101.0);  // seconds since the run first started
  QCOMPARE(h.parzen.size(), std::size_t(1));
  QCOMPARE(h.system.size(), std::size_t(1));
  QCOMPARE(h.samples.size(), std::size_t(1));  // at 128: kept
  QCOMPARE(h.preset, std::string("demo"));     // the config of the run's first start
  QCOMPARE(h.device, std::string("cpu"));      // the latest process's device
  QCOMPARE(h.world_size, qint64(1));
  QCOMPARE(h.process_starts, qint64(2));
}

void TestRunHistory::figures() {
  const RunFigures f = runFigures(readWhole(kLog));
  QCOMPARE(f.images_per_s.value(), 200.0);  // median of 100, 300, 200
  QCOMPARE(f.images_per_hour.value(), 720000.0);
  QCOMPARE(f.seconds_per_epoch.value(), 3.0);
  QCOMPARE(f.best_parzen.value(), -700.25);
  QCOMPARE(f.peak_rss_bytes.value(), 3000.0);
  QCOMPARE(f.mean_cpu_percent.value(), 50.0);  // (75% + 25%) of its 2 cores
  QCOMPARE(f.mean_gpu_percent.value(), 80.0);
  QCOMPARE(f.peak_gpu_memory_bytes.value(), 5000.0);
  // An even count: the mean of the two middle rates. Nothing logged: nothing said.
  RunHistory two;
  two.steps.resize(4);
  for (int i = 0; i < 4; ++i) two.steps[static_cast<std::size_t>(i)].images_per_s = 10.0 * (i + 1);
  QCOMPARE(runFigures(two).images_per_s.value(), 25.0);
  const RunFigures none = runFigures(RunHistory{});
  QVERIFY(!none.images_per_s && !none.best_parzen && !none.peak_rss_bytes && !none.mean_gpu_percent);
}

void TestRunHistory::qualityFiguresAndAlarms() {
  // Two evaluations (the second without FID), r_t on the first step only, two collapse alarms and
  // a memorisation alarm beside a warning that is no alarm.
  const std::string log =
      R"({"v":1,"type":"run_started","time":100,"images_seen":0})" "\n"
      R"({"v":1,"type":"step","time":101,"epoch":1,"iteration":1,"iterations":2,"step":1,"images_seen":64,"loss_d":1.5,"loss_g":2.5,"rt":0.25})" "\n"
      R"({"v":1,"type":"metrics","time":102,"epoch":0,"step":1,"images_seen":64,"metrics":{"swd_e3":40.5,"fid":120.25,"copy_rate":0.01,"msssim_samples":0.2},"feature_space":"pixels32-pca256"})" "\n"
      R"({"v":1,"type":"warning","time":102.5,"message":"mode collapse: try a lower lr","alarm":"collapse","step":1})" "\n"
      R"({"v":1,"type":"step","time":103,"epoch":1,"iteration":2,"iterations":2,"step":2,"images_seen":128,"loss_d":1.4,"loss_g":2.4})" "\n"
      R"({"v":1,"type":"metrics","time":104,"epoch":1,"step":2,"images_seen":128,"metrics":{"swd_e3":30.75,"copy_rate":0.02},"feature_space":"pixels32-pca256"})" "\n"
      R"({"v":1,"type":"warning","time":104.5,"message":"mode collapse again","alarm":"collapse","step":2})" "\n"
      R"({"v":1,"type":"warning","time":104.6,"message":"memorisation: 6% copies","alarm":"memorisation","step":2})" "\n"
      R"({"v":1,"type":"warning","time":104.7,"message":"skipped a file","path":"x.jpg"})" "\n";
  const RunHistory h = readWhole(log);
  QCOMPARE(h.steps.size(), std::size_t(2));
  QCOMPARE(h.steps[0].rt, 0.25);
  QVERIFY(std::isnan(h.steps[1].rt));
  QCOMPARE(h.metrics.size(), std::size_t(2));
  QCOMPARE(h.metrics[0].images_seen, 64.0);
  QCOMPARE(h.metrics[0].seconds, 2.0);
  QCOMPARE(h.metrics[1].epoch, 1.0);
  QCOMPARE(h.metrics[0].feature_space, std::string("pixels32-pca256"));
  QCOMPARE(h.metrics[0].figure(quality_figure::kFid).value(), 120.25);
  QCOMPARE(h.metrics[0].figure(quality_figure::kMsSsimSamples).value(), 0.2);
  QVERIFY(!h.metrics[1].figure(quality_figure::kFid));
  QCOMPARE(h.alarms.size(), std::size_t(2));
  QCOMPARE(qint64(h.alarms.at("collapse")), qint64(2));
  QCOMPARE(qint64(h.alarms.at("memorisation")), qint64(1));
  const RunFigures f = runFigures(h);
  QCOMPARE(f.latest_swd.value(), 30.75);
  QCOMPARE(f.latest_copy_rate.value(), 0.02);
  QCOMPARE(f.latest_fid.value(), 120.25);  // of the newest evaluation that has one
  QCOMPARE(f.latest_fid_space, std::string("pixels32-pca256"));
  QCOMPARE(qint64(f.alarms), qint64(3));
  // Resumed from 64 images: the evaluation past it goes; the alarms, which have no place, stay.
  const RunHistory resumed = readWhole(log + R"({"v":1,"type":"run_started","time":200,"images_seen":64})" "\n");
  QCOMPARE(resumed.metrics.size(), std::size_t(1));
  QCOMPARE(resumed.steps.size(), std::size_t(1));
  QCOMPARE(qint64(resumed.alarms.at("collapse")), qint64(2));
  QCOMPARE(runFigures(resumed).latest_swd.value(), 40.5);
  // A run without quality metrics says nothing of them; its steps have no r_t.
  const RunHistory plain = readWhole(kLog);
  const RunFigures none = runFigures(plain);
  QVERIFY(!none.latest_swd && !none.latest_fid && !none.latest_copy_rate);
  QVERIFY(none.latest_fid_space.empty());
  QCOMPARE(qint64(none.alarms), qint64(0));
  QVERIFY(plain.metrics.empty() && plain.alarms.empty());
  QVERIFY(std::isnan(plain.steps[0].rt));
}

void TestRunHistory::dollarsPerMillion_data() {
  QTest::addColumn<double>("per_hour");
  QTest::addColumn<double>("images_per_hour");
  QTest::addColumn<double>("expected");  // < 0: none
  QTest::newRow("A100 at $1.10/h, 2.4M images/h") << 1.1 << 2.4e6 << 1.1 / 2.4;
  QTest::newRow("free") << 0.0 << 1e6 << -1.0;
  QTest::newRow("no throughput") << 2.0 << 0.0 << -1.0;
  QTest::newRow("CPU at $0.05/h, 36k images/h") << 0.05 << 36000.0 << 0.05 / 36000 * 1e6;
}

void TestRunHistory::dollarsPerMillion() {
  QFETCH(double, per_hour);
  QFETCH(double, images_per_hour);
  QFETCH(double, expected);
  const auto cost = dollarsPerMillionImages(per_hour, images_per_hour);
  if (expected < 0) {
    QVERIFY(!cost);
  } else {
    QVERIFY(cost);
    QVERIFY(qFuzzyCompare(*cost, expected));
  }
  QVERIFY(!dollarsPerMillionImages(std::nullopt, images_per_hour));
}

STREETGAN_TEST_GUILESS_MAIN(TestRunHistory)
#include "tst_run_history.moc"
