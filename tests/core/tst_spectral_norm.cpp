// Spectral normalisation (core/model/spectral_norm.h, d_norm spectral) against
// tests/core/reference/spectral_norm_reference.py, torch.nn.utils.spectral_norm on the same weight,
// u and v: the output, the updated u and v, σ and the gradients with respect to the weight and the
// input, to 1e-6 (float64 on both sides). Then the discriminator: one power iteration a training
// step however often D runs in it, none in eval mode; d_norm none and spectral have no BatchNorm,
// and a spectral D's u and v are buffers (checkpoints carry them).
#include "tests/support/python_reference.h"

#include "core/model/discriminator.h"
#include "core/model/layer_plan.h"
#include "core/model/spectral_norm.h"
#include "tests/support/test_suite.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using namespace streetgan::test;

namespace {

torch::Tensor bufferCopy(torch::nn::Module& module, const std::string& name) { return module.named_buffers()[name].clone(); }

}  // namespace

class TestSpectralNorm : public QObject {
  Q_OBJECT

private slots:
  void againstPyTorch_data();
  void againstPyTorch();
  void onePowerIterationAStep();
  void normsOfTheDiscriminator();
};

void TestSpectralNorm::againstPyTorch_data() {
  QTest::addColumn<int>("stride");
  QTest::addColumn<int>("padding");
  QTest::newRow("a D64 inner conv (stride 2, padding 1)") << 2 << 1;
  QTest::newRow("D's last conv (stride 1, padding 0)") << 1 << 0;
}

void TestSpectralNorm::againstPyTorch() {
  QFETCH(int, stride);
  QFETCH(int, padding);
  torch::manual_seed(9);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(6, 10, 4).stride(stride).padding(padding).bias(false));
  attachSpectralNorm(*conv);
  conv->to(torch::kFloat64);
  const torch::Tensor x = torch::randn({3, 6, 8, 8}, torch::kFloat64);
  QTemporaryDir dir;
  QVERIFY(writeNpy(dir.filePath("weight.npy"), conv->weight));
  QVERIFY(writeNpy(dir.filePath("u.npy"), bufferCopy(*conv, "weight_u")));
  QVERIFY(writeNpy(dir.filePath("v.npy"), bufferCopy(*conv, "weight_v")));
  QVERIFY(writeNpy(dir.filePath("x.npy"), x));
  const auto reference_run = [&](const torch::Tensor& g) {
    writeNpy(dir.filePath("g.npy"), g);
    return runPythonReference("spectral_norm_reference.py",
                              {dir.path(), QString::number(stride), QString::number(padding)});
  };

  torch::Tensor input = x.clone().requires_grad_(true);
  const torch::Tensor w = spectrallyNormalisedWeight(*conv, /*iterate=*/true);
  const torch::Tensor y = torch::conv2d(input, w, {}, {stride, stride}, {padding, padding});
  const torch::Tensor g = torch::randn(y.sizes(), torch::kFloat64);
  (y * g).sum().backward();
  const auto reference = reference_run(g);
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonObject& want = reference.json;

  const torch::Tensor u = bufferCopy(*conv, "weight_u"), v = bufferCopy(*conv, "weight_v");
  const double sigma = torch::dot(u, torch::mv(conv->weight.detach().reshape({10, -1}), v)).item<double>();
  QVERIFY2(std::fabs(sigma - want.value("sigma").toDouble()) < 1e-6,
           qPrintable(QString("σ %1, reference %2").arg(sigma).arg(want.value("sigma").toDouble())));
  QVERIFY(sigma > 0);
  QVERIFY(largestDifferenceFrom(u, want.value("u").toArray()) < 1e-6);
  QVERIFY(largestDifferenceFrom(v, want.value("v").toArray()) < 1e-6);
  QVERIFY(largestDifferenceFrom(y, want.value("y").toArray()) < 1e-6);
  QVERIFY(largestDifferenceFrom(conv->weight.grad(), want.value("grad_weight").toArray()) < 1e-6);
  QVERIFY(largestDifferenceFrom(input.grad(), want.value("grad_x").toArray()) < 1e-6);
}

// DcganStep calls startStep() once a step and runs D two to four times in it: only the first
// forward pass in training mode moves u and v, and evaluation never does.
void TestSpectralNorm::onePowerIterationAStep() {
  torch::manual_seed(2);
  DiscriminatorOptions options;
  options.ndf = 8;
  options.norm = DiscriminatorNorm::Spectral;
  Discriminator d(options);
  d->train();
  const torch::Tensor images = torch::randn({2, 3, 64, 64});
  const torch::Tensor u0 = bufferCopy(*d, "main.0.weight_u");
  d->forward(images);
  QVERIFY(torch::equal(bufferCopy(*d, "main.0.weight_u"), u0));  // no step begun
  d->startStep();
  d->forward(images);
  const torch::Tensor u1 = bufferCopy(*d, "main.0.weight_u");
  QVERIFY(!torch::equal(u1, u0));
  d->forward(images);
  QVERIFY(torch::equal(bufferCopy(*d, "main.0.weight_u"), u1));
  d->startStep();
  d->eval();
  d->forward(images);
  QVERIFY(torch::equal(bufferCopy(*d, "main.0.weight_u"), u1));
}

void TestSpectralNorm::normsOfTheDiscriminator() {
  for (const auto norm : {DiscriminatorNorm::BatchNorm, DiscriminatorNorm::None, DiscriminatorNorm::Spectral}) {
    DiscriminatorOptions options;
    options.ndf = 8;
    options.norm = norm;
    Discriminator d(options);
    std::int64_t params = 0;
    for (const auto& p : d->parameters()) params += p.numel();
    QCOMPARE(params, parameterCount(discriminatorLayers(options)));
    int batch_norms = 0, spectral = 0;
    for (const auto& module : d->modules()) batch_norms += module->as<torch::nn::BatchNorm2d>() != nullptr;
    for (const auto& b : d->named_buffers()) spectral += b.key().size() > 9 && b.key().substr(b.key().size() - 9) == ".weight_u";
    QCOMPARE(batch_norms, norm == DiscriminatorNorm::BatchNorm ? 3 : 0);
    QCOMPARE(spectral, norm == DiscriminatorNorm::Spectral ? 5 : 0);
    QCOMPARE(d->forward(torch::randn({2, 3, 64, 64})).sizes().vec(), std::vector<std::int64_t>{2});
  }
}

STREETGAN_TEST_GUILESS_MAIN(TestSpectralNorm)
#include "tst_spectral_norm.moc"
