// ParzenEstimator against closed forms, hand-computed values and a direct float64 implementation,
// with blocks that do not divide the sizes, and every bad input it must refuse.
#include "core/eval/parzen_estimator.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;

namespace {

// The textbook formula, one pair at a time, in float64: log mean_j exp(−‖x−μ_j‖²/(2σ²)) − d·log(σ√(2π)).
double direct(const torch::Tensor& mu, const torch::Tensor& x, double sigma) {
  const auto m = mu.to(torch::kFloat64).contiguous(), p = x.to(torch::kFloat64).contiguous();
  const std::int64_t n = m.size(0), d = m.size(1);
  const double* a = m.data_ptr<double>();
  const double* b = p.data_ptr<double>();
  std::vector<double> terms(static_cast<std::size_t>(n));
  double top = -INFINITY;
  for (std::int64_t j = 0; j < n; ++j) {
    double dist = 0;
    for (std::int64_t k = 0; k < d; ++k) dist += (b[k] - a[j * d + k]) * (b[k] - a[j * d + k]);
    terms[std::size_t(j)] = -dist / (2 * sigma * sigma);
    top = std::max(top, terms[std::size_t(j)]);
  }
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum / n) - d * std::log(sigma * std::sqrt(2 * M_PI));
}

ParzenOptions withSigmas(std::vector<double> sigmas, std::int64_t block = 512) {
  ParzenOptions options;
  options.sigmas = std::move(sigmas);
  options.block = block;
  return options;
}

torch::Tensor rows(std::vector<std::vector<double>> values) {
  const auto d = static_cast<std::int64_t>(values.front().size());
  std::vector<double> flat;
  for (const auto& row : values) flat.insert(flat.end(), row.begin(), row.end());
  return torch::tensor(flat, torch::kFloat64).view({static_cast<std::int64_t>(values.size()), d});
}

}  // namespace

class TestParzen : public QObject {
  Q_OBJECT
private slots:
  void defaultGrid();
  void oneSampleOnePoint_data();
  void oneSampleOnePoint();
  void identicalPoints();
  void translationsChangeNothing();
  void handComputed_data();
  void handComputed();
  void bestSigmaIsChosen();
  void agreesWithDirectFloat64_data();
  void agreesWithDirectFloat64();
  void standardErrorOfTheTestSplit();
  void badInput_data();
  void badInput();
  void cancel();
};

void TestParzen::defaultGrid() {
  const auto sigmas = ParzenOptions::defaultSigmas();
  QCOMPARE(int(sigmas.size()), 10);
  QCOMPARE(sigmas.front(), 0.1);
  QVERIFY(std::fabs(sigmas.back() - 1.0) < 1e-15);
  QVERIFY(std::fabs(sigmas[1] / sigmas[0] - std::pow(10.0, 1.0 / 9)) < 1e-12);
}

void TestParzen::oneSampleOnePoint_data() {
  QTest::addColumn<int>("d");
  QTest::addColumn<double>("offset");  // every coordinate of x − μ
  QTest::addColumn<double>("sigma");
  QTest::newRow("d1 at the sample") << 1 << 0.0 << 0.1;
  QTest::newRow("d1 offset 0.3, sigma 0.2") << 1 << 0.3 << 0.2;
  QTest::newRow("d3 offset 0.5, sigma 1") << 3 << 0.5 << 1.0;
  QTest::newRow("d 12288 offset 0.01, sigma 0.1") << 12288 << 0.01 << 0.1;
}

void TestParzen::oneSampleOnePoint() {
  QFETCH(int, d);
  QFETCH(double, offset);
  QFETCH(double, sigma);
  const auto mu = torch::full({1, d}, -0.2, torch::kFloat64);
  const auto x = mu + offset;
  auto ll = ParzenEstimator::logLikelihoods(mu, x, withSigmas({sigma}));
  QVERIFY2(ll, ll.error().c_str());
  const double expected = -d * offset * offset / (2 * sigma * sigma) - d * std::log(sigma * std::sqrt(2 * M_PI));
  QVERIFY2(std::fabs((*ll)[0][0].item<double>() - expected) <= 1e-9 * std::max(1.0, std::fabs(expected)),
           qPrintable(QString("%1 vs %2").arg((*ll)[0][0].item<double>()).arg(expected)));
}

