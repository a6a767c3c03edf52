// LatentProjector: a generated image is found again from random starts (its error far below the
// best of 1,000 random latents), in both BatchNorm modes, on STREETGAN_TEST_DEVICE; the model
// comes back unchanged (parameters, buffers, mode, requires_grad), also when cancelled; bad
// options and photographs are refused; MsSsim::differentiable equals the metric and has finite
// gradients.
#include "core/eval/ms_ssim.h"
#include "core/latent/latent_math.h"
#include "core/latent/latent_projector.h"
#include "core/model/generator.h"
#include "core/model/weight_init.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <torch/torch.h>

using namespace streetgan;
using namespace streetgan::test;

namespace {

Generator smallProjectorGenerator(int seed, bool calibrate = true) {
  torch::manual_seed(seed);
  Generator g(GeneratorOptions{16, 8, 3, 64});
  initDcganWeights(*g);
  g->to(testDevice());
  // Running statistics as training leaves them: at their initial 0 and 1, DCGAN's small initial
  // weights give every latent nearly the same flat image.
  if (calibrate) {
    torch::NoGradGuard no_grad;
    g->train();
    for (int i = 0; i < 40; ++i) g->forward(torch::randn({64, 16, 1, 1}).to(testDevice()));
  }
  g->eval();
  return g;
}

std::vector<torch::Tensor> state(GeneratorImpl& g) {
  std::vector<torch::Tensor> out;
  for (const auto& p : g.parameters()) out.push_back(p.detach().clone());
  for (const auto& b : g.buffers()) out.push_back(b.detach().clone());
  return out;
}

bool sameState(GeneratorImpl& g, const std::vector<torch::Tensor>& before) {
  const std::vector<torch::Tensor> now = state(g);
  for (std::size_t i = 0; i < now.size(); ++i)
    if (!torch::equal(now[i], before[i])) return false;
  return true;
}

// The image of a latent no start begins at, rendered as the projector will render it.
torch::Tensor targetOf(GeneratorImpl& g, std::uint64_t seed, bool batch_statistics) {
  torch::NoGradGuard no_grad;
  const bool was = g.is_training();
  std::vector<torch::Tensor> saved;
  for (const auto& b : g.buffers()) saved.push_back(b.clone());
  g.train(batch_statistics);
  const torch::Tensor image = g.forward(latentFromSeed(seed, 16).view({1, 16, 1, 1}).to(testDevice()))[0].to(torch::kCPU);
  g.train(was);
  std::size_t i = 0;
  for (auto& b : g.buffers()) b.copy_(saved[i++]);
  return image;
}

}  // namespace

