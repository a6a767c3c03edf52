#include "core/model/discriminator.h"
#include "core/model/generator.h"
#include "core/model/layer_plan.h"
#include "core/model/weight_init.h"
#include "tests/support/test_suite.h"

#include <QtTest>
#include <torch/torch.h>

using namespace streetgan;

namespace {

// Closed forms: every conv has kernel 4 (16 weights per in/out pair) and no bias; each
// BatchNorm has a weight and a bias per channel.
std::int64_t generatorParams(std::int64_t nz, std::int64_t ngf, std::int64_t nc, int img) {
  std::int64_t mult = img == 64 ? 8 : 16;
  std::int64_t total = nz * mult * ngf * 16 + 2 * mult * ngf;
  for (; mult > 1; mult /= 2) total += mult * ngf * (mult / 2) * ngf * 16 + 2 * (mult / 2) * ngf;
  return total + ngf * nc * 16;
}

std::int64_t discriminatorParams(std::int64_t ndf, std::int64_t nc, int img) {
  const std::int64_t last = img == 64 ? 8 : 16;
  std::int64_t total = nc * ndf * 16;
  for (std::int64_t mult = 1; mult < last; mult *= 2)
    total += mult * ndf * 2 * mult * ndf * 16 + 2 * 2 * mult * ndf;
  return total + last * ndf * 16;
}

}  // namespace

class TestModels : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { torch::set_num_threads(2); }
  void shapes_data();
  void shapes();
  void knownCounts_data();
  void knownCounts();
  void initialisation();
  void structure();
};

void TestModels::shapes_data() {
  QTest::addColumn<int>("nz");
  QTest::addColumn<int>("ngf");
  QTest::addColumn<int>("ndf");
  QTest::addColumn<int>("nc");
  QTest::addColumn<int>("img");
  QTest::newRow("64 tiny") << 8 << 4 << 4 << 3 << 64;
  QTest::newRow("64 odd widths") << 13 << 5 << 7 << 3 << 64;
  QTest::newRow("64 gray") << 100 << 8 << 8 << 1 << 64;
  QTest::newRow("128 tiny") << 16 << 4 << 4 << 3 << 128;
  QTest::newRow("128 gray") << 7 << 3 << 6 << 1 << 128;
}

void TestModels::shapes() {
  QFETCH(int, nz);
  QFETCH(int, ngf);
  QFETCH(int, ndf);
  QFETCH(int, nc);
  QFETCH(int, img);
  Generator g(GeneratorOptions{nz, ngf, nc, img});
  Discriminator d(DiscriminatorOptions{ndf, nc, img});
  const auto images = g->forward(torch::randn({3, nz, 1, 1}));
  QCOMPARE(images.sizes().vec(), (std::vector<int64_t>{3, nc, img, img}));
  QVERIFY(images.abs().max().item<float>() <= 1.0f);  // tanh output
  const auto logits = d->forward(images);
  QCOMPARE(logits.sizes().vec(), (std::vector<int64_t>{3}));
  QCOMPARE(countParameters(*g), generatorParams(nz, ngf, nc, img));
  QCOMPARE(countParameters(*d), discriminatorParams(ndf, nc, img));
  // What `streetgan info` counts without building the nets.
  QCOMPARE(parameterCount(generatorLayers(g->options())), countParameters(*g));
  QCOMPARE(parameterCount(discriminatorLayers(d->options())), countParameters(*d));
}

// The DCGAN reference numbers for nz=100, ngf=ndf=64, nc=3 at 64 px.
void TestModels::knownCounts_data() {
  QTest::addColumn<int>("img");
  QTest::addColumn<qint64>("g");
  QTest::addColumn<qint64>("d");
  QTest::newRow("naive-64") << 64 << qint64(3576704) << qint64(2765568);
}

void TestModels::knownCounts() {
  QFETCH(int, img);
  QFETCH(qint64, g);
  QFETCH(qint64, d);
  QCOMPARE(countParameters(*Generator(GeneratorOptions{100, 64, 3, img})), g);
  QCOMPARE(countParameters(*Discriminator(DiscriminatorOptions{64, 3, img})), d);
}

void TestModels::initialisation() {
  torch::manual_seed(3);
  Generator g(GeneratorOptions{100, 64, 3, 64});
  initDcganWeights(*g);
  for (const auto& item : g->named_parameters()) {
    const auto& p = item.value();
    if (p.dim() == 4) {  // conv weights ~ N(0, 0.02)
      QVERIFY(std::abs(p.mean().item<double>()) < 2e-3);
      QVERIFY(std::abs(p.std().item<double>() - 0.02) < 2e-3);
    } else if (item.key().find("weight") != std::string::npos) {  // BN weight ~ N(1, 0.02)
      QVERIFY(std::abs(p.mean().item<double>() - 1.0) < 0.02);
    } else {  // BN bias = 0
      QCOMPARE(p.abs().sum().item<double>(), 0.0);
    }
  }
}

void TestModels::structure() {
  // No conv has a bias, and D ends in a logit (no sigmoid): its outputs are not confined to (0,1).
  Discriminator d(DiscriminatorOptions{8, 3, 64});
  Generator g(GeneratorOptions{8, 8, 3, 64});
  int convs = 0;
  for (auto& module : d->modules())
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      QVERIFY(!conv->bias.defined());
      QCOMPARE(conv->options.kernel_size()->at(0), int64_t(4));
      ++convs;
    }
  QCOMPARE(convs, 5);
  convs = 0;
  for (auto& module : g->modules())
    if (auto* conv = module->as<torch::nn::ConvTranspose2d>()) {
      QVERIFY(!conv->bias.defined());
      ++convs;
    }
  QCOMPARE(convs, 5);
  torch::NoGradGuard no_grad;
  const auto out = d->forward(torch::randn({64, 3, 64, 64}) * 50);
  QVERIFY(out.min().item<float>() < 0.0f || out.max().item<float>() > 1.0f);
}

STREETGAN_TEST_APPLESS_MAIN(TestModels)
#include "tst_models.moc"
