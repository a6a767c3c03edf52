// The one serializer of events (core/runs/run_event_writer.h): every type written from its typed
// value and read back to the same value (write → read → write gives the same object), and the
// bytes on disk: tests/core/data/events-golden.jsonl holds lines written by the writers before
// events were typed (a demo run, its resume, a run of two ranks and an imported run, plus the
// shapes such runs did not reach: fp16 steps, a GPU, skipped files, errors, failures, restarts).
// Each line, read and written again through EventLog at its own time, must come out byte for byte.
#include "core/runs/event_fields.h"
#include "core/runs/event_log.h"
#include "core/runs/event_stream_reader.h"
#include "core/runs/run_event.h"
#include "core/runs/run_event_writer.h"
#include "tests/support/test_suite.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

using namespace streetgan;
using nlohmann::json;
Q_DECLARE_METATYPE(events::RunEvent)

class TestRunEventWriter : public QObject {
  Q_OBJECT
private slots:
  void roundTrip_data();
  void roundTrip();
  void emptyFieldsAreLeftOutOrNull();
  void goldenBytes();
  void untypedIsRefused();
};

namespace {

events::RunStarted trainerStart() {
  events::RunStarted e;
  e.setConfig({{"preset", "demo"}, {"epochs", 5}, {"batch_size", 32}, {"lr", 0.0002}});
  e.device = "cuda:0";
  e.precision = "bf16";
  e.params_g = 952768;
  e.params_d = 694656;
  e.resumed_from = "checkpoints/step-0000000040.pt";
  e.epoch = 2;
  e.step = 40;
  e.images_seen = 1280;
  e.world_size = 4;
  e.pid = 4242;
  e.pid_start_time = 99887766;
  events::DatasetSummary data;
  data.root = "/data/msls";
  data.layout = "MSLS";
  data.images = 1000;
  data.held_out = 200;
  data.cache = "/data/msls.sgc";
  data.decode_reduction = 4;
  data.workers = 2;
  e.dataset = data;
  e.batches_per_epoch = 31;
  e.nodes = 2;
  e.threads = 8;
  e.job = "streetgan-a-1-2";
  e.backend = "nccl";
  e.devices = {"cuda:0", "cuda:1", "cuda:0", "cuda:1"};
  e.version = "1.2.3";
  return e;
}

events::RunStarted importedStart() {
  events::RunStarted e;
  e.setConfig({{"preset", "imported"}});
  e.device = "cpu";
  e.precision = "fp32";
  e.params_g = 33876;
  e.params_d = 17820;
  e.imported_from = "/home/r/full.pt";
  e.epoch = e.step = e.images_seen = 0;
  e.world_size = 1;
  return e;
}

events::Step trainerStep(bool fp16) {
  events::Step e;
  e.epoch = 2;
  e.iteration = 3;
  e.iterations = 20;
  e.step = 23;
  e.images_seen = 736;
  e.loss_d = 1.25;
  e.loss_g = 2.5;
  e.d_x = 0.75;
  e.d_g_z1 = 0.5;
  e.d_g_z2 = 0.25;
  e.rt = -0.125;
  e.images_per_s = 55.5;
  e.data_wait_fraction = 0.0625;
  if (fp16) {
    e.loss_scale = 65536.0;
    e.skipped_step = false;
  }
  return e;
}

events::Step importedStep() {
  events::Step e;
  e.epoch = 3;
  e.iteration = e.iterations = 1;
  e.step = 3;
  e.images_seen = 384;
  e.loss_d = 1.4375;
  e.loss_g = 0.96875;
  e.imported = true;
  return e;
}

events::ImportedLosses importedLosses() {
  events::ImportedLosses e;
  e.first_step = 1;
  e.steps = 3;
  e.total_steps = 4;
  e.epochs = 2;
  e.images_per_step = 128;
  e.has_loss_d = e.has_loss_g = true;
  e.loss_d = {1.5, 1.25, 1.0};
  e.loss_g = {0.5, 0.75, 2.0};
  return e;
}

events::Parzen parzen() {
  events::Parzen e;
  e.epoch = 1;
  e.step = 20;
  e.images_seen = 640;
  e.sigma = 0.25;
  e.mean_ll = -812.5;
  e.standard_error = 9.75;
  e.n_test = 20;
  e.n_valid = 20;
  e.n_samples = 64;
  e.curve = {{0.125, -900.5}, {0.25, -800.25}};
  e.seconds = 1.5;
  return e;
}

events::Metrics metrics() {
  events::Metrics e;
  e.epoch = 1;
  e.step = 20;
  e.images_seen = 640;
  e.figures = {{"kid", 0.03125}, {"swd", 12.5}};
  e.feature_space = "pixel_pca";
  e.n_samples = 64;
  e.n_train = 64;
  e.skipped_due_points = 1;
  e.seconds = 3.25;
  return e;
}

events::System system(bool gpu) {
  events::System e;
  e.epoch = 1;
  e.step = 12;
  e.images_seen = 384;
  e.seconds = 5.25;
  e.cpu_percent = 108.5;
  e.cores = 2;
  e.rss_bytes = 316923904;
  e.host_memory_available_bytes = 24520732672.0;
  e.host_memory_total_bytes = 25276502016.0;
  e.loader_bytes_per_s = 3340621.75;
  e.has_gpu = gpu;
  if (gpu) {
    e.gpu_index = 1;
    e.gpu_utilization_percent = 97;
    e.gpu_memory_used_bytes = 2147483648.0;
    e.gpu_memory_total_bytes = 150754820096.0;
    e.gpu_power_w = 312.25;
  }
  return e;
}

events::Warning warning(bool alarm, bool skipped) {
  events::Warning e;
  e.message = alarm ? "D is overfitting" : "data/a.jpg: not a JPEG";
  if (alarm) {
    e.alarm = "overfitting";
    e.step = 45;
  }
  if (skipped) {
    e.path = "data/a.jpg";
    e.skipped_total = 3;
  }
  return e;
}

events::RunFinished finished(bool ranks) {
  events::RunFinished e;
  e.status = ranks ? "completed" : "failed";
  if (!ranks) e.message = "rank 1 died";
  e.epoch = 1;
  e.step = 14;
  e.images_seen = 876;
  if (ranks) e.rank_checksums = {3486333481, 3486333481};
  return e;
}

events::Restart restart(bool resumed) {
  events::Restart e;
  e.attempt = 1;
  e.max_restarts = 3;
  e.step = 40;
  e.images_seen = 1280;
  e.cause = "rank 1 died";
  if (resumed) e.resumed_from = "checkpoints/step-0000000040.pt";
  return e;
}

events::RunEvent readBack(const json& written) {
  return events::parseRunEvent(written.value(events::field::kType, std::string()), written);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

void TestRunEventWriter::roundTrip_data() {
  QTest::addColumn<events::RunEvent>("event");
  QTest::addColumn<QString>("type");
  QTest::newRow("run_started by the trainer") << events::RunEvent(trainerStart()) << "run_started";
  QTest::newRow("run_started of an import") << events::RunEvent(importedStart()) << "run_started";
  QTest::newRow("step") << events::RunEvent(trainerStep(false)) << "step";
  QTest::newRow("step in fp16") << events::RunEvent(trainerStep(true)) << "step";
  QTest::newRow("step of an import") << events::RunEvent(importedStep()) << "step";
  QTest::newRow("imported_losses") << events::RunEvent(importedLosses()) << "imported_losses";
  QTest::newRow("epoch_end") << events::RunEvent(events::EpochEnd{4, 5, 80, 2560, 1.25, 2.5, 61.5, 20, 640, 1})
                             << "epoch_end";
  QTest::newRow("samples") << events::RunEvent(events::Samples{"samples/step-0000000020.png", 20, 1, 640, false})
                           << "samples";
  QTest::newRow("samples of an import") << events::RunEvent(events::Samples{"samples/step-0000000003.png", 3, 3, 384, true})
                                        << "samples";
  QTest::newRow("parzen") << events::RunEvent(parzen()) << "parzen";
  QTest::newRow("metrics") << events::RunEvent(metrics()) << "metrics";
  QTest::newRow("system") << events::RunEvent(system(false)) << "system";
  QTest::newRow("system with a GPU") << events::RunEvent(system(true)) << "system";
  QTest::newRow("checkpoint") << events::RunEvent(events::Checkpoint{"checkpoints/step-0000000020.pt", 20, 1, 640})
                              << "checkpoint";
  QTest::newRow("warning") << events::RunEvent(warning(false, false)) << "warning";
  QTest::newRow("warning: a skipped file") << events::RunEvent(warning(false, true)) << "warning";
  QTest::newRow("warning: an alarm") << events::RunEvent(warning(true, false)) << "warning";
  QTest::newRow("error") << events::RunEvent(events::Error{"out of memory"}) << "error";
  QTest::newRow("run_finished, failed") << events::RunEvent(finished(false)) << "run_finished";
  QTest::newRow("run_finished of ranks") << events::RunEvent(finished(true)) << "run_finished";
  QTest::newRow("restart") << events::RunEvent(restart(true)) << "restart";
  QTest::newRow("restart without a checkpoint") << events::RunEvent(restart(false)) << "restart";
}

// Write, read, write: the same object both times, and the read value is of the written type.
void TestRunEventWriter::roundTrip() {
  QFETCH(events::RunEvent, event);
  QFETCH(QString, type);
  QCOMPARE(QString(events::runEventType(event)), type);
  const json written = events::runEventJson(event);
  QCOMPARE(QString::fromStdString(written.value(events::field::kType, std::string())), type);
  const events::RunEvent read = readBack(written);
  QCOMPARE(read.index(), event.index());
  QCOMPARE(QString::fromStdString(events::runEventJson(read).dump()), QString::fromStdString(written.dump()));
}

// What each writer leaves out and what it writes as null: an imported run's start has no launch
// fields; the trainer's says null for no checkpoint, job, backend or cache.
void TestRunEventWriter::emptyFieldsAreLeftOutOrNull() {
  const json imported = events::runEventJson(importedStart());
  for (const char* absent : {events::field::kPid, events::field::kDataset, events::field::kJob, events::field::kBackend,
                             events::field::kDevices, events::field::kProgramVersion})
    QVERIFY2(!imported.contains(absent), absent);
  QVERIFY(imported.at(events::field::kResumedFrom).is_null());
  events::RunStarted alone = trainerStart();
  alone.resumed_from.reset();
  alone.job.reset();
  alone.backend.clear();
  alone.dataset->cache.reset();
  const json written = events::runEventJson(alone);
  for (const char* null_field : {events::field::kResumedFrom, events::field::kJob, events::field::kBackend})
    QVERIFY2(written.at(null_field).is_null(), null_field);
  QVERIFY(written.at(events::field::kDataset).at(events::field::kCache).is_null());
  QVERIFY(!written.contains(events::field::kImportedFrom));
  // A whole number kept as a double goes out as an integer; a figure stays a figure.
  const json sys = events::runEventJson(system(false));
  QVERIFY(sys.at(events::field::kRssBytes).is_number_integer());
  QVERIFY(sys.at(events::field::kCpuPercent).is_number_float());
  events::Step diverged = trainerStep(false);
  diverged.loss_d = std::nan("");
  // A diverged step's loss is NaN: written as null (nlohmann keeps the NaN, its dump says null).
  QVERIFY(events::runEventJson(diverged).dump().find("\"loss_d\":null") != std::string::npos);
}

void TestRunEventWriter::goldenBytes() {
  const std::string golden = readFile(STREETGAN_SOURCE_DIR "/tests/core/data/events-golden.jsonl");
  QVERIFY(golden.size() > 1000);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const std::string path = dir.filePath("events.jsonl").toStdString();
  {
    auto log = EventLog::open(path, false);
    QVERIFY2(log, log ? "" : log.error().c_str());
    EventStreamReader reader;
    int lines = 0;
    for (const StreamEvent& event : reader.feed(golden)) {
      QVERIFY2(!std::holds_alternative<std::monostate>(event.event), event.type.c_str());
      const Status written = log->append(event.event, event.time);
      QVERIFY2(written, written ? "" : written.error().c_str());
      ++lines;
    }
    QCOMPARE(reader.malformedLines(), std::int64_t{0});
    QCOMPARE(lines, 29);
  }
  const std::string rewritten = readFile(path);
  std::istringstream want(golden), got(rewritten);
  std::string want_line, got_line;
  for (int n = 1; std::getline(want, want_line); ++n) {
    QVERIFY2(std::getline(got, got_line), qPrintable(QString("line %1 missing").arg(n)));
    QVERIFY2(got_line == want_line,
             qPrintable(QString("line %1:\n want %2\n got  %3").arg(n).arg(want_line.c_str(), got_line.c_str())));
  }
  QCOMPARE(rewritten.size(), golden.size());
}

void TestRunEventWriter::untypedIsRefused() {
  QTemporaryDir dir;
  auto log = EventLog::open(dir.filePath("events.jsonl").toStdString(), false);
  QVERIFY(log);
  QVERIFY(!log->append(events::RunEvent{}));
  QCOMPARE(QFileInfo(dir.filePath("events.jsonl")).size(), qint64(0));
}

STREETGAN_TEST_GUILESS_MAIN(TestRunEventWriter)
#include "tst_run_event_writer.moc"
