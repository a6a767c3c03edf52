// GaussianWindow: the fused CPU filter gives the same bits as the same sums by LibTorch tensor
// operations (float32 and float64, contiguous or not, the smallest plane and wide ones), its
// gradient equals autograd's through those operations, a constant plane stays constant, and planes
// below 11 px are refused.
#include "core/eval/gaussian_window.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

using namespace streetgan;

Q_DECLARE_METATYPE(torch::ScalarType)

class TestGaussianWindow : public QObject {
  Q_OBJECT

private slots:
  void tapsAreTheNormalisedGaussian() {
    const auto& taps = GaussianWindow::taps();
    double sum = 0;
    for (double t : taps) sum += t;
    QVERIFY(std::abs(sum - 1.0) < 1e-15);
    for (int i = 0; i < GaussianWindow::kTaps; ++i) {
      const double x = i - 5;
      QVERIFY(std::abs(taps[static_cast<std::size_t>(i)] / taps[5] - std::exp(-x * x / (2 * 1.5 * 1.5))) < 1e-15);
      QCOMPARE(taps[static_cast<std::size_t>(i)], taps[static_cast<std::size_t>(10 - i)]);
    }
  }

  void sameBitsAsTensorOps_data() {
    QTest::addColumn<torch::ScalarType>("type");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("planes");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<bool>("strided");
    QTest::newRow("float, smallest plane") << torch::kFloat32 << 1 << 1 << 11 << 11 << false;
    QTest::newRow("float, 64 px, 12 planes") << torch::kFloat32 << 8 << 12 << 64 << 64 << false;
    QTest::newRow("float, not square") << torch::kFloat32 << 2 << 3 << 21 << 47 << false;
    QTest::newRow("float, a transposed view") << torch::kFloat32 << 2 << 3 << 32 << 40 << true;
    QTest::newRow("double, 64 px") << torch::kFloat64 << 4 << 12 << 64 << 64 << false;
    QTest::newRow("double, 11 by 30") << torch::kFloat64 << 1 << 2 << 11 << 30 << false;
    QTest::newRow("double, a transposed view") << torch::kFloat64 << 3 << 2 << 16 << 13 << true;
  }

  void sameBitsAsTensorOps() {
    QFETCH(torch::ScalarType, type);
    QFETCH(int, batch);
    QFETCH(int, planes);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(bool, strided);
    torch::manual_seed(height * 100 + width);
    torch::Tensor x = torch::rand({batch, planes, strided ? width : height, strided ? height : width}, type);
    if (strided) x = x.transpose(2, 3);
    QCOMPARE(x.is_contiguous(), !strided);
    const torch::Tensor fused = GaussianWindow::filterValid(x);
    const torch::Tensor reference = GaussianWindow::filterValidByTensorOps(x);
    QCOMPARE(fused.sizes(), torch::IntArrayRef({batch, planes, height - 10, width - 10}));
    QCOMPARE(fused.scalar_type(), type);
    QVERIFY(torch::equal(fused, reference));
  }

  void gradientIsAutogradsThroughTensorOps_data() {
    QTest::addColumn<torch::ScalarType>("type");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("double") << torch::kFloat64 << 1e-14;
    QTest::newRow("float") << torch::kFloat32 << 1e-6;
  }

  void gradientIsAutogradsThroughTensorOps() {
    QFETCH(torch::ScalarType, type);
    QFETCH(double, tolerance);
    torch::manual_seed(7);
    const torch::Tensor x = torch::rand({2, 3, 24, 19}, type);
    const torch::Tensor upstream = torch::randn({2, 3, 14, 9}, type);
    const torch::Tensor a = x.clone().requires_grad_(true), b = x.clone().requires_grad_(true);
    (GaussianWindow::filterValid(a) * upstream).sum().backward();
    (GaussianWindow::filterValidByTensorOps(b) * upstream).sum().backward();
    QVERIFY(a.grad().defined());
    QCOMPARE(a.grad().sizes(), x.sizes());
    QVERIFY((a.grad() - b.grad()).abs().max().item<double>() <= tolerance);
    // Every input pixel reaches the output: the adjoint leaves no zero where a tap lands.
    QVERIFY((a.grad() != 0).all().item<bool>());
  }

  void constantPlaneStaysConstant() {
    const torch::Tensor x = torch::full({1, 2, 30, 30}, 0.25, torch::kFloat64);
    const torch::Tensor out = GaussianWindow::filterValid(x);
    QVERIFY((out - 0.25).abs().max().item<double>() < 1e-15);
  }

  void refusesSmallPlanes() {
    QVERIFY_THROWS_EXCEPTION(std::exception, GaussianWindow::filterValid(torch::zeros({1, 1, 10, 20})));
    QVERIFY_THROWS_EXCEPTION(std::exception, GaussianWindow::filterValid(torch::zeros({1, 1, 20, 10})));
    QVERIFY_THROWS_EXCEPTION(std::exception, GaussianWindow::filterValid(torch::zeros({20, 20})));
  }
};

STREETGAN_TEST_APPLESS_MAIN(TestGaussianWindow)
#include "tst_gaussian_window.moc"
