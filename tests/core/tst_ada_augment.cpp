// ADA (core/train/ada_augment.h, augment.ada_*) against tests/core/reference/ada_augment_reference.py,
// written from the paper with torch's own grid_sample, given the same draws: each of the twelve
// operations alone and the whole bgc pipeline, the images and their gradient to 1e-5 (float64), on
// a square and a non-square image, RGB and grey. Then: differentiable twice (R1 through the
// augmentation), p = 0 leaves the images as they are, and p's update over a scripted r_t sequence
// (DiscriminatorAugment::adjust on the device against the paper's rule on the host).
#include "tests/support/python_reference.h"

#include "core/config/train_config.h"
#include "core/train/ada_augment.h"
#include "core/train/discriminator_augment.h"
#include "tests/support/test_suite.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using namespace streetgan::test;

namespace {

// One operation by its reference name, or a pipeline (blit, geom, color, bg, bgc).
AdaOps opsOf(const QString& names) {
  AdaOps ops;
  for (const QString& name : names.split(',')) {
    const AdaOps pipeline = adaOpsNamed(name.toStdString());
    if (pipeline.anyGeometric() || pipeline.anyColor()) return pipeline;
    bool* flags[] = {&ops.xflip, &ops.rotate90, &ops.xint, &ops.scale, &ops.rotate, &ops.aniso, &ops.xfrac,
                     &ops.brightness, &ops.contrast, &ops.lumaflip, &ops.hue, &ops.saturation};
    const char* flag_names[] = {"xflip", "rotate90", "xint", "scale", "rotate", "aniso", "xfrac",
                                "brightness", "contrast", "lumaflip", "hue", "saturation"};
    for (int i = 0; i < 12; ++i)
      if (name == flag_names[i]) *flags[i] = true;
  }
  return ops;
}

}  // namespace

class TestAdaAugment : public QObject {
  Q_OBJECT
private slots:
  void againstTheReference_data();
  void againstTheReference();
  void differentiableTwice();
  void probabilityZeroChangesNothing();
  void probabilityFollowsTheRule();
};

void TestAdaAugment::againstTheReference_data() {
  QTest::addColumn<QString>("ops");
  QTest::addColumn<double>("p");
  QTest::addColumn<int>("channels");
  QTest::addColumn<int>("height");
  QTest::addColumn<int>("width");
  for (const char* op : {"xflip", "rotate90", "xint", "scale", "rotate", "aniso", "xfrac", "brightness", "contrast",
                         "lumaflip", "hue", "saturation"})
    QTest::newRow(op) << QString(op) << 0.7 << 3 << 16 << 16;
  QTest::newRow("bgc, p 0.5") << "xflip,rotate90,xint,scale,rotate,aniso,xfrac,brightness,contrast,lumaflip,hue,saturation"
                              << 0.5 << 3 << 16 << 16;
  QTest::newRow("bgc, p 1, 12x20") << "xflip,rotate90,xint,scale,rotate,aniso,xfrac,brightness,contrast,lumaflip,hue,"
                                      "saturation" << 1.0 << 3 << 12 << 20;
  QTest::newRow("color, grey images") << "brightness,contrast,lumaflip,hue,saturation" << 0.8 << 1 << 16 << 16;
}

void TestAdaAugment::againstTheReference() {
  QFETCH(QString, ops);
  QFETCH(double, p);
  QFETCH(int, channels);
  QFETCH(int, height);
  QFETCH(int, width);
  auto rng = at::make_generator<at::CPUGeneratorImpl>(20);  // flips, quarter turns and luma flips among the 8
  const AdaDraws draws = drawAda(8, rng, torch::kCPU);
  torch::manual_seed(8);
  const torch::Tensor x0 = torch::rand({8, channels, height, width}, torch::kFloat64) * 2 - 1;
  const torch::Tensor g = torch::randn(x0.sizes(), torch::kFloat64);
  QTemporaryDir dir;
  QVERIFY(writeNpy(dir.filePath("x.npy"), x0) && writeNpy(dir.filePath("g.npy"), g));
  QVERIFY(writeNpy(dir.filePath("uniform.npy"), draws.uniform) && writeNpy(dir.filePath("normal.npy"), draws.normal));
  const auto reference = runPythonReference("ada_augment_reference.py", {dir.path(), ops, QString::number(p, 'g', 17)});
  QVERIFY2(reference.ok, qPrintable(reference.error));

  torch::Tensor x = x0.clone().requires_grad_(true);
  const torch::Tensor y = applyAda(x, opsOf(ops), draws, torch::tensor(p, torch::kFloat32));
  (y * g).sum().backward();
  const double y_error = largestDifferenceFrom(y, reference.json.value("y").toArray());
  const double grad_error = largestDifferenceFrom(x.grad(), reference.json.value("grad_x").toArray());
  QVERIFY2(y_error < 1e-5, qPrintable(QString("images: %1").arg(y_error)));
  QVERIFY2(grad_error < 1e-5, qPrintable(QString("gradient: %1").arg(grad_error)));
  QVERIFY(!torch::allclose(y, x0));  // some image was transformed
}

