// ManifoldMetrics on rows with many exact ties (points of a grid: many rows at exactly a ball's
// radius, where "inside" must mean strictly closer), against the papers' definitions written
// directly in LibTorch (all pairwise distances, the k-th nearest other row as each radius), for
// several block sizes and thread counts: the same four figures, bit for bit. On grid points every
// squared distance is exact, so the direct formula has no rounding of its own to differ by.
#include "core/eval/manifold_metrics.h"
#include "tests/support/test_suite.h"

#include <ATen/Parallel.h>
#include <QtTest>
#include <torch/torch.h>

#include <limits>

using namespace streetgan;

namespace {

// Rows of `d` whole numbers in [0, values), times `scale`, from `seed`.
torch::Tensor gridRows(std::int64_t n, std::int64_t d, std::int64_t values, double scale, std::uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(0, values, {n, d}, torch::kInt64).to(torch::kFloat64) * scale;
}

// Each row's distance to its k-th nearest other row of the same set.
torch::Tensor kthOtherDistance(const torch::Tensor& rows, int k) {
  torch::Tensor distances = torch::cdist(rows, rows);
  distances.fill_diagonal_(std::numeric_limits<double>::infinity());
  return std::get<0>(distances.kthvalue(k, 1));
}

ManifoldMetricsResult direct(const torch::Tensor& real, const torch::Tensor& fake, int k) {
  const torch::Tensor real_radii = kthOtherDistance(real, k), fake_radii = kthOtherDistance(fake, k);
  const torch::Tensor cross = torch::cdist(real, fake);  // (real, fake)
  const torch::Tensor in_real_ball = cross < real_radii.unsqueeze(1);
  ManifoldMetricsResult out;
  out.k = k;
  out.precision = in_real_ball.any(0).to(torch::kFloat64).mean().item<double>();
  out.recall = (cross < fake_radii.unsqueeze(0)).any(1).to(torch::kFloat64).mean().item<double>();
  out.density = in_real_ball.sum().item<double>() / (static_cast<double>(k) * static_cast<double>(fake.size(0)));
  out.coverage = in_real_ball.any(1).to(torch::kFloat64).mean().item<double>();
  return out;
}

}  // namespace

class TestManifoldMetrics : public QObject {
  Q_OBJECT
private slots:
  void tiesCountAsOutside_data();
  void tiesCountAsOutside();
};

void TestManifoldMetrics::tiesCountAsOutside_data() {
  QTest::addColumn<int>("seed");
  QTest::addColumn<int>("k");
  QTest::addColumn<qint64>("block");
  QTest::addColumn<int>("threads");
  QTest::newRow("k 3, one block, 1 thread") << 1 << 3 << qint64(1024) << 1;
  QTest::newRow("k 3, one block, 2 threads") << 1 << 3 << qint64(1024) << 2;
  QTest::newRow("k 3, blocks of 37, 3 threads") << 1 << 3 << qint64(37) << 3;
  QTest::newRow("k 5, blocks of 64, 2 threads") << 2 << 5 << qint64(64) << 2;
  QTest::newRow("k 1, blocks of 100, 1 thread") << 3 << 1 << qint64(100) << 1;
  QTest::newRow("k 1, blocks of 7, 3 threads") << 3 << 1 << qint64(7) << 3;
  QTest::newRow("k 3, the largest block, 2 threads") << 1 << 3 << std::numeric_limits<qint64>::max() << 2;
}

void TestManifoldMetrics::tiesCountAsOutside() {
  QFETCH(int, seed);
  QFETCH(int, k);
  QFETCH(qint64, block);
  QFETCH(int, threads);
  // Real rows on the whole-number grid, generated rows on the half-number grid: distances repeat.
  const torch::Tensor real = gridRows(700, 4, 6, 1.0, static_cast<std::uint64_t>(seed));
  const torch::Tensor fake = gridRows(650, 4, 7, 0.5, static_cast<std::uint64_t>(seed) + 100);
  const ManifoldMetricsResult expected = direct(real, fake, k);
  const int threads_before = at::get_num_threads();
  at::set_num_threads(threads);
  ManifoldMetricsOptions options;
  options.k = k;
  options.block = block;
  auto ours = ManifoldMetrics::compute(real, fake, options);
  at::set_num_threads(threads_before);
  QVERIFY2(ours.ok(), ours.error().c_str());
  // A grid this coarse has rows on many balls' edges: the figures are neither 0 nor 1.
  QVERIFY2(expected.precision > 0.05 && expected.precision < 1 && expected.recall > 0.05 && expected.recall < 1,
           qPrintable(QString("precision %1, recall %2").arg(expected.precision).arg(expected.recall)));
  QCOMPARE(ours->precision, expected.precision);
  QCOMPARE(ours->recall, expected.recall);
  QCOMPARE(ours->density, expected.density);
  QCOMPARE(ours->coverage, expected.coverage);
  QCOMPARE(ours->k, k);
}

STREETGAN_TEST_GUILESS_MAIN(TestManifoldMetrics)
#include "tst_manifold_metrics.moc"
