// The accelerator-ready training step on the test device (STREETGAN_TEST_DEVICE, default cpu):
// MultiTensorAdamW against torch::optim::AdamW, bf16 autocast really on, the step's statistics
// kept on the device and copied in one transfer (StepStatsQueue), and DeviceBatchFeeder's uint8 →
// [-1, 1] conversion with its seeded noise.
#include "core/config/train_config.h"
#include "core/train/compute_device.h"
#include "core/train/dcgan_step.h"
#include "core/train/device_batch_feeder.h"
#include "core/train/multi_tensor_adamw.h"
#include "core/train/step_stats_queue.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"
#include "tests/support/tiny_train_config.h"

#include <QtTest>
#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using streetgan::test::testDevice;
using streetgan::test::tinyTrainConfig;
using streetgan::test::testTolerance;

namespace {

double maxRelativeDifference(const torch::Tensor& a, const torch::Tensor& b) {
  const auto da = a.detach().cpu().to(torch::kFloat64), db = b.detach().cpu().to(torch::kFloat64);
  return ((da - db).abs() / (db.abs() + 1e-12)).max().item<double>();
}

}  // namespace

class TestTrainingStep : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { setComputeThreads(streetgan::test::testThreads()); }
  void multiTensorAdamWMatchesTorchAdamW_data();
  void multiTensorAdamWMatchesTorchAdamW();
  void adamWStateLoadsIntoTorchAdamW();
  void bf16AutocastIsReallyOn();
  void bf16StepsGiveFiniteLosses();
  void statisticsStayOnTheDeviceUntilFlushed();
  void flushPolicy_data();
  void flushPolicy();
  void asynchronousFlushSharesTheWindow();
  void feederConvertsBytesAndAddsSeededNoise();
};

void TestTrainingStep::multiTensorAdamWMatchesTorchAdamW_data() {
  QTest::addColumn<double>("weight_decay");
  QTest::addColumn<int>("steps");
  QTest::newRow("weight decay 0.05, 7 steps") << 0.05 << 7;
  QTest::newRow("no weight decay, 3 steps") << 0.0 << 3;
}

void TestTrainingStep::multiTensorAdamWMatchesTorchAdamW() {
  QFETCH(double, weight_decay);
  QFETCH(int, steps);
  torch::manual_seed(11);
  const auto options = torch::TensorOptions().device(testDevice());
  std::vector<torch::Tensor> ours, theirs;
  for (auto shape : std::vector<std::vector<std::int64_t>>{{16, 8, 4, 4}, {8}, {3, 5}}) {
    auto p = torch::randn(shape, options);
    ours.push_back(p.clone().requires_grad_());
    theirs.push_back(p.clone().requires_grad_());
  }
  const auto adam = torch::optim::AdamWOptions(2e-4).betas({0.5, 0.999}).weight_decay(weight_decay);
  MultiTensorAdamW multi(ours, adam);
  torch::optim::AdamW reference(theirs, adam);
  for (int step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const auto grad = torch::randn_like(ours[i]);
      ours[i].mutable_grad() = grad.clone();
      theirs[i].mutable_grad() = grad.clone();
    }
    multi.step();
    reference.step();
  }
  // The fused kernel (LibTorch 2.x) orders its arithmetic differently: float tolerance. The
  // _foreach_ path runs torch::optim::AdamW's own operations.
  const double tolerance = multi.usesFusedKernel() ? 1e-5 : testTolerance();
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const double difference = maxRelativeDifference(ours[i], theirs[i]);
    QVERIFY2(difference <= tolerance, qPrintable(QString("parameter %1 differs by %2 (relative)").arg(i).arg(difference)));
  }
}

void TestTrainingStep::adamWStateLoadsIntoTorchAdamW() {
  torch::manual_seed(12);
  auto p = torch::randn({6, 4}, torch::TensorOptions().device(testDevice())).requires_grad_();
  MultiTensorAdamW multi({p}, torch::optim::AdamWOptions(1e-3));
  for (int i = 0; i < 4; ++i) {
    p.mutable_grad() = torch::randn_like(p);
    multi.step();
  }
  std::stringstream bytes;
  {
    torch::serialize::OutputArchive archive;
    multi.save(archive);
    archive.save_to(bytes);
  }
  auto q = p.detach().clone().requires_grad_();
  torch::optim::AdamW reference({q}, torch::optim::AdamWOptions(1e-3));
  torch::serialize::InputArchive archive;
  archive.load_from(bytes, testDevice());
  reference.load(archive);
  QCOMPARE(reference.state().size(), std::size_t(1));
  const auto& state = static_cast<const torch::optim::AdamWParamState&>(*reference.state().begin()->second);
  QCOMPARE(state.step(), std::int64_t(4));
  QVERIFY(state.exp_avg().abs().sum().item<double>() > 0);
}