void TestParzen::identicalPoints() {
  const auto mu = torch::rand({5, 7}, torch::kFloat64).mul(2).sub(1)[0].expand({5, 7}).contiguous();
  auto ll = ParzenEstimator::logLikelihoods(mu, mu.narrow(0, 0, 2), withSigmas({0.1, 0.5}));
  QVERIFY(ll);
  for (int i = 0; i < 2; ++i)
    for (int s = 0; s < 2; ++s) {
      const double sigma = s ? 0.5 : 0.1;
      QVERIFY(std::fabs((*ll)[i][s].item<double>() + 7 * std::log(sigma * std::sqrt(2 * M_PI))) < 1e-9);
    }
}

void TestParzen::translationsChangeNothing() {
  torch::manual_seed(3);
  const auto mu = torch::rand({40, 16}, torch::kFloat64) * 2 - 1;
  const auto x = torch::rand({9, 16}, torch::kFloat64) * 2 - 1;
  const auto shift = torch::rand({1, 16}, torch::kFloat64) * 0.8 - 0.4;
  auto a = ParzenEstimator::logLikelihoods(mu, x, withSigmas({0.2, 0.7}));
  auto b = ParzenEstimator::logLikelihoods(mu + shift, x + shift, withSigmas({0.2, 0.7}));
  QVERIFY(a && b);
  QVERIFY(torch::allclose(*a, *b, 1e-10, 1e-10));
}

void TestParzen::handComputed_data() {
  QTest::addColumn<QVector<double>>("samples");
  QTest::addColumn<double>("x");
  QTest::addColumn<double>("sigma");
  QTest::addColumn<double>("expected");
  // log(½(e^(−0.25/0.5)·2)) − log(0.5·√(2π))
  QTest::newRow("two samples either side") << QVector<double>{0.0, 1.0} << 0.5 << 0.5 << -0.7257913526447273;
  // log(½(1 + e^(−2))) − log(√(2π))
  QTest::newRow("one near, one far") << QVector<double>{0.0, 2.0} << 0.0 << 1.0 << -1.4851577027216454;
  // distances² 1, 0.04, 0.25 at σ 0.3
  QTest::newRow("three samples") << QVector<double>{0.0, 1.2, 1.5} << 1.0 << 0.3 << -0.761027758228912;
}

void TestParzen::handComputed() {
  QFETCH(QVector<double>, samples);
  QFETCH(double, x);
  QFETCH(double, sigma);
  QFETCH(double, expected);
  const auto mu = torch::tensor(std::vector<double>(samples.begin(), samples.end()), torch::kFloat64).view({-1, 1});
  auto ll = ParzenEstimator::logLikelihoods(mu, torch::full({1, 1}, x, torch::kFloat64), withSigmas({sigma}, 1));
  QVERIFY(ll);
  QVERIFY2(std::fabs((*ll)[0][0].item<double>() - expected) < 1e-12, qPrintable(QString::number((*ll)[0][0].item<double>(), 'g', 17)));
}

void TestParzen::bestSigmaIsChosen() {
  // One sample, points at distance r: ll(σ) = −r²/(2σ²) − log(σ√(2π)) peaks at σ = r.
  const auto mu = torch::zeros({1, 1}, torch::kFloat64);
  const auto valid = rows({{0.5}, {-0.5}});
  const auto test = rows({{0.5}, {-0.5}, {0.5}});
  auto result = ParzenEstimator::evaluate(mu, valid, test, withSigmas({0.1, 0.25, 0.5, 1.0, 2.0}));
  QVERIFY2(result, result.error().c_str());
  QCOMPARE(result->sigma, 0.5);
  QCOMPARE(int(result->curve.size()), 5);
  for (const auto& point : result->curve) QVERIFY(point.mean_ll <= result->curve[2].mean_ll);
  QVERIFY(std::fabs(result->mean_ll - (-0.5 - std::log(0.5 * std::sqrt(2 * M_PI)))) < 1e-12);
  QCOMPARE(result->stderr_ll, 0.0);  // every test point scores the same
  QCOMPARE(result->n_test, std::int64_t(3));
  QCOMPARE(result->n_valid, std::int64_t(2));
}

void TestParzen::agreesWithDirectFloat64_data() {
  QTest::addColumn<int>("n_samples");
  QTest::addColumn<int>("n_points");
  QTest::addColumn<int>("d");
  QTest::addColumn<int>("block");
  QTest::newRow("small, one block") << 10 << 4 << 3 << 512;
  QTest::newRow("blocks do not divide n or N") << 37 << 11 << 5 << 4;
  QTest::newRow("block of one") << 9 << 3 << 2 << 1;
  QTest::newRow("64x64 RGB, 3 blocks") << 300 << 70 << 3 * 64 * 64 << 128;
  QTest::newRow("32x32 RGB, uneven") << 513 << 33 << 3 * 32 * 32 << 256;
}