class TestLatentProjector : public QObject {
  Q_OBJECT

private slots:
  void findsAGeneratedImage_data() {
    QTest::addColumn<bool>("batch_statistics");
    QTest::newRow("running statistics") << false;
    QTest::newRow("batch statistics") << true;
  }
  void findsAGeneratedImage() {
    QFETCH(bool, batch_statistics);
    Generator g = smallProjectorGenerator(3);
    const torch::Tensor target = targetOf(*g, 123456, batch_statistics);
    const std::vector<torch::Tensor> before = state(*g);
    LatentProjectorOptions options;
    options.steps = 200;
    options.restarts = 3;
    options.batch_statistics = batch_statistics;
    int reports = 0, last_step = 0;
    options.progress = [&](const LatentProjectorProgress& p) {
      ++reports;
      last_step = p.step;
      return p.best_image.sizes() == target.sizes() && std::isfinite(p.best_loss);
    };
    auto found = LatentProjector::project(*g, target, options);
    QVERIFY2(found, found ? "" : found.error().c_str());
    QCOMPARE(reports, 20);
    QCOMPARE(last_step, 200);
    QVERIFY(sameState(*g, before));
    QVERIFY(!g->is_training());
    for (const auto& p : g->parameters()) QVERIFY(p.requires_grad());

    // The best of 1,000 random latents under the same objective: the yardstick the issue names.
    torch::NoGradGuard no_grad;
    g->train(batch_statistics);
    const torch::Tensor randoms = torch::stack([] {
      std::vector<torch::Tensor> v;
      for (std::uint64_t s = 0; s < 1000; ++s) v.push_back(latentFromSeed(1000000 + s, 16));
      return v;
    }()).to(testDevice());
    torch::Tensor images;
    if (batch_statistics) {  // each latent its own batch, as the projector renders it
      std::vector<torch::Tensor> rows;
      for (std::int64_t i = 0; i < 1000; ++i) rows.push_back(g->forward(randoms.narrow(0, i, 1).view({1, 16, 1, 1})));
      images = torch::cat(rows);
    } else {
      images = g->forward(randoms.view({1000, 16, 1, 1}));
    }
    g->eval();
    const double best_random = LatentProjector::objective(randoms, images, target.unsqueeze(0).to(testDevice()), options)
                                   .min().item<double>();
    qInfo("projected loss %.5f (pixel RMSE %.2f of 255, MS-SSIM %.4f); best of 1000 random latents %.5f", found->loss,
          found->pixel_rmse, found->ms_ssim, best_random);
    QVERIFY2(found->loss < 0.1 * best_random, "the projection is not far below the best random latent");
    QVERIFY(found->pixel_rmse < 12.0);
    QVERIFY(found->ms_ssim > 0.9);
    // The image and loss reported are G's own (the optimisation runs a BatchNorm-folded copy).
    if (!batch_statistics) {
      const torch::Tensor again = g->forward(found->latent.view({1, 16, 1, 1}).to(testDevice()))[0].to(torch::kCPU);
      QVERIFY((again - found->image).abs().max().item<double>() <= testTolerance());
    }
    QCOMPARE(found->latent.sizes(), torch::IntArrayRef({16}));
    QCOMPARE(found->image.sizes(), target.sizes());
    QVERIFY(found->restart >= 0 && found->restart < 3);
  }

  void cancelLeavesTheModelAsItWas() {
    Generator g = smallProjectorGenerator(4, /*calibrate=*/false);
    g->train();  // a training-mode generator comes back in training mode
    const std::vector<torch::Tensor> before = state(*g);
    LatentProjectorOptions options;
    options.steps = 100;
    options.restarts = 2;
    options.batch_statistics = true;
    options.progress = [](const LatentProjectorProgress& p) { return p.step < 20; };
    auto found = LatentProjector::project(*g, torch::zeros({3, 64, 64}), options);
    QVERIFY(!found);
    QCOMPARE(QString::fromStdString(found.error()), QString("projection: cancelled"));
    QVERIFY(sameState(*g, before));
    QVERIFY(g->is_training());
    for (const auto& p : g->parameters()) QVERIFY(p.requires_grad());
  }

