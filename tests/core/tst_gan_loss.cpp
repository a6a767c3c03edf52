// The losses of config key `loss` (core/train/gan_loss.h) against tests/core/reference/
// gan_loss_reference.py, written from their papers in python3-torch: each loss's value and its
// gradients with respect to D's logits, to 1e-6, on the same logits. Then the step: D's terms
// backpropagated one after the other give the gradient of their sum; each loss trains a few steps
// of the tiny DCGAN to finite figures; lr_d and lr_g reach their own nets' optimizers.
#include "tests/support/python_reference.h"

#include "core/model/discriminator.h"
#include "core/model/weight_init.h"
#include "core/train/dcgan_step.h"
#include "core/train/gan_loss.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"
#include "tests/support/tiny_train_config.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using namespace streetgan::test;

namespace {

constexpr double kTolerance = 1e-6;

// The largest difference between a tensor and a JSON list of numbers (infinity when the sizes differ).
double maxDifference(const torch::Tensor& tensor, const QJsonArray& expected) {
  const torch::Tensor values = tensor.to(torch::kFloat64).contiguous().view(-1);
  if (values.numel() != expected.size()) return INFINITY;
  double worst = 0;
  for (int i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::fabs(values[i].item<double>() - expected[i].toDouble()));
  return worst;
}

// Parameters of both nets, flattened and copied.
torch::Tensor flatParameters(torch::nn::Module& net) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : net.parameters()) parts.push_back(p.detach().to(torch::kCPU).reshape({-1}).clone());
  return torch::cat(parts);
}

}  // namespace

class TestGanLoss : public QObject {
  Q_OBJECT

private slots:
  void againstTheReference_data();
  void againstTheReference();
  void termsSumToTheLoss();
  void penaltiesAgainstTheReference();
  void lazyPenaltiesKeepTheirSchedule();
  void eachLossTrains_data();
  void eachLossTrains();
  void eachNetHasItsLearningRate();
  void criticStepsBeforeEachGeneratorStep();
};

void TestGanLoss::againstTheReference_data() {
  QTest::addColumn<QString>("loss");
  QTest::newRow("bce") << "bce";
  QTest::newRow("hinge") << "hinge";
  QTest::newRow("rpgan") << "rpgan";
}

void TestGanLoss::againstTheReference() {
  QFETCH(QString, loss);
  torch::manual_seed(11);
  // Logits as D gives them, some near 0 and some far out, float32 as the step has them.
  const torch::Tensor real = torch::randn({32}) * 2.5 + 0.5;
  const torch::Tensor fake = torch::randn({32}) * 2.5 - 0.5;
  QTemporaryDir dir;
  QVERIFY(writeNpy(dir.filePath("real.npy"), real));
  QVERIFY(writeNpy(dir.filePath("fake.npy"), fake));
  const auto reference = runPythonReference("gan_loss_reference.py", {dir.filePath("real.npy"), dir.filePath("fake.npy")});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonObject expected = reference.json.value(loss).toObject();
  QVERIFY2(!expected.isEmpty(), qPrintable(loss));

  auto kind = ganLossNamed(loss.toStdString());
  QVERIFY2(kind.ok(), kind.error().c_str());
  torch::Tensor r = real.clone().requires_grad_(true), f = fake.clone().requires_grad_(true);
  const DiscriminatorLoss loss_d = discriminatorLoss(*kind, r, f);
  loss_d.total.backward();
  QVERIFY2(std::fabs(loss_d.total.item<double>() - expected.value("loss_d").toDouble()) < kTolerance,
           qPrintable(QString("loss_d %1, reference %2").arg(loss_d.total.item<double>()).arg(expected.value("loss_d").toDouble())));
  QVERIFY(maxDifference(r.grad(), expected.value("grad_d_real").toArray()) < kTolerance);
  QVERIFY(maxDifference(f.grad(), expected.value("grad_d_fake").toArray()) < kTolerance);

  torch::Tensor f_g = fake.clone().requires_grad_(true);
  const torch::Tensor loss_g = generatorLoss(*kind, f_g, real);
  loss_g.backward();
  QVERIFY2(std::fabs(loss_g.item<double>() - expected.value("loss_g").toDouble()) < kTolerance,
           qPrintable(QString("loss_g %1, reference %2").arg(loss_g.item<double>()).arg(expected.value("loss_g").toDouble())));
  QVERIFY(maxDifference(f_g.grad(), expected.value("grad_g_fake").toArray()) < kTolerance);
}

