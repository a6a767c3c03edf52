// SymmetricEigen: XᵀX by the parts' triangles, added and mirrored, equal to LibTorch's product to
// rounding, exactly symmetric and the same bits on 1, 2 and 3 threads (sizes off the 64-row
// blocks, fewer rows than parts, none); the largest eigenpairs against linalg_eigh.
#include "core/util/symmetric_eigen.h"
#include "tests/support/test_suite.h"

#include <ATen/Parallel.h>
#include <QtTest>
#include <torch/torch.h>

using namespace streetgan;

class TestSymmetricEigen : public QObject {
  Q_OBJECT
private slots:
  void gram_data();
  void gram();
  void noRows();
  void largest();
};

void TestSymmetricEigen::gram_data() {
  QTest::addColumn<qint64>("rows");
  QTest::addColumn<qint64>("columns");
  QTest::newRow("1 x 1") << qint64(1) << qint64(1);
  QTest::newRow("3 rows (fewer than the parts)") << qint64(3) << qint64(70);
  QTest::newRow("tall, 64 columns") << qint64(501) << qint64(64);
  QTest::newRow("tall, 130 columns (two blocks and 2)") << qint64(1003) << qint64(130);
  QTest::newRow("wide") << qint64(40) << qint64(257);
}

void TestSymmetricEigen::gram() {
  QFETCH(qint64, rows);
  QFETCH(qint64, columns);
  const int threads_before = at::get_num_threads();
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({rows, columns}, torch::kFloat64);
  at::set_num_threads(1);
  const torch::Tensor one = SymmetricEigen::gram(x);
  QCOMPARE(one.sizes().vec(), (std::vector<std::int64_t>{columns, columns}));
  QVERIFY(torch::equal(one, one.t()));
  const torch::Tensor expected = torch::mm(x.t(), x);
  const double scale = expected.abs().max().item<double>();
  QVERIFY2((one - expected).abs().max().item<double>() <= 1e-13 * scale * static_cast<double>(rows),
           "XᵀX differs from LibTorch's product beyond rounding");
  for (int threads : {2, 3}) {
    at::set_num_threads(threads);
    QVERIFY2(torch::equal(SymmetricEigen::gram(x), one), qPrintable(QString("%1 threads: other bits").arg(threads)));
  }
  at::set_num_threads(threads_before);
}

void TestSymmetricEigen::noRows() {
  const torch::Tensor none = SymmetricEigen::gram(torch::empty({0, 5}, torch::kFloat64));
  QCOMPARE(none.sizes().vec(), (std::vector<std::int64_t>{5, 5}));
  QVERIFY(torch::equal(none, torch::zeros({5, 5}, torch::kFloat64)));
}

void TestSymmetricEigen::largest() {
  torch::manual_seed(11);
  const torch::Tensor x = torch::randn({300, 90}, torch::kFloat64);
  const torch::Tensor symmetric = SymmetricEigen::gram(x);
  auto pairs = SymmetricEigen::largest(symmetric, 10);
  QVERIFY2(pairs.ok(), pairs.ok() ? "" : pairs.error().c_str());
  auto [values, vectors] = at::linalg_eigh(symmetric, "L");
  const torch::Tensor top = values.slice(0, 80, 90).flip({0});
  QVERIFY((pairs->values - top).abs().max().item<double>() <= 1e-10 * top[0].item<double>());
  // Each vector up to its sign: |cos| = 1, and A v = λ v.
  const torch::Tensor cosines = (pairs->vectors * vectors.slice(1, 80, 90).flip({1})).sum(0).abs();
  QVERIFY((cosines - 1).abs().max().item<double>() <= 1e-9);
  const torch::Tensor residual = torch::mm(symmetric, pairs->vectors) - pairs->vectors * pairs->values;
  QVERIFY(residual.abs().max().item<double>() <= 1e-9 * top[0].item<double>());
  QVERIFY(!SymmetricEigen::largest(symmetric, 0).ok());
  QVERIFY(!SymmetricEigen::largest(symmetric, 91).ok());
}

STREETGAN_TEST_GUILESS_MAIN(TestSymmetricEigen)
#include "tst_symmetric_eigen.moc"