  void refusesBadInput_data() {
    QTest::addColumn<int>("steps");
    QTest::addColumn<int>("restarts");
    QTest::addColumn<double>("lr");
    QTest::addColumn<QString>("target");
    QTest::addColumn<QString>("message");
    QTest::newRow("no steps") << 0 << 8 << 0.05 << "ok" << "the steps must be from 1 to 100000, got 0";
    QTest::newRow("too many restarts") << 10 << 257 << 0.05 << "ok" << "the restarts must be from 1 to 256, got 257";
    QTest::newRow("learning rate 0") << 10 << 2 << 0.0 << "ok" << "the learning rate must be above 0";
    QTest::newRow("NaN learning rate") << 10 << 2 << std::nan("") << "ok" << "the learning rate must be above 0";
    QTest::newRow("wrong size") << 10 << 2 << 0.05 << "32px" << "the photograph is 3x32x32 but the generator makes 3x64x64";
    QTest::newRow("grey") << 10 << 2 << 0.05 << "grey" << "the photograph is 1x64x64 but the generator makes 3x64x64";
    QTest::newRow("batch of two") << 10 << 2 << 0.05 << "two" << "the photograph must be one image";
    QTest::newRow("NaN pixel") << 10 << 2 << 0.05 << "nan" << "must be finite and within [-1, 1]";
    QTest::newRow("pixels in 0..255") << 10 << 2 << 0.05 << "255" << "must be finite and within [-1, 1]";
  }
  void refusesBadInput() {
    QFETCH(int, steps);
    QFETCH(int, restarts);
    QFETCH(double, lr);
    QFETCH(QString, target);
    QFETCH(QString, message);
    Generator g = smallProjectorGenerator(5, /*calibrate=*/false);  // refused before G runs
    torch::Tensor image = torch::zeros({3, 64, 64});
    if (target == "32px") image = torch::zeros({3, 32, 32});
    if (target == "grey") image = torch::zeros({1, 64, 64});
    if (target == "two") image = torch::zeros({2, 3, 64, 64});
    if (target == "nan") image[0][5][5] = std::nan("");
    if (target == "255") image.fill_(255);
    LatentProjectorOptions options;
    options.steps = steps;
    options.restarts = restarts;
    options.learning_rate = lr;
    auto found = LatentProjector::project(*g, image, options);
    QVERIFY(!found);
    QVERIFY2(QString::fromStdString(found.error()).contains(message), found.error().c_str());
    QVERIFY(QString::fromStdString(found.error()).startsWith("projection: "));
  }

  void differentiableMsSsimIsTheMetric() {
    torch::manual_seed(9);
    const torch::Tensor a = torch::rand({4, 3, 64, 64}, torch::kFloat64) * 2 - 1;
    const torch::Tensor b = (a + 0.3 * torch::randn_like(a)).clamp(-1, 1);
    const torch::Tensor metric = *MsSsim::pairwise(a, b);
    const torch::Tensor loss = MsSsim::differentiable(a, b);
    QVERIFY((metric - loss).abs().max().item<double>() < 1e-12);
    // Against a prepared target (the projector's form): the same values and gradients.
    const torch::Tensor one = b.narrow(0, 0, 1);
    torch::Tensor p = a.clone().requires_grad_(true), q = a.clone().requires_grad_(true);
    const torch::Tensor prepared = MsSsim::differentiable(p, MsSsim::prepareTarget(one));
    const torch::Tensor expanded = MsSsim::differentiable(q, one.expand_as(a));
    QVERIFY((prepared - expanded).abs().max().item<double>() < 1e-12);
    prepared.sum().backward();
    expanded.sum().backward();
    QVERIFY((p.grad() - q.grad()).abs().max().item<double>() < 1e-10);
    QVERIFY_THROWS_EXCEPTION(std::exception, MsSsim::differentiable(p.to(torch::kFloat32), MsSsim::prepareTarget(one)));
    QVERIFY_THROWS_EXCEPTION(std::exception, MsSsim::prepareTarget(b));
    // In float32, with gradients: finite, also for identical images and flat ones (cs = 1).
    torch::Tensor x = a.to(torch::kFloat32).clone().requires_grad_(true);
    MsSsim::differentiable(x, b.to(torch::kFloat32)).sum().backward();
    QVERIFY(torch::isfinite(x.grad()).all().item<bool>());
    QVERIFY(x.grad().abs().sum().item<double>() > 0);
    torch::Tensor flat = torch::zeros({1, 3, 64, 64}).requires_grad_(true);
    const torch::Tensor same = MsSsim::differentiable(flat, torch::zeros({1, 3, 64, 64}));
    QVERIFY(std::abs(same.item<double>() - 1.0) < 1e-6);
    same.sum().backward();
    QVERIFY(torch::isfinite(flat.grad()).all().item<bool>());
  }
};

STREETGAN_TEST_APPLESS_MAIN(TestLatentProjector)
#include "tst_latent_projector.moc"