// The step backpropagates D's terms one by one (bce's two, as the original recipe did): the
// gradients add up to the gradient of the sum it reports.
void TestGanLoss::termsSumToTheLoss() {
  torch::manual_seed(3);
  const torch::Tensor real = torch::randn({16}, torch::kFloat64), fake = torch::randn({16}, torch::kFloat64);
  for (GanLoss kind : {GanLoss::Bce, GanLoss::Hinge, GanLoss::RpGan}) {
    torch::Tensor r1 = real.clone().requires_grad_(true), f1 = fake.clone().requires_grad_(true);
    const DiscriminatorLoss one_by_one = discriminatorLoss(kind, r1, f1);
    for (const auto& term : one_by_one.terms) term.backward();
    torch::Tensor r2 = real.clone().requires_grad_(true), f2 = fake.clone().requires_grad_(true);
    discriminatorLoss(kind, r2, f2).total.backward();
    QVERIFY(torch::allclose(r1.grad(), r2.grad(), 0, 1e-12));
    QVERIFY(torch::allclose(f1.grad(), f2.grad(), 0, 1e-12));
  }
  QCOMPARE(discriminatorLoss(GanLoss::Bce, real, fake).terms.size(), std::size_t(2));
  QCOMPARE(discriminatorLoss(GanLoss::RpGan, real, fake).terms.size(), std::size_t(1));
  QVERIFY(!ganLossNamed("wgan").ok());
}

// R1 on a real batch and R2 on a generated one, through docs/model.md's D64 in float64, as the
// lazy step applies them ((R1 + R2)·k): the values and every parameter's gradient (double
// backward) against torch.autograd.grad(create_graph=True) in the reference.
void TestGanLoss::penaltiesAgainstTheReference() {
  torch::manual_seed(4);
  DiscriminatorOptions options;
  options.ndf = 8;
  Discriminator d(options);
  initDcganWeights(*d);
  d->to(torch::kFloat64);
  d->train();
  const torch::Tensor real = torch::randn({4, 3, 64, 64}, torch::kFloat64).clamp(-1, 1);
  const torch::Tensor fake = torch::tanh(torch::randn({4, 3, 64, 64}, torch::kFloat64));
  QTemporaryDir dir;
  for (const auto& p : d->named_parameters())
    QVERIFY(writeNpy(dir.filePath(QString::fromStdString(p.key()) + ".npy"), p.value()));
  QVERIFY(writeNpy(dir.filePath("real.npy"), real));
  QVERIFY(writeNpy(dir.filePath("fake.npy"), fake));
  const double gamma1 = 10, gamma2 = 0.5, lazy = 4;
  const auto reference = runPythonReference("gradient_penalty_reference.py", {dir.path(), "8", "3", "10", "0.5", "4"});
  QVERIFY2(reference.ok, qPrintable(reference.error));

  torch::Tensor real_in = real.clone().requires_grad_(true), fake_in = fake.clone().requires_grad_(true);
  const torch::Tensor r1 = zeroCentredGradientPenalty(d->forward(real_in), real_in, gamma1);
  const torch::Tensor r2 = zeroCentredGradientPenalty(d->forward(fake_in), fake_in, gamma2);
  ((r1 + r2) * lazy).backward();
  const auto close = [](double got, double want) { return std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want)); };
  QVERIFY2(close(r1.item<double>(), reference.json.value("r1").toDouble()),
           qPrintable(QString("R1 %1, reference %2").arg(r1.item<double>()).arg(reference.json.value("r1").toDouble())));
  QVERIFY2(close(r2.item<double>(), reference.json.value("r2").toDouble()),
           qPrintable(QString("R2 %1, reference %2").arg(r2.item<double>()).arg(reference.json.value("r2").toDouble())));
  QVERIFY(r1.item<double>() > 0 && r2.item<double>() > 0);
  const QJsonObject grads = reference.json.value("grads").toObject();
  QCOMPARE(grads.size(), int(d->named_parameters().size()));
  for (const auto& p : d->named_parameters()) {
    const QJsonArray expected = grads.value(QString::fromStdString(p.key())).toArray();
    double largest = 1;
    for (const auto& v : expected) largest = std::max(largest, std::fabs(v.toDouble()));
    QVERIFY2(p.value().grad().defined(), p.key().c_str());
    const double difference = maxDifference(p.value().grad(), expected);
    QVERIFY2(difference <= 1e-5 * largest, qPrintable(QString("%1: %2").arg(QString::fromStdString(p.key())).arg(difference)));
  }
}

