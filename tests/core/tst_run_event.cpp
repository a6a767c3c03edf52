// The typed events of core/runs/run_event.h: each type read from its JSON object with every field
// it carries; absent fields and fields of the wrong type left empty, never an exception; counters
// out of int64's range refused; unknown types and unknown fields kept for readers that know them
// (EventStreamReader keeps the whole object); the derived figures (fractional epoch, imported
// pairs, the data-wait window) as data tables.
#include "core/runs/event_fields.h"
#include "core/runs/event_stream_reader.h"
#include "core/runs/run_event.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <cmath>
#include <string>

using namespace streetgan;
using nlohmann::json;

class TestRunEvent : public QObject {
  Q_OBJECT
private slots:
  void eachType();
  void counters_data();
  void counters();
  void wrongTypesAreEmpty();
  void unknownTypeAndFieldsSurvive();
  void nestingIsBounded_data();
  void nestingIsBounded();
  void fractionalEpoch_data();
  void fractionalEpoch();
  void importedPoint_data();
  void importedPoint();
  void dataWaitWindow();
};

namespace {

events::RunEvent parse(const std::string& line) {
  EventStreamReader reader;
  auto event = reader.parse(line);
  return event ? event->event : events::RunEvent{};
}

}  // namespace

void TestRunEvent::eachType() {
  const auto started = parse(R"({"v":1,"type":"run_started","time":5,"device":"cuda:0","backend":"nccl","world_size":4,)"
                             R"("epoch":2,"step":30,"images_seen":960,"pid":1234,"pid_start_time":99,)"
                             R"("config":{"preset":"demo","epochs":7,"batch_size":32}})");
  const auto* s = std::get_if<events::RunStarted>(&started);
  QVERIFY(s);
  QCOMPARE(s->device, std::string("cuda:0"));
  QCOMPARE(s->backend, std::string("nccl"));
  QCOMPARE(*s->world_size, std::int64_t{4});
  QCOMPARE(*s->epoch, std::int64_t{2});
  QCOMPARE(*s->step, std::int64_t{30});
  QCOMPARE(*s->images_seen, std::int64_t{960});
  QCOMPARE(*s->pid, std::int64_t{1234});
  QCOMPARE(s->pid_start_time, std::uint64_t{99});
  QVERIFY(s->has_config);
  QCOMPARE(s->preset, std::string("demo"));
  QCOMPARE(*s->config_epochs, std::int64_t{7});
  QCOMPARE(*s->config_batch_size, std::int64_t{32});

  const auto step = parse(R"({"v":1,"type":"step","epoch":3,"iteration":25,"iterations":100,"step":225,"images_seen":7200,)"
                          R"("loss_d":1.25,"loss_g":2.5,"d_x":0.75,"d_g_z1":0.25,"d_g_z2":0.125,"images_per_s":80.5,)"
                          R"("data_wait_fraction":0.5})");
  const auto* st = std::get_if<events::Step>(&step);
  QVERIFY(st);
  QCOMPARE(*st->epoch, std::int64_t{3});
  QCOMPARE(*st->iteration, std::int64_t{25});
  QCOMPARE(*st->iterations, std::int64_t{100});
  QCOMPARE(*st->step, std::int64_t{225});
  QCOMPARE(*st->images_seen, std::int64_t{7200});
  QCOMPARE(st->loss_d, 1.25);
  QCOMPARE(st->loss_g, 2.5);
  QCOMPARE(st->d_x, 0.75);
  QCOMPARE(st->d_g_z1, 0.25);
  QCOMPARE(st->d_g_z2, 0.125);
  QCOMPARE(st->images_per_s, 80.5);
  QCOMPARE(st->data_wait_fraction, 0.5);

  const auto imported = parse(R"({"type":"imported_losses","first_step":1,"steps":3,"total_steps":3,"epochs":1,)"
                              R"("images_per_step":64,"loss_d":[1,null,3],"loss_g":[4,5,6]})");
  const auto* im = std::get_if<events::ImportedLosses>(&imported);
  QVERIFY(im);
  QCOMPARE(im->first_step, 1.0);
  QCOMPARE(im->images_per_step, 64.0);
  QVERIFY(im->has_loss_d && im->has_loss_g);
  QCOMPARE(im->loss_d.size(), std::size_t{3});
  QVERIFY(std::isnan(im->loss_d[1]));
  QCOMPARE(im->loss_g[2], 6.0);

  const auto end = parse(R"({"type":"epoch_end","epoch":1,"epochs":5,"step":10,"images_seen":320,"mean_loss_d":1.5,"mean_loss_g":2.5,"seconds":12.5})");
  const auto* e = std::get_if<events::EpochEnd>(&end);
  QVERIFY(e);
  QCOMPARE(*e->epochs, std::int64_t{5});
  QCOMPARE(e->mean_loss_g, 2.5);
  QCOMPARE(e->seconds, 12.5);

  const auto samples = parse(R"({"type":"samples","path":"samples/step-0000000010.png","step":10,"epoch":1,"images_seen":320})");
  const auto* sa = std::get_if<events::Samples>(&samples);
  QVERIFY(sa);
  QCOMPARE(sa->path, std::string("samples/step-0000000010.png"));
  QCOMPARE(*sa->images_seen, std::int64_t{320});

  const auto parzen = parse(R"({"type":"parzen","epoch":2,"step":20,"images_seen":640,"sigma":0.2,"mean_ll":-710.5,"stderr":4.25})");
  const auto* pa = std::get_if<events::Parzen>(&parzen);
  QVERIFY(pa);
  QCOMPARE(pa->sigma, 0.2);
  QCOMPARE(pa->mean_ll, -710.5);
  QCOMPARE(pa->standard_error, 4.25);

  const auto system = parse(R"({"type":"system","seconds":5,"cpu_percent":150,"cores":2,"rss_bytes":1000,)"
                            R"("host_memory_available_bytes":3000,"host_memory_total_bytes":8000,"loader_bytes_per_s":5e6,)"
                            R"("gpu":{"index":0,"utilization_percent":90,"memory_used_bytes":5,"memory_total_bytes":10,"power_w":250}})");
  const auto* sy = std::get_if<events::System>(&system);
  QVERIFY(sy);
  QCOMPARE(sy->cpu_percent, 150.0);
  QCOMPARE(sy->loader_bytes_per_s, 5e6);
  QVERIFY(sy->has_gpu);
  QCOMPARE(sy->gpu_power_w, 250.0);
  QCOMPARE(sy->gpu_memory_total_bytes, 10.0);

  const auto checkpoint = parse(R"({"type":"checkpoint","path":"checkpoints/step-0000000010.pt","step":10,"epoch":1,"images_seen":320})");
  QCOMPARE(std::get<events::Checkpoint>(checkpoint).path, std::string("checkpoints/step-0000000010.pt"));
  const auto warning = parse(R"({"type":"warning","message":"skipped","path":"a.jpg"})");
  QCOMPARE(std::get<events::Warning>(warning).message, std::string("skipped"));
  QCOMPARE(*std::get<events::Warning>(warning).path, std::string("a.jpg"));
  QVERIFY(!std::get<events::Warning>(parse(R"({"type":"warning","message":"m"})")).path);
  QCOMPARE(std::get<events::Error>(parse(R"({"type":"error","message":"out of memory"})")).message, std::string("out of memory"));
  const auto finished = parse(R"({"type":"run_finished","status":"failed","message":"rank 1 died","epoch":3,"step":30})");
  const auto& f = std::get<events::RunFinished>(finished);
  QCOMPARE(f.status, std::string(events::status::kFailed));
  QCOMPARE(f.message, std::string("rank 1 died"));
  QCOMPARE(*f.step, std::int64_t{30});
}