void TestParzen::agreesWithDirectFloat64() {
  QFETCH(int, n_samples);
  QFETCH(int, n_points);
  QFETCH(int, d);
  QFETCH(int, block);
  torch::manual_seed(n_samples * 31 + d);
  // float32 inputs in [-1, 1], as images are; near points so that no term underflows trivially.
  const auto mu = torch::rand({n_samples, d}) * 2 - 1;
  const auto x = (mu.narrow(0, 0, n_points) + torch::randn({n_points, d}) * 0.05).clamp(-1, 1);
  const std::vector<double> sigmas = ParzenOptions::defaultSigmas();
  auto ll = ParzenEstimator::logLikelihoods(mu, x, withSigmas(sigmas, block));
  QVERIFY2(ll, ll.error().c_str());
  for (std::size_t s = 0; s < sigmas.size(); s += 3) {
    double ours = 0, reference = 0;
    for (int i = 0; i < n_points; ++i) {
      ours += (*ll)[i][std::int64_t(s)].item<double>();
      reference += direct(mu, x[i].view({1, d}), sigmas[s]);
    }
    ours /= n_points, reference /= n_points;
    QVERIFY2(std::fabs(ours - reference) <= 1e-6 * std::fabs(reference),
             qPrintable(QString("σ %1: %2 vs %3").arg(sigmas[s]).arg(ours, 0, 'g', 17).arg(reference, 0, 'g', 17)));
  }
}

void TestParzen::standardErrorOfTheTestSplit() {
  torch::manual_seed(5);
  const auto mu = torch::rand({50, 6}) * 2 - 1;
  const auto valid = torch::rand({20, 6}) * 2 - 1, test = torch::rand({25, 6}) * 2 - 1;
  auto result = ParzenEstimator::evaluate(mu, valid, test, ParzenOptions{});
  QVERIFY(result);
  auto ll = ParzenEstimator::logLikelihoods(mu, test, withSigmas({result->sigma}));
  QVERIFY(ll);
  const auto column = ll->select(1, 0);
  QVERIFY(std::fabs(result->mean_ll - column.mean().item<double>()) < 1e-12);
  double var = 0;
  for (int i = 0; i < 25; ++i) var += std::pow(column[i].item<double>() - result->mean_ll, 2);
  QVERIFY(std::fabs(result->stderr_ll - std::sqrt(var / 24) / 5.0) < 1e-12);
}

void TestParzen::badInput_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("NaN in samples") << 0 << "samples contain NaN or Inf";
  QTest::newRow("Inf in points") << 1 << "points contain NaN or Inf";
  QTest::newRow("empty test split") << 2 << "test points split is empty";
  QTest::newRow("empty validation split") << 3 << "validation points split is empty";
  QTest::newRow("no samples") << 4 << "samples split is empty";
  QTest::newRow("sizes differ") << 5 << "samples have 4 dimensions, the points 3";
  QTest::newRow("sigma zero") << 6 << "is not a positive number";
  QTest::newRow("empty grid") << 7 << "grid is empty";
}

void TestParzen::badInput() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  auto mu = torch::zeros({3, 4}), valid = torch::zeros({2, 4}), test = torch::zeros({2, 4});
  ParzenOptions options;
  switch (kind) {
    case 0: mu[1][2] = NAN; break;
    case 1: test[0][0] = INFINITY; break;
    case 2: test = torch::zeros({0, 4}); break;
    case 3: valid = torch::zeros({0, 4}); break;
    case 4: mu = torch::zeros({0, 4}); break;
    case 5: test = torch::zeros({2, 3}); valid = test; break;
    case 6: options.sigmas = {0.1, 0.0}; break;
    case 7: options.sigmas = {}; break;
  }
  auto result = ParzenEstimator::evaluate(mu, valid, test, options);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

void TestParzen::cancel() {
  const auto mu = torch::rand({64, 8});
  ParzenOptions options = withSigmas({0.5}, 8);
  int calls = 0;
  bool fractions_in_range = true;
  options.progress = [&](double fraction) {
    fractions_in_range = fractions_in_range && fraction > 0 && fraction <= 1;
    return ++calls < 3;
  };
  auto result = ParzenEstimator::logLikelihoods(mu, mu, options);
  QVERIFY(fractions_in_range);
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("Parzen: cancelled"));
}

STREETGAN_TEST_GUILESS_MAIN(TestParzen)
#include "tst_parzen.moc"
