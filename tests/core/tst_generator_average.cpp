// G's moving average (core/train/generator_average.h, ema.half_life_images): β against the
// StyleGAN2-ADA formula with and without its ramp-up, the average (of a float64 G) against a hand
// loop to 1e-7 over steps whose G changes, BatchNorm's running statistics averaged and its batch count
// copied, and DcganStep keeping the average only when the config asks for one.
#include "core/train/dcgan_step.h"
#include "core/train/generator_average.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using streetgan::test::testDevice;

namespace {

GeneratorOptions smallGeneratorOptions() {
  GeneratorOptions options;
  options.nz = 8;
  options.ngf = 4;
  return options;
}

// G's tensors (parameters, then buffers) as float64 copies on the CPU.
std::vector<torch::Tensor> averageTestTensors(Generator& g) {
  std::vector<torch::Tensor> all;
  for (const auto& p : g->parameters()) all.push_back(p.detach().to(torch::kCPU, torch::kFloat64).clone());
  for (const auto& b : g->buffers()) all.push_back(b.detach().to(torch::kCPU, torch::kFloat64).clone());
  return all;
}

// A training step's worth of change to every floating tensor of G, and one more batch counted.
void changeGenerator(Generator& g, int step) {
  torch::NoGradGuard no_grad;
  for (auto& p : g->parameters()) p.add_(torch::randn_like(p) * 0.1);
  for (auto& b : g->buffers()) {
    if (b.is_floating_point()) b.add_(torch::rand_like(b) * 0.1 + 0.01 * step);
    else b.add_(1);
  }
}

}  // namespace

class TestGeneratorAverage : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { torch::set_num_threads(2); }
  void decay_data();
  void decay();
  void followsAHandLoop_data();
  void followsAHandLoop();
  void startsAsACopyAndNeverTrains();
  void keptOnlyWhenTheConfigAsks();
};

void TestGeneratorAverage::decay_data() {
  QTest::addColumn<double>("half_life");
  QTest::addColumn<double>("rampup");
  QTest::addColumn<qlonglong>("images_before");
  QTest::addColumn<qlonglong>("step_images");
  QTest::addColumn<double>("beta");
  // clang-format off
  // 0.5^(step / half-life), the half-life at most rampup × images before the step.
  QTest::newRow("StyleGAN2's 10k images, batch 64")       << 1e4 << 0.0  << 0LL       << 64LL  << 0.9955736831881946;
  QTest::newRow("no ramp-up: the images trained do not matter") << 1e4 << 0.0 << 5000LL << 64LL << 0.9955736831881946;
  QTest::newRow("ramp-up, first step: a copy")            << 1e4 << 0.05 << 0LL       << 64LL  << 0.0;
  QTest::newRow("ramp-up, 100k images: half-life 5000")   << 1e4 << 0.05 << 100000LL  << 128LL << 0.982411939933184;
  QTest::newRow("ramp-up, 1M images: the half-life itself") << 1e4 << 0.05 << 1000000LL << 128LL << 0.9911669586569076;
  QTest::newRow("one image, half-life 500")               << 500.0 << 0.0 << 0LL      << 1LL   << 0.9986146661010289;
  // clang-format on
}

void TestGeneratorAverage::decay() {
  QFETCH(double, half_life);
  QFETCH(double, rampup);
  QFETCH(qlonglong, images_before);
  QFETCH(qlonglong, step_images);
  QFETCH(double, beta);
  EmaConfig config;
  config.half_life_images = half_life;
  config.rampup = rampup;
  QVERIFY(std::fabs(GeneratorAverage::decay(config, images_before, step_images) - beta) < 1e-15);
}

void TestGeneratorAverage::followsAHandLoop_data() {
  QTest::addColumn<double>("rampup");
  QTest::newRow("no ramp-up") << 0.0;
  QTest::newRow("StyleGAN2-ADA's ramp-up 0.05") << 0.05;
}