void TestRunEvent::counters_data() {
  QTest::addColumn<QString>("value");
  QTest::addColumn<bool>("present");
  QTest::addColumn<qint64>("expected");
  QTest::newRow("integer") << "42" << true << qint64(42);
  QTest::newRow("negative") << "-7" << true << qint64(-7);
  QTest::newRow("a float is truncated") << "12.9" << true << qint64(12);
  QTest::newRow("int64 max") << "9223372036854775807" << true << qint64(9223372036854775807LL);
  QTest::newRow("past int64 as unsigned") << "9223372036854775808" << false << qint64(0);
  QTest::newRow("a float past int64") << "1e300" << false << qint64(0);
  QTest::newRow("a string") << "\"42\"" << false << qint64(0);
  QTest::newRow("null") << "null" << false << qint64(0);
  QTest::newRow("an object") << "{}" << false << qint64(0);
}

void TestRunEvent::counters() {
  QFETCH(QString, value);
  QFETCH(bool, present);
  QFETCH(qint64, expected);
  const auto event = parse(R"({"type":"checkpoint","step":)" + value.toStdString() + "}");
  const auto& checkpoint = std::get<events::Checkpoint>(event);
  QCOMPARE(checkpoint.step.has_value(), present);
  if (present) QCOMPARE(static_cast<qint64>(*checkpoint.step), expected);
}