// reg_every k: the penalties run on steps 0, k, 2k, ... of the run, a resumed run included
// (setStepsDone), and change what D learns only on those steps.
void TestGanLoss::lazyPenaltiesKeepTheirSchedule() {
  TrainConfig plain = tinyTrainConfig();
  TrainConfig lazy = plain;
  lazy.r1_gamma = 50;
  lazy.reg_every = 2;
  torch::manual_seed(6);
  const torch::Tensor real = (torch::rand({8, 3, 64, 64}) * 2 - 1).to(testDevice());
  const torch::Tensor noise = torch::randn({8, plain.nz, 1, 1}).to(testDevice());
  // Step 1 of a resumed run (1 % 2 != 0): no penalty, so D learns exactly as without one.
  DcganStep without(plain, testDevice(), Precision::Fp32), resumed(lazy, testDevice(), Precision::Fp32);
  resumed.setStepsDone(1);
  without.step(real, noise);
  resumed.step(real, noise);
  QVERIFY(torch::equal(flatParameters(*without.discriminator()), flatParameters(*resumed.discriminator())));
  // Step 2: penalised, so D moves otherwise.
  without.step(real, noise);
  resumed.step(real, noise);
  QVERIFY(!torch::equal(flatParameters(*without.discriminator()), flatParameters(*resumed.discriminator())));
}

void TestGanLoss::eachLossTrains_data() { againstTheReference_data(); }

void TestGanLoss::eachLossTrains() {
  QFETCH(QString, loss);
  TrainConfig config = tinyTrainConfig();
  config.loss = loss.toStdString();
  DcganStep step(config, testDevice(), Precision::Fp32);
  torch::manual_seed(1);
  const torch::Tensor real = (torch::rand({8, 3, 64, 64}) * 2 - 1).to(testDevice());
  const torch::Tensor before = flatParameters(*step.generator());
  for (int i = 0; i < 3; ++i) {
    const torch::Tensor noise = torch::randn({8, config.nz, 1, 1}).to(testDevice());
    const StepStats stats = step.step(real, noise);
    QVERIFY2(std::isfinite(stats.loss_d) && std::isfinite(stats.loss_g), qPrintable(loss));
    QVERIFY(stats.d_x >= 0 && stats.d_x <= 1);
  }
  QVERIFY(!torch::equal(before, flatParameters(*step.generator())));
}

// lr_d and lr_g (TTUR): D with a learning rate a million times smaller than G's moves a million
// times less (AdamW's first step moves every weight by about its learning rate).
void TestGanLoss::eachNetHasItsLearningRate() {
  TrainConfig config = tinyTrainConfig();
  config.lr = 1e-3;
  config.lr_d = 1e-9;  // lr_g stays 0: the same as lr
  DcganStep step(config, testDevice(), Precision::Fp32);
  torch::manual_seed(2);
  const torch::Tensor real = (torch::rand({8, 3, 64, 64}) * 2 - 1).to(testDevice());
  const torch::Tensor noise = torch::randn({8, config.nz, 1, 1}).to(testDevice());
  const torch::Tensor g_before = flatParameters(*step.generator()), d_before = flatParameters(*step.discriminator());
  step.step(real, noise);
  const double g_moved = (flatParameters(*step.generator()) - g_before).abs().max().item<double>();
  const double d_moved = (flatParameters(*step.discriminator()) - d_before).abs().max().item<double>();
  QVERIFY2(g_moved > 5e-4 && g_moved < 2e-3, qPrintable(QString::number(g_moved)));
  QVERIFY2(d_moved < 1e-6, qPrintable(QString::number(d_moved)));  // a float32 weight near 1 moves by whole ulps or not at all
}

// n_critic 3: D learns on every step, G on steps 3 and 6 only; every step still reports G's loss
// (measured through the updated D).
void TestGanLoss::criticStepsBeforeEachGeneratorStep() {
  TrainConfig config = tinyTrainConfig();
  config.n_critic = 3;
  DcganStep step(config, testDevice(), Precision::Fp32);
  torch::manual_seed(8);
  const torch::Tensor real = (torch::rand({8, 3, 64, 64}) * 2 - 1).to(testDevice());
  QString learnt;
  for (int i = 1; i <= 6; ++i) {
    const torch::Tensor g_before = flatParameters(*step.generator()), d_before = flatParameters(*step.discriminator());
    const StepStats stats = step.step(real, torch::randn({8, config.nz, 1, 1}).to(testDevice()));
    QVERIFY2(std::isfinite(stats.loss_g) && stats.loss_g > 0, qPrintable(QString::number(stats.loss_g)));
    QVERIFY(!torch::equal(d_before, flatParameters(*step.discriminator())));
    learnt += torch::equal(g_before, flatParameters(*step.generator())) ? "D" : "G";
  }
  QCOMPARE(learnt, QString("DDGDDG"));
}

STREETGAN_TEST_GUILESS_MAIN(TestGanLoss)
#include "tst_gan_loss.moc"