void TestGeneratorAverage::followsAHandLoop() {
  QFETCH(double, rampup);
  torch::manual_seed(3);
  EmaConfig config;
  config.half_life_images = 100;
  config.rampup = rampup;
  // In float64, so the comparison sees the formula, not float32's rounding (6e-8 at 1).
  Generator g(smallGeneratorOptions());
  g->to(testDevice(), torch::kFloat64);
  GeneratorAverage average(config, g);
  std::vector<torch::Tensor> hand = averageTestTensors(g);
  const std::int64_t batch = 16;
  for (int step = 0; step < 6; ++step) {
    changeGenerator(g, step);
    const std::int64_t before = step * batch;
    average.update(g, before, batch);
    // The hand loop: each tensor β·ema + (1 − β)·G in float64, integers copied.
    double half_life = config.half_life_images;
    if (rampup > 0) half_life = std::min(half_life, static_cast<double>(before) * rampup);
    const double beta = std::pow(0.5, static_cast<double>(batch) / std::max(half_life, 1e-8));
    const std::vector<torch::Tensor> now = averageTestTensors(g);
    std::vector<bool> floating;
    for (const auto& p : g->parameters()) floating.push_back(p.is_floating_point());
    for (const auto& b : g->buffers()) floating.push_back(b.is_floating_point());
    for (std::size_t i = 0; i < hand.size(); ++i)
      hand[i] = floating[i] ? beta * hand[i] + (1 - beta) * now[i] : now[i].clone();
    const std::vector<torch::Tensor> ours = averageTestTensors(average.generator());
    for (std::size_t i = 0; i < hand.size(); ++i) {
      const double worst = (ours[i] - hand[i]).abs().max().item<double>();
      QVERIFY2(worst < 1e-7, qPrintable(QString("step %1, tensor %2: %3").arg(step).arg(i).arg(worst)));
    }
  }
  // The average is not G: it lags behind it.
  QVERIFY(!torch::equal(average.generator()->parameters()[0], g->parameters()[0]));
}

void TestGeneratorAverage::startsAsACopyAndNeverTrains() {
  torch::manual_seed(4);
  Generator g(smallGeneratorOptions());
  g->to(testDevice());
  EmaConfig config;
  config.half_life_images = 1000;
  GeneratorAverage average(config, g);
  const auto ours = averageTestTensors(average.generator()), theirs = averageTestTensors(g);
  for (std::size_t i = 0; i < ours.size(); ++i) QVERIFY(torch::equal(ours[i], theirs[i]));
  // Its own tensors, not G's: changing G leaves the average until update().
  changeGenerator(g, 1);
  QVERIFY(torch::equal(averageTestTensors(average.generator())[0], ours[0]));
  for (const auto& p : average.generator()->parameters()) QVERIFY(!p.requires_grad());
  QVERIFY(!average.generator()->is_training());
  average.copyFrom(g);
  QVERIFY(torch::equal(averageTestTensors(average.generator())[0], averageTestTensors(g)[0]));
}

void TestGeneratorAverage::keptOnlyWhenTheConfigAsks() {
  TrainConfig config;
  config.nz = 16, config.ngf = 8, config.ndf = 8, config.batch_size = 8;
  DcganStep plain(config, testDevice(), Precision::Fp32);
  QVERIFY(plain.average() == nullptr);
  QVERIFY(plain.renderingGenerator().get() == plain.generator().get());
  plain.updateAverage(0, 8);  // nothing to move

  config.ema.half_life_images = 50;
  DcganStep model(config, testDevice(), Precision::Fp32);
  QVERIFY(model.average() != nullptr);
  QVERIFY(model.renderingGenerator().get() == model.average()->generator().get());
  const auto real = torch::rand({8, 3, 64, 64}).to(testDevice()) * 2 - 1;
  const auto g_start = model.generator()->parameters()[0].detach().clone();
  model.step(real, torch::randn({8, 16, 1, 1}).to(testDevice()));
  model.updateAverage(0, 8);
  // β = 0.5^(8/50): the average moved 10.5% of the way from G's start to G.
  const torch::Tensor g_now = model.generator()->parameters()[0];
  const torch::Tensor expected = g_start + (1 - std::pow(0.5, 8.0 / 50)) * (g_now - g_start);
  QVERIFY((model.average()->generator()->parameters()[0] - expected).abs().max().item<double>() < 1e-7);
}

STREETGAN_TEST_GUILESS_MAIN(TestGeneratorAverage)
#include "tst_generator_average.moc"