void TestTrainingStep::bf16AutocastIsReallyOn() {
  const auto options = torch::TensorOptions().device(testDevice());
  const auto a = torch::randn({8, 8}, options), b = torch::randn({8, 8}, options);
  {
    AutocastScope autocast(Precision::Bf16, testDevice());
    QCOMPARE(torch::mm(a, b).scalar_type(), torch::kBFloat16);
  }
  QCOMPARE(torch::mm(a, b).scalar_type(), torch::kFloat32);
  {
    AutocastScope off(Precision::Fp32, testDevice());
    QCOMPARE(torch::mm(a, b).scalar_type(), torch::kFloat32);
  }
}

void TestTrainingStep::bf16StepsGiveFiniteLosses() {
  const TrainConfig config = tinyTrainConfig();
  DcganStep model(config, testDevice(), Precision::Bf16);
  QVERIFY(!model.scaler().enabled());
  const auto options = torch::TensorOptions().device(testDevice());
  torch::manual_seed(2);
  const auto real = torch::rand({8, 3, 64, 64}, options) * 2 - 1;
  for (int i = 0; i < 3; ++i) {
    const StepStats stats = model.step(real, torch::randn({8, config.nz, 1, 1}, options));
    for (double value : {stats.loss_d, stats.loss_g, stats.d_x, stats.d_g_z1, stats.d_g_z2})
      QVERIFY2(std::isfinite(value), qPrintable(QString("step %1: a statistic is not finite").arg(i)));
    QVERIFY(!stats.skipped);
    QCOMPARE(stats.loss_scale, 1.0);
  }
  for (const auto& p : model.generator()->parameters()) QCOMPARE(p.scalar_type(), torch::kFloat32);
}

void TestTrainingStep::statisticsStayOnTheDeviceUntilFlushed() {
  const TrainConfig config = tinyTrainConfig();
  DcganStep queued(config, testDevice(), Precision::Fp32), direct(config, testDevice(), Precision::Fp32);
  const auto options = torch::TensorOptions().device(testDevice());
  torch::manual_seed(4);
  StepStatsQueue queue(false, 3);
  std::vector<StepStats> expected;
  for (int i = 0; i < 3; ++i) {
    const auto real = torch::rand({8, 3, 64, 64}, options) * 2 - 1;
    const auto noise = torch::randn({8, config.nz, 1, 1}, options);
    const torch::Tensor values = queued.trainStep(real, noise);
    QCOMPARE(values.device(), testDevice());
    QCOMPARE(values.numel(), std::int64_t(StepStats::kValues));
    PendingStep info;
    info.step = i + 1;
    info.images = 8;
    queue.push(info, values);
    expected.push_back(direct.step(real, noise));
  }
  QVERIFY(queue.shouldFlush(StepStatsQueue::Clock::now()));
  const auto flushed = queue.flush();
  QCOMPARE(queue.transfers(), std::int64_t(1));
  QCOMPARE(flushed.size(), std::size_t(3));
  for (std::size_t i = 0; i < flushed.size(); ++i) {
    QCOMPARE(flushed[i].info.step, std::int64_t(i + 1));
    // Deferring the copy changes no value: the same numbers, to the bit, as reading each step.
    QCOMPARE(flushed[i].stats.loss_d, expected[i].loss_d);
    QCOMPARE(flushed[i].stats.loss_g, expected[i].loss_g);
    QCOMPARE(flushed[i].stats.d_x, expected[i].d_x);
    QCOMPARE(flushed[i].stats.d_g_z1, expected[i].d_g_z1);
    QCOMPARE(flushed[i].stats.d_g_z2, expected[i].d_g_z2);
  }
  QCOMPARE(queue.size(), std::size_t(0));
}

void TestTrainingStep::flushPolicy_data() {
  QTest::addColumn<bool>("synchronous");
  QTest::addColumn<int>("every");
  QTest::addColumn<int>("pushed");
  QTest::addColumn<double>("seconds_since_flush");
  QTest::addColumn<bool>("flush");
  QTest::newRow("cpu auto: every step") << true << 0 << 1 << 0.0 << true;
  QTest::newRow("async auto: not before a second") << false << 0 << 50 << 0.2 << false;
  QTest::newRow("async auto: after a second") << false << 0 << 2 << 1.5 << true;
  QTest::newRow("async auto: 1000 pending") << false << 0 << 1000 << 0.0 << true;
  QTest::newRow("every 4: 3 pending") << false << 4 << 3 << 5.0 << false;
  QTest::newRow("every 4: 4 pending") << false << 4 << 4 << 0.0 << true;
  QTest::newRow("cpu, every 4: 3 pending") << true << 4 << 3 << 0.0 << false;
  QTest::newRow("nothing pending") << false << 0 << 0 << 9.0 << false;
}

