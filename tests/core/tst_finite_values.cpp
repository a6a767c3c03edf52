// allFinite(): one NaN or Inf anywhere (first, last, across the threads' blocks) in float and
// double, on the fast path and LibTorch's (half, bfloat16, a transposed view), against LibTorch's
// own torch::isfinite(t).all(); finite extremes (the largest, subnormals, -0) pass.
#include "core/util/finite_values.h"
#include "tests/support/test_suite.h"

#include <QtTest>
#include <torch/torch.h>

#include <limits>

using namespace streetgan;

class TestFiniteValues : public QObject {
  Q_OBJECT
private slots:
  void oneValue_data();
  void oneValue();
  void emptyAndIntegers();
};

void TestFiniteValues::oneValue_data() {
  QTest::addColumn<int>("type");
  QTest::addColumn<double>("value");
  QTest::addColumn<qint64>("position");
  QTest::addColumn<bool>("transposed");
  QTest::addColumn<bool>("finite");
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // 300,007 values: several of the 65,536-value blocks, the last one short.
  const qint64 last = 300006, across = 65536;
  for (const auto& [name, type] : {std::pair{"float", torch::kFloat32}, std::pair{"double", torch::kFloat64},
                                   std::pair{"half", torch::kFloat16}, std::pair{"bfloat16", torch::kBFloat16}}) {
    const int t = static_cast<int>(type);
    QTest::addRow("%s: NaN first", name) << t << nan << qint64(0) << false << false;
    QTest::addRow("%s: +Inf last", name) << t << inf << last << false << false;
    QTest::addRow("%s: -Inf at a block's start", name) << t << -inf << across << false << false;
    QTest::addRow("%s: NaN in a transposed view", name) << t << nan << qint64(12345) << true << false;
    QTest::addRow("%s: -0", name) << t << -0.0 << qint64(7) << false << true;
    QTest::addRow("%s: 1e-40", name) << t << 1e-40 << qint64(7) << false << true;
  }
  const int f = static_cast<int>(torch::kFloat32), d = static_cast<int>(torch::kFloat64);
  QTest::newRow("float: the largest") << f << double(std::numeric_limits<float>::max()) << last << false << true;
  QTest::newRow("double: the largest") << d << std::numeric_limits<double>::max() << last << false << true;
  QTest::newRow("double: 1e300 (Inf in float)") << d << 1e300 << qint64(3) << false << true;
  QTest::newRow("double: the smallest subnormal") << d << std::numeric_limits<double>::denorm_min() << last << false
                                                  << true;
}

void TestFiniteValues::oneValue() {
  QFETCH(int, type);
  QFETCH(double, value);
  QFETCH(qint64, position);
  QFETCH(bool, transposed);
  QFETCH(bool, finite);
  torch::Tensor values = torch::rand({300007}, torch::kFloat64).mul_(2).sub_(1).to(static_cast<torch::ScalarType>(type));
  values[position] = value;
  if (transposed) values = values.narrow(0, 0, 300000).view({600, 500}).t();
  QCOMPARE(allFinite(values), finite);
  QCOMPARE(allFinite(values), torch::isfinite(values).all().item<bool>());
}

void TestFiniteValues::emptyAndIntegers() {
  QVERIFY(allFinite(torch::Tensor()));
  QVERIFY(allFinite(torch::empty({0, 3})));
  QVERIFY(allFinite(torch::full({5}, std::numeric_limits<std::int64_t>::max(), torch::kInt64)));
  QVERIFY(!allFinite(torch::full({2, 2}, std::numeric_limits<double>::quiet_NaN(), torch::kFloat64)));
}

STREETGAN_TEST_GUILESS_MAIN(TestFiniteValues)
#include "tst_finite_values.moc"