// R1 with ADA differentiates D's gradient by the images before augmentation: the transform's own
// backward must be differentiable (LibTorch's grid sampler's is not).
void TestAdaAugment::differentiableTwice() {
  auto rng = at::make_generator<at::CPUGeneratorImpl>(2);
  const AdaDraws draws = drawAda(3, rng, torch::kCPU);
  torch::Tensor x = (torch::rand({3, 3, 16, 16}, torch::kFloat64) * 2 - 1).requires_grad_(true);
  const torch::Tensor y = applyAda(x, adaOpsNamed("bgc"), draws, torch::tensor(1.0f));
  const torch::Tensor score = (y.pow(3) * torch::linspace(-1, 1, y.numel(), torch::kFloat64).view(y.sizes())).sum();
  const torch::Tensor grad = torch::autograd::grad({score}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  const torch::Tensor penalty = grad.square().sum();
  penalty.backward();
  QVERIFY(x.grad().defined());
  QVERIFY(x.grad().abs().sum().item<double>() > 0);
  QVERIFY(torch::isfinite(x.grad()).all().item<bool>());
}

void TestAdaAugment::probabilityZeroChangesNothing() {
  auto rng = at::make_generator<at::CPUGeneratorImpl>(4);
  const AdaDraws draws = drawAda(5, rng, torch::kCPU);
  const torch::Tensor x = torch::rand({5, 3, 32, 32}) * 2 - 1;
  const torch::Tensor y = applyAda(x, adaOpsNamed("bgc"), draws, torch::tensor(0.0f));
  QVERIFY2((y - x).abs().max().item<double>() < 1e-5, "p = 0 moved pixels");
}

// r_t above the target raises p by 4 steps' images over ada_kimg thousand, below it lowers p,
// never under 0; only every 4th step moves it, and the state carries the interval across a save.
void TestAdaAugment::probabilityFollowsTheRule() {
  TrainConfig config;
  config.batch_size = 32;
  config.augment.ada_target = 0.6;
  config.augment.ada_kimg = 0.5;  // 500 images: 0.256 per interval of 4 × 32
  DiscriminatorAugment augment(config, torch::kCPU);
  QVERIFY(augment.adaptive() && augment.enabled());
  const double rts[] = {0.9, 0.8, 0.7, 0.9, 0.95, 0.9, 0.7, 0.9, 0.1, 0.2, 0.3, 0.2, 0.0, 0.0, 0.0, 0.0,
                        -1.0, -1.0, -1.0, -1.0, 0.8, 0.9, 0.8, 0.7, 0.7, 0.7};
  double expected = 0, sum = 0;
  int in_interval = 0, step = 0;
  torch::Tensor saved;
  for (double rt : rts) {
    augment.adjust(torch::tensor(rt, torch::kFloat64));
    sum += rt;
    if (++in_interval == DiscriminatorAugment::kAdaInterval) {
      expected = DiscriminatorAugment::nextProbability(expected, sum / 4, 0.6, 0.5, 4 * 32);
      sum = 0;
      in_interval = 0;
    }
    QVERIFY2(std::fabs(augment.probability().item<double>() - expected) < 1e-6,
             qPrintable(QString("step %1: p %2, the rule %3").arg(step).arg(augment.probability().item<double>()).arg(expected)));
    if (++step == 22) saved = augment.adaState();
  }
  QVERIFY(std::fabs(expected - 0.256) < 1e-12);  // up, up, down, down, held at 0, up; two steps of the next
  DiscriminatorAugment resumed(config, torch::kCPU);
  resumed.restoreAdaState(saved);
  for (double rt : {0.8, 0.7, 0.7, 0.7}) resumed.adjust(torch::tensor(rt, torch::kFloat64));
  QVERIFY(std::fabs(resumed.probability().item<double>() - augment.probability().item<double>()) < 1e-7);
  QCOMPARE(DiscriminatorAugment::nextProbability(0.1, 0.9, 0.6, 500, 256), 0.1 + 256 / 500000.0);
  QCOMPARE(DiscriminatorAugment::nextProbability(0.0001, 0.2, 0.6, 500, 256), 0.0);
  QCOMPARE(DiscriminatorAugment::nextProbability(0.9, 0.8, 0.6, 0.001, 256), 1.0);  // never above 1
  // On the device too: r_t far above the target for long holds p at 1.
  for (int i = 0; i < 40; ++i) augment.adjust(torch::tensor(1.0, torch::kFloat64));
  QCOMPARE(augment.probability().item<double>(), 1.0);
  bool threw = false;
  try {
    resumed.restoreAdaState(torch::tensor({-1.0, 0.0, 0.0}, torch::kFloat64));
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  QVERIFY(threw);
  for (const auto& state : {torch::tensor({1.5, 0.0, 0.0}, torch::kFloat64), torch::tensor({0.5, 0.0, 2.5}, torch::kFloat64),
                            torch::tensor({0.5, std::nan(""), 0.0}, torch::kFloat64)}) {
    threw = false;
    try {
      resumed.restoreAdaState(state);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    QVERIFY(threw);
  }
}

STREETGAN_TEST_GUILESS_MAIN(TestAdaAugment)
#include "tst_ada_augment.moc"
