// DiffAugment (core/train/diff_augment.h, augment.diff) against
// tests/core/reference/diff_augment_reference.py, the authors' code given the same draws: each
// policy alone and all three in two orders, the images and the gradient with respect to them to
// 1e-5 (float64 on both sides), at 64 px and at an odd size (the cutout's centre range differs).
// Then the draws: within the authors' ranges, a job's rows shared out to ranks as one process
// uses them, and DiscriminatorAugment's generator restored from its state drawing the same again.
#include "tests/support/python_reference.h"

#include "core/config/train_config.h"
#include "core/train/diff_augment.h"
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

bool writeDraws(const QTemporaryDir& dir, const DiffAugmentDraws& d) {
  const std::pair<const char*, torch::Tensor> all[] = {
      {"brightness", d.brightness},       {"saturation", d.saturation},       {"contrast", d.contrast},
      {"translation_x", d.translation_x}, {"translation_y", d.translation_y}, {"cutout_x", d.cutout_x},
      {"cutout_y", d.cutout_y}};
  for (const auto& [name, tensor] : all)
    if (tensor.defined() && !writeNpy(dir.filePath(QString(name) + ".npy"), tensor)) return false;
  return true;
}

}  // namespace

class TestDiffAugment : public QObject {
  Q_OBJECT
private slots:
  void againstTheAuthorsCode_data();
  void againstTheAuthorsCode();
  void drawsWithinTheAuthorsRanges();
  void ranksTakeTheirRowsOfTheJob();
  void theGeneratorResumes();
};

void TestDiffAugment::againstTheAuthorsCode_data() {
  QTest::addColumn<QString>("policy");
  QTest::addColumn<int>("size");
  QTest::newRow("color") << "color" << 64;
  QTest::newRow("translation") << "translation" << 64;
  QTest::newRow("cutout") << "cutout" << 64;
  QTest::newRow("all three (the paper's)") << "color,translation,cutout" << 64;
  QTest::newRow("cutout first") << "cutout,translation,color" << 64;
  QTest::newRow("all three, 13 px") << "color,translation,cutout" << 13;
}

void TestDiffAugment::againstTheAuthorsCode() {
  QFETCH(QString, policy);
  QFETCH(int, size);
  const auto policies = diffAugmentPoliciesOf(policy.toStdString());
  QCOMPARE(int(policies.size()), int(policy.count(',') + 1));
  auto rng = at::make_generator<at::CPUGeneratorImpl>(17);
  const DiffAugmentDraws draws = drawDiffAugment(policies, 5, size, size, rng, torch::kCPU);
  torch::manual_seed(5);
  const torch::Tensor x0 = torch::rand({5, 3, size, size}, torch::kFloat64) * 2 - 1;
  const torch::Tensor g = torch::randn({5, 3, size, size}, torch::kFloat64);
  QTemporaryDir dir;
  QVERIFY(writeNpy(dir.filePath("x.npy"), x0) && writeNpy(dir.filePath("g.npy"), g) && writeDraws(dir, draws));
  const auto reference = runPythonReference("diff_augment_reference.py", {dir.path(), policy});
  QVERIFY2(reference.ok, qPrintable(reference.error));

  torch::Tensor x = x0.clone().requires_grad_(true);
  const torch::Tensor y = applyDiffAugment(x, policies, draws);
  (y * g).sum().backward();
  const double y_error = largestDifferenceFrom(y, reference.json.value("y").toArray());
  const double grad_error = largestDifferenceFrom(x.grad(), reference.json.value("grad_x").toArray());
  QVERIFY2(y_error < 1e-5, qPrintable(QString("images: %1").arg(y_error)));
  QVERIFY2(grad_error < 1e-5, qPrintable(QString("gradient: %1").arg(grad_error)));
  QVERIFY(!torch::equal(y, x0));  // it did something
}

void TestDiffAugment::drawsWithinTheAuthorsRanges() {
  auto rng = at::make_generator<at::CPUGeneratorImpl>(3);
  const auto policies = diffAugmentPoliciesOf("color,translation,cutout");
  const DiffAugmentDraws d = drawDiffAugment(policies, 4000, 64, 64, rng, torch::kCPU);
  for (const torch::Tensor& u : {d.brightness, d.saturation, d.contrast}) {
    QCOMPARE(u.sizes().vec(), (std::vector<std::int64_t>{4000, 1, 1, 1}));
    QVERIFY(u.min().item<double>() >= 0 && u.max().item<double>() < 1);
  }
  // ⌊64/8 + 0.5⌋ = 8 each way; the cutout's centre in [0, 64 + 1 − 32 mod 2) = [0, 64].
  for (const torch::Tensor& t : {d.translation_x, d.translation_y}) {
    QCOMPARE(t.min().item<std::int64_t>(), std::int64_t(-8));
    QCOMPARE(t.max().item<std::int64_t>(), std::int64_t(8));
  }
  for (const torch::Tensor& c : {d.cutout_x, d.cutout_y}) {
    QCOMPARE(c.min().item<std::int64_t>(), std::int64_t(0));
    QCOMPARE(c.max().item<std::int64_t>(), std::int64_t(64));
  }
  QVERIFY(!drawDiffAugment(diffAugmentPoliciesOf("color"), 4, 64, 64, rng, torch::kCPU).translation_x.defined());
}

// Rank r of W augments the job's rows r, r + W, ...: two ranks with 4 images each augment them as
// one process augments the 8 (BatchLoader::setShard's order).
void TestDiffAugment::ranksTakeTheirRowsOfTheJob() {
  TrainConfig config;
  config.augment.diff = "color,translation,cutout";
  config.batch_size = 8;
  DiscriminatorAugment alone(config, torch::kCPU);
  torch::manual_seed(1);
  const torch::Tensor job = torch::rand({8, 3, 64, 64}) * 2 - 1;
  const torch::Tensor whole = alone(job);
  config.batch_size = 4;
  for (std::int64_t rank : {0, 1}) {
    DiscriminatorAugment shard(config, torch::kCPU);
    shard.setShard(rank, 2);
    const torch::Tensor mine = shard(job.slice(0, rank, 8, 2));
    QVERIFY(torch::equal(mine, whole.slice(0, rank, 8, 2)));
  }
}

void TestDiffAugment::theGeneratorResumes() {
  TrainConfig config;
  config.augment.diff = "translation,cutout";
  config.batch_size = 4;
  DiscriminatorAugment augment(config, torch::kCPU);
  QVERIFY(augment.enabled());
  const torch::Tensor x = torch::rand({4, 3, 64, 64});
  augment(x);
  const torch::Tensor state = augment.rngState();
  const torch::Tensor next = augment(x);
  DiscriminatorAugment restored(config, torch::kCPU);
  QVERIFY(!restored.restoreRng(state, "cuda"));
  QVERIFY(restored.restoreRng(state, augment.rngKind()));
  QVERIFY(torch::equal(restored(x), next));
  config.augment.diff = "";
  DiscriminatorAugment off(config, torch::kCPU);
  QVERIFY(!off.enabled());
  QVERIFY(off(x).is_same(x));
}

STREETGAN_TEST_GUILESS_MAIN(TestDiffAugment)
#include "tst_diff_augment.moc"