void TestRunEvent::wrongTypesAreEmpty() {
  const auto event = parse(R"({"type":"step","epoch":"three","loss_d":"1.5","loss_g":null,"images_per_s":[1]})");
  const auto& step = std::get<events::Step>(event);
  QVERIFY(!step.epoch);
  QVERIFY(!step.iterations);
  QVERIFY(std::isnan(step.loss_d));
  QVERIFY(std::isnan(step.loss_g));
  QVERIFY(std::isnan(step.images_per_s));
  QVERIFY(std::isnan(step.d_x));  // absent
  const auto started = parse(R"({"type":"run_started","device":7,"config":"demo","pid_start_time":-5})");
  const auto& s = std::get<events::RunStarted>(started);
  QCOMPARE(s.device, std::string());
  QVERIFY(!s.has_config);
  QCOMPARE(s.pid_start_time, std::uint64_t{0});
  const auto system = parse(R"({"type":"system","gpu":"none"})");
  QVERIFY(!std::get<events::System>(system).has_gpu);
  QVERIFY(std::isnan(std::get<events::System>(system).gpu_utilization_percent));
  const auto imported = parse(R"({"type":"imported_losses","loss_d":"x"})");
  QVERIFY(!std::get<events::ImportedLosses>(imported).has_loss_d);
}

void TestRunEvent::unknownTypeAndFieldsSurvive() {
  EventStreamReader reader;
  const auto read = reader.feed(R"({"v":1,"type":"gradient_norms","time":3,"layers":[1,2]})" "\n"
                                  R"({"v":1,"type":"step","step":4,"future_field":{"x":1}})" "\n");
  QCOMPARE(read.size(), std::size_t{2});
  QVERIFY(std::holds_alternative<std::monostate>(read[0].event));
  QCOMPARE(read[0].type, std::string("gradient_norms"));
  QCOMPARE(read[0].body["layers"].size(), std::size_t{2});
  QVERIFY(std::holds_alternative<events::Step>(read[1].event));
  QCOMPARE(read[1].body["future_field"]["x"].get<int>(), 1);
  QCOMPARE(reader.malformedLines(), std::int64_t{0});
}

void TestRunEvent::nestingIsBounded_data() {
  QTest::addColumn<int>("depth");  // of the whole line, its own object counted
  QTest::addColumn<bool>("event");
  QTest::newRow("flat") << 1 << true;
  QTest::newRow("at the bound") << int(EventStreamReader::kMaxEventDepth) << true;
  QTest::newRow("one past it") << int(EventStreamReader::kMaxEventDepth) + 1 << false;
  QTest::newRow("100,000 deep") << 100000 << false;
}