void TestTrainingStep::flushPolicy() {
  QFETCH(bool, synchronous);
  QFETCH(int, every);
  QFETCH(int, pushed);
  QFETCH(double, seconds_since_flush);
  QFETCH(bool, flush);
  StepStatsQueue queue(synchronous, every);
  const auto start = StepStatsQueue::Clock::now();
  for (int i = 0; i < pushed; ++i) queue.push({}, torch::zeros({StepStats::kValues}, torch::kFloat64));
  const auto later = start + std::chrono::duration_cast<StepStatsQueue::Clock::duration>(
                                 std::chrono::duration<double>(seconds_since_flush));
  QCOMPARE(queue.shouldFlush(later), flush);
}

void TestTrainingStep::asynchronousFlushSharesTheWindow() {
  StepStatsQueue queue(false, 0);
  PendingStep small, large;
  small.images = 8;
  small.host_seconds = 0.001;  // only the time to queue the kernels
  large.images = 24;
  large.host_seconds = 0.001;
  queue.push(small, torch::zeros({StepStats::kValues}, torch::kFloat64));
  queue.push(large, torch::zeros({StepStats::kValues}, torch::kFloat64));
  QTest::qWait(200);
  const auto flushed = queue.flush();
  const double window = flushed[0].seconds + flushed[1].seconds;
  QVERIFY2(window >= 0.19, qPrintable(QString("window %1 s").arg(window)));
  QVERIFY(std::abs(flushed[1].seconds - 3 * flushed[0].seconds) < 1e-9);
  // On a synchronous device each step keeps its own measured time.
  StepStatsQueue cpu(true, 0);
  cpu.push(small, torch::zeros({StepStats::kValues}, torch::kFloat64));
  QCOMPARE(cpu.flush()[0].seconds, 0.001);
}

void TestTrainingStep::feederConvertsBytesAndAddsSeededNoise() {
  PrefetchedBatch batch;
  batch.epoch = 2;
  batch.batch_index = 5;
  batch.batch.images = torch::tensor({0, 51, 255, 128}, torch::kUInt8).repeat({2 * 3 * 2 * 2}).view({2, 3, 4, 4});
  // No noise: exactly x/255·2 − 1.
  DeviceBatchFeeder plain(testDevice(), 0.0, 9);
  plain.stage(batch);
  QVERIFY(plain.hasStaged());
  const DeviceBatch converted = plain.take();
  QVERIFY(!plain.hasStaged());
  QCOMPARE(converted.epoch, std::int64_t(2));
  QCOMPARE(converted.batch_index, std::int64_t(5));
  QCOMPARE(converted.images.device(), testDevice());
  QCOMPARE(converted.images.scalar_type(), torch::kFloat32);
  const auto expected = (batch.batch.images.to(torch::kFloat32) * (1.0f / 255.0f)) * 2.0f - 1.0f;
  QVERIFY(torch::allclose(converted.images.cpu(), expected, 1e-6, 1e-6));
  QCOMPARE(converted.images.min().item<float>(), -1.0f);
  QCOMPARE(converted.images.max().item<float>(), 1.0f);

  // With noise: its spread is 2·std in [-1, 1] units, the same for the same (seed, epoch, batch).
  DeviceBatchFeeder noisy(testDevice(), 0.05, 9), again(testDevice(), 0.05, 9), other_seed(testDevice(), 0.05, 10);
  batch.batch.images = torch::full({64, 3, 16, 16}, 128, torch::kUInt8);
  auto noiseOf = [&](DeviceBatchFeeder& feeder, std::int64_t batch_index) {
    PrefetchedBatch copy = batch;
    copy.batch_index = batch_index;
    feeder.stage(copy);
    return (feeder.take().images.cpu() - (128.0f / 255.0f * 2.0f - 1.0f));
  };
  const auto first = noiseOf(noisy, 5);
  QVERIFY(std::abs(first.std().item<double>() - 0.1) < 0.005);
  QVERIFY(std::abs(first.mean().item<double>()) < 0.005);
  QVERIFY(torch::equal(first, noiseOf(again, 5)));
  QVERIFY(!torch::equal(first, noiseOf(noisy, 6)));
  QVERIFY(!torch::equal(first, noiseOf(other_seed, 5)));
  // An empty batch (every file skipped) stays empty.
  batch.batch.images = torch::empty({0, 3, 16, 16}, torch::kUInt8);
  noisy.stage(batch);
  QCOMPARE(noisy.take().images.size(0), std::int64_t(0));
}

STREETGAN_TEST_GUILESS_MAIN(TestTrainingStep)
#include "tst_training_step.moc"