void TestRunEvent::nestingIsBounded() {
  QFETCH(int, depth);
  QFETCH(bool, event);
  const auto inner = static_cast<std::size_t>(depth - 1);
  const std::string line = R"({"type":"warning","message":"m","x":)" + std::string(inner, '[') + "0" + std::string(inner, ']') + "}\n";
  EventStreamReader reader;
  const auto read = reader.feed(depth == 1 ? std::string(R"({"type":"warning","message":"m"})" "\n") : line);
  QCOMPARE(read.size(), std::size_t(event ? 1 : 0));
  QCOMPARE(reader.malformedLines(), std::int64_t(event ? 0 : 1));
  if (!event) QVERIFY(reader.malformedSamples().front().find("nested deeper") != std::string::npos);
}

void TestRunEvent::fractionalEpoch_data() {
  QTest::addColumn<QString>("fields");
  QTest::addColumn<double>("iterations_fallback");
  QTest::addColumn<double>("expected");
  QTest::newRow("a quarter into the third") << R"("epoch":3,"iteration":25,"iterations":100)" << 0.0 << 2.25;
  QTest::newRow("the last step of the first") << R"("epoch":1,"iteration":10,"iterations":10)" << 0.0 << 1.0;
  QTest::newRow("iterations from an earlier step") << R"("epoch":2,"iteration":5)" << 10.0 << 1.5;
  QTest::newRow("no iterations at all") << R"("epoch":2,"iteration":5)" << 0.0 << 1.0;
  QTest::newRow("zero iterations") << R"("epoch":2,"iteration":5,"iterations":0)" << 0.0 << 1.0;
  QTest::newRow("no epoch: the first") << R"("iteration":5,"iterations":10)" << 0.0 << 0.5;
}

void TestRunEvent::fractionalEpoch() {
  QFETCH(QString, fields);
  QFETCH(double, iterations_fallback);
  QFETCH(double, expected);
  const auto event = parse(R"({"type":"step",)" + fields.toStdString() + "}");
  QCOMPARE(events::fractionalEpoch(std::get<events::Step>(event), iterations_fallback), expected);
}

void TestRunEvent::importedPoint_data() {
  QTest::addColumn<int>("k");
  QTest::addColumn<double>("step");
  QTest::addColumn<double>("images_seen");
  QTest::addColumn<double>("epoch");
  // first_step 11 of 40 steps over 4 epochs, 64 images a step
  QTest::newRow("the first pair") << 0 << 11.0 << 704.0 << 1.1;
  QTest::newRow("the tenth pair") << 9 << 20.0 << 1280.0 << 2.0;
}

void TestRunEvent::importedPoint() {
  QFETCH(int, k);
  QFETCH(double, step);
  QFETCH(double, images_seen);
  QFETCH(double, epoch);
  const auto event = parse(R"({"type":"imported_losses","first_step":11,"total_steps":40,"epochs":4,"images_per_step":64,"loss_d":[]})");
  const auto point = events::importedPoint(std::get<events::ImportedLosses>(event), static_cast<std::size_t>(k));
  QCOMPARE(point.step, step);
  QCOMPARE(point.images_seen, images_seen);
  QCOMPARE(point.epoch, epoch);
}

void TestRunEvent::dataWaitWindow() {
  events::DataWaitWindow window(4, 3);
  window.add(0.5);
  window.add(std::nan(""));  // ignored
  window.add(0.1);
  QVERIFY(!window.share());
  window.add(0.3);
  QCOMPARE(*window.share(), 0.3);
  window.add(0.9);
  window.add(0.9);  // replaces the oldest (0.5): 0.1, 0.3, 0.9, 0.9
  QCOMPARE(*window.share(), 0.55);
  window.clear();
  QVERIFY(!window.share());
}

STREETGAN_TEST_GUILESS_MAIN(TestRunEvent)
#include "tst_run_event.moc"
