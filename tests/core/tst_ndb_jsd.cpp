// NdbJsd against numpy (tests/core/reference/ndb_jsd_reference.py: its own Lloyd loop from the
// same k-means++ centres, its own z-tests and JSD), hand-computed k-means, quantiles and JSD,
// k-means++ on separated clusters, the two extremes (samples = the training set; one training
// image repeated), and every bad input it must refuse.
#include "core/eval/ndb_jsd.h"
#include "core/eval/nearest_neighbour_search.h"
#include "tests/support/python_reference.h"
#include "tests/support/test_suite.h"

#include <ATen/Parallel.h>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

using namespace streetgan;
using namespace streetgan::test;

namespace {

std::vector<double> jsonVector(const QJsonValue& value) {
  std::vector<double> out;
  for (const auto& item : value.toArray()) out.push_back(item.isBool() ? double(item.toBool()) : item.toDouble());
  return out;
}

torch::Tensor jsonMatrixNdb(const QJsonValue& value) {
  std::vector<double> flat;
  std::int64_t columns = 0;
  for (const auto& row : value.toArray()) {
    columns = row.toArray().size();
    for (const auto& x : row.toArray()) flat.push_back(x.toDouble());
  }
  return torch::tensor(flat, torch::kFloat64).view({static_cast<std::int64_t>(value.toArray().size()), columns});
}

bool closeToNdb(double a, double b, double relative = 1e-6) { return std::fabs(a - b) <= std::fabs(b) * relative + 1e-12; }

// Images around `modes` smooth prototypes (4×4 patterns enlarged to side × side) with noise 0.3,
// prototype j drawn with probability ∝ weights[j].
torch::Tensor mixture(const torch::Tensor& prototypes, const torch::Tensor& weights, int n) {
  const auto which = torch::multinomial(weights, n, /*replacement=*/true);
  return (prototypes.index_select(0, which) + torch::randn({n, 3, prototypes.size(2), prototypes.size(3)}) * 0.3)
      .clamp(-1, 1);
}

torch::Tensor prototypes(int modes, int side) {
  const auto low = torch::rand({modes, 3, 4, 4}) * 1.6 - 0.8;
  return low.repeat_interleave(side / 4, 2).repeat_interleave(side / 4, 3);
}

}  // namespace

class TestNdbJsd : public QObject {
  Q_OBJECT
private slots:
  void agreesWithNumpy_data();
  void agreesWithNumpy();
  void kmeansByHand_data();
  void kmeansByHand();
  void initialCentresAreSeededRows();
  void initialCentresSpreadOverClusters();
  void normalQuantile_data();
  void normalQuantile();
  void jensenShannonByHand_data();
  void jensenShannonByHand();
  void samplesEqualToTheTrainingSet();
  void oneTrainingImageRepeated();
  void badInput_data();
  void badInput();
  void badKmeansInput();
};

void TestNdbJsd::agreesWithNumpy_data() {
  QTest::addColumn<int>("n_train");
  QTest::addColumn<int>("n_samples");
  QTest::addColumn<int>("side");
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("bins");
  QTest::addColumn<int>("iterations");
  QTest::addColumn<double>("alpha");
  QTest::newRow("K 10, 32 px at 16") << 600 << 400 << 32 << 16 << 10 << 100 << 0.05;
  QTest::newRow("K 20, stopped after 2 iterations") << 500 << 300 << 32 << 16 << 20 << 2 << 0.05;
  QTest::newRow("K 8, alpha 0.01, 16 px at 8") << 400 << 500 << 16 << 8 << 8 << 100 << 0.01;
  QTest::newRow("K 5, 24 px at 16 (overlapping areas), alpha 0.2") << 300 << 200 << 24 << 16 << 5 << 50 << 0.2;
}

void TestNdbJsd::agreesWithNumpy() {
  QFETCH(int, n_train);
  QFETCH(int, n_samples);
  QFETCH(int, side);
  QFETCH(int, size);
  QFETCH(int, bins);
  QFETCH(int, iterations);
  QFETCH(double, alpha);
  torch::manual_seed(n_train + bins);
  const auto modes = prototypes(bins + 2, side);
  const auto train = mixture(modes, torch::ones({bins + 2}), n_train);
  const auto samples = mixture(modes, torch::arange(1, bins + 3, torch::kFloat32), n_samples);  // skewed
  NdbJsdOptions options;
  options.bins = bins;
  options.size = size;
  options.iterations = iterations;
  options.alpha = alpha;
  options.seed = static_cast<std::uint64_t>(bins);
  auto result = NdbJsd::evaluate(samples, train, options);
  QVERIFY2(result, result.error().c_str());

  // The same start for the reference, and the same centres from the public k-means.
  const auto train_rows = NearestNeighbourSearch::downsampledRows(train, size);
  const auto initial = NdbJsd::initialCentres(train_rows, bins, options.seed);
  QVERIFY(initial.defined());
  auto centres = NdbJsd::kmeans(train_rows, initial, iterations);
  QVERIFY2(centres, centres.error().c_str());
  QVERIFY(torch::equal(*centres, result->centres));

  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(writeNpy(dir.filePath("samples.npy"), samples));
  QVERIFY(writeNpy(dir.filePath("train.npy"), train));
  QVERIFY(writeNpy(dir.filePath("centres.npy"), initial));
  const auto reference = runPythonReference(
      "ndb_jsd_reference.py", {dir.filePath("samples.npy"), dir.filePath("train.npy"), dir.filePath("centres.npy"),
                               QString::number(size), QString::number(iterations), QString::number(alpha, 'g', 17)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const auto& json = reference.json;
  QCOMPARE(result->lloyd_iterations, json["lloyd_iterations"].toInt());
  const double centre_error = (result->centres - jsonMatrixNdb(json["centres"])).abs().max().item<double>();
  QVERIFY2(centre_error < 1e-6, qPrintable(QString("centres differ by %1").arg(centre_error)));
  QCOMPARE(result->bins, bins);
  QCOMPARE(result->ndb, json["ndb"].toInt());
  QCOMPARE(result->ndb_fraction, double(result->ndb) / bins);
  QVERIFY(closeToNdb(result->z_critical, json["z_critical"].toDouble(), 1e-12));
  QVERIFY2(closeToNdb(result->jsd, json["jsd"].toDouble()),
           qPrintable(QString("%1 vs %2").arg(result->jsd, 0, 'g', 17).arg(json["jsd"].toDouble(), 0, 'g', 17)));
  const auto train_counts = jsonVector(json["train_counts"]), sample_counts = jsonVector(json["sample_counts"]);
  const auto train_p = jsonVector(json["train_proportions"]), sample_p = jsonVector(json["sample_proportions"]);
  const auto z = jsonVector(json["z"]), significant = jsonVector(json["significant"]);
  QCOMPARE(int(result->z.size()), bins);
  for (std::size_t b = 0; b < std::size_t(bins); ++b) {
    QCOMPARE(double(result->train_counts[b]), train_counts[b]);
    QCOMPARE(double(result->sample_counts[b]), sample_counts[b]);
    QVERIFY(closeToNdb(result->train_proportions[b], train_p[b], 1e-12));
    QVERIFY(closeToNdb(result->sample_proportions[b], sample_p[b], 1e-12));
    QVERIFY2(closeToNdb(result->z[b], z[b]), qPrintable(QString("bin %1: z %2 vs %3").arg(b).arg(result->z[b]).arg(z[b])));
    QCOMPARE(double(result->significant[b]), significant[b]);
  }
}

void TestNdbJsd::kmeansByHand_data() {
  QTest::addColumn<QVector<double>>("rows");  // one value per row
  QTest::addColumn<QVector<double>>("initial");
  QTest::addColumn<int>("iterations");
  QTest::addColumn<QVector<double>>("expected");
  // Assignments {0, 1, 1, 1} → centres {0, 22/3}; then {0, 0, 1, 1} → {0.5, 10.5}; then no change.
  QTest::newRow("converges") << QVector<double>{0, 1, 10, 11} << QVector<double>{0, 1} << 100 << QVector<double>{0.5, 10.5};
  QTest::newRow("one iteration") << QVector<double>{0, 1, 10, 11} << QVector<double>{0, 1} << 1 << QVector<double>{0, 22.0 / 3};
  QTest::newRow("no iteration") << QVector<double>{0, 1, 10, 11} << QVector<double>{0, 1} << 0 << QVector<double>{0, 1};
  QTest::newRow("an empty cluster keeps its centre") << QVector<double>{0, 1} << QVector<double>{0.5, 100} << 100
                                                     << QVector<double>{0.5, 100};
  QTest::newRow("a tie goes to the lower centre") << QVector<double>{5} << QVector<double>{4, 6} << 1
                                                  << QVector<double>{5, 6};
}

void TestNdbJsd::kmeansByHand() {
  QFETCH(QVector<double>, rows);
  QFETCH(QVector<double>, initial);
  QFETCH(int, iterations);
  QFETCH(QVector<double>, expected);
  const auto as_column = [](const QVector<double>& v) {
    return torch::tensor(std::vector<double>(v.begin(), v.end()), torch::kFloat64).view({-1, 1});
  };
  auto centres = NdbJsd::kmeans(as_column(rows), as_column(initial), iterations);
  QVERIFY2(centres, centres.error().c_str());
  QVERIFY2(torch::allclose(*centres, as_column(expected), 0, 1e-12), qPrintable(QString::number(centres->abs().sum().item<double>())));
}

void TestNdbJsd::initialCentresAreSeededRows() {
  torch::manual_seed(21);
  const auto rows = torch::rand({50, 6});
  const auto a = NdbJsd::initialCentres(rows, 8, 3);
  QVERIFY(a.defined());
  QCOMPARE(a.size(0), std::int64_t(8));
  QVERIFY(a.scalar_type() == torch::kFloat64);
  std::set<std::int64_t> chosen;
  for (std::int64_t c = 0; c < 8; ++c) {
    const auto distance = (rows.to(torch::kFloat64) - a[c]).abs().sum(1);
    QCOMPARE(distance.min().item<double>(), 0.0);  // a row of the data
    chosen.insert(distance.argmin().item<std::int64_t>());
  }
  QCOMPARE(int(chosen.size()), 8);  // distinct rows
  QVERIFY(torch::equal(a, NdbJsd::initialCentres(rows, 8, 3)));
  QVERIFY(!torch::equal(a, NdbJsd::initialCentres(rows, 8, 4)));
  // Every row the same: still K centres (all that row).
  const auto same = NdbJsd::initialCentres(torch::ones({5, 3}), 3, 0);
  QVERIFY(same.defined() && torch::equal(same, torch::ones({3, 3}, torch::kFloat64)));
  QVERIFY(!NdbJsd::initialCentres(rows, 51, 0).defined());
  QVERIFY(!NdbJsd::initialCentres(rows, 0, 0).defined());
  // The same draws on any number of threads (rows in blocks of 256 per thread), and from half
  // precision rows (widened to float, exactly) as from those rows in float.
  const auto many = torch::rand({3000, 6});
  const int threads_before = at::get_num_threads();
  at::set_num_threads(1);
  const auto on_one = NdbJsd::initialCentres(many, 20, 5);
  at::set_num_threads(3);
  const auto on_three = NdbJsd::initialCentres(many, 20, 5);
  at::set_num_threads(threads_before);
  QVERIFY(torch::equal(on_one, on_three));
  const auto half = many.to(torch::kFloat16);
  QVERIFY(torch::equal(NdbJsd::initialCentres(half, 20, 5), NdbJsd::initialCentres(half.to(torch::kFloat32), 20, 5)));
}

void TestNdbJsd::initialCentresSpreadOverClusters() {
  // 5 clusters 100 apart, spread 0.01: k-means++ puts one centre in each.
  torch::manual_seed(22);
  const auto cluster = torch::arange(100, torch::kLong).remainder(5);
  auto rows = torch::rand({100, 4}, torch::kFloat64) * 0.01;
  rows.select(1, 0).add_(cluster.to(torch::kFloat64) * 100);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const auto centres = NdbJsd::initialCentres(rows, 5, seed);
    std::set<long> clusters;
    for (std::int64_t c = 0; c < 5; ++c) clusters.insert(std::lround(centres[c][0].item<double>() / 100));
    QCOMPARE(int(clusters.size()), 5);
  }
}

void TestNdbJsd::normalQuantile_data() {
  QTest::addColumn<double>("tail");
  QTest::addColumn<double>("expected");  // scipy.stats.norm.isf(tail)
  QTest::newRow("alpha 0.05, two-sided") << 0.025 << 1.959963984540054;
  QTest::newRow("alpha 0.01, two-sided") << 0.005 << 2.5758293035489004;
  QTest::newRow("0.1") << 0.1 << 1.2815515655446004;
  QTest::newRow("the median") << 0.5 << 0.0;
  QTest::newRow("lower tail") << 0.975 << -1.959963984540054;
}

void TestNdbJsd::normalQuantile() {
  QFETCH(double, tail);
  QFETCH(double, expected);
  const double x = NdbJsd::upperNormalQuantile(tail);
  QVERIFY2(std::fabs(x - expected) < 1e-12, qPrintable(QString::number(x, 'g', 17)));
  QVERIFY(std::isnan(NdbJsd::upperNormalQuantile(0)));
  QVERIFY(std::isnan(NdbJsd::upperNormalQuantile(1)));
  QVERIFY(std::isnan(NdbJsd::upperNormalQuantile(NAN)));
}

void TestNdbJsd::jensenShannonByHand_data() {
  QTest::addColumn<QVector<double>>("p");
  QTest::addColumn<QVector<double>>("q");
  QTest::addColumn<double>("expected");
  QTest::newRow("equal") << QVector<double>{0.2, 0.3, 0.5} << QVector<double>{0.2, 0.3, 0.5} << 0.0;
  QTest::newRow("disjoint: ln 2") << QVector<double>{1, 0} << QVector<double>{0, 1} << std::log(2.0);
  // ½(½ln(2/3) + ½ln 2) + ½ln(4/3)
  QTest::newRow("half and all") << QVector<double>{0.5, 0.5} << QVector<double>{1, 0} << 0.21576155433883565;
}

void TestNdbJsd::jensenShannonByHand() {
  QFETCH(QVector<double>, p);
  QFETCH(QVector<double>, q);
  QFETCH(double, expected);
  const std::vector<double> a(p.begin(), p.end()), b(q.begin(), q.end());
  QVERIFY(std::fabs(NdbJsd::jensenShannon(a, b) - expected) < 1e-14);
  QVERIFY(std::fabs(NdbJsd::jensenShannon(b, a) - expected) < 1e-14);
}

void TestNdbJsd::samplesEqualToTheTrainingSet() {
  torch::manual_seed(23);
  const auto modes = prototypes(12, 32);
  const auto train = mixture(modes, torch::ones({12}), 500);
  NdbJsdOptions options;
  options.bins = 10;
  auto result = NdbJsd::evaluate(train, train, options);
  QVERIFY2(result, result.error().c_str());
  QCOMPARE(result->ndb, 0);
  QCOMPARE(result->jsd, 0.0);
  QVERIFY(result->train_counts == result->sample_counts);
  for (double z : result->z) QCOMPARE(z, 0.0);
}

void TestNdbJsd::oneTrainingImageRepeated() {
  torch::manual_seed(24);
  const auto modes = prototypes(10, 32);
  const auto train = mixture(modes, torch::ones({10}), 600);
  NdbJsdOptions options;
  options.bins = 10;
  auto result = NdbJsd::evaluate(train.narrow(0, 0, 1).expand({300, 3, 32, 32}), train, options);
  QVERIFY2(result, result.error().c_str());
  QVERIFY2(result->ndb >= 5, qPrintable(QString::number(result->ndb)));
  QVERIFY2(result->jsd > 0.4, qPrintable(QString::number(result->jsd)));
  QVERIFY(result->jsd <= std::log(2.0));
  QCOMPARE(*std::max_element(result->sample_proportions.begin(), result->sample_proportions.end()), 1.0);
}

void TestNdbJsd::badInput_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("fewer training images than bins") << 0 << "needs at least 10 training images for 10 bins, got 8";
  QTest::newRow("no samples") << 1 << "NDB/JSD: there are no samples";
  QTest::newRow("NaN in the training images") << 2 << "the training images contain NaN or Inf values";
  QTest::newRow("Inf in the samples") << 3 << "the samples contain NaN or Inf values";
  QTest::newRow("alpha 0") << 4 << "alpha must be in (0, 1), got 0";
  QTest::newRow("alpha 1") << 5 << "alpha must be in (0, 1), got 1";
  QTest::newRow("alpha NaN") << 6 << "alpha must be in (0, 1), got nan";
  QTest::newRow("sizes differ") << 7 << "the samples are 3x16x16, the training images 3x8x8";
  QTest::newRow("no bins") << 8 << "the number of bins must be at least 1, got 0";
  QTest::newRow("negative iterations") << 9 << "iterations must be at least 0, got -1";
  QTest::newRow("not images") << 10 << "the training images must be a batch of images (N, C, H, W), got 2 dimensions";
}

void TestNdbJsd::badInput() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  auto samples = torch::rand({6, 3, 8, 8}), train = torch::rand({12, 3, 8, 8});
  NdbJsdOptions options;
  options.bins = 10;
  options.size = 4;
  switch (kind) {
    case 0: train = torch::rand({8, 3, 8, 8}); break;
    case 1: samples = torch::zeros({0, 3, 8, 8}); break;
    case 2: train[3][1][2][2] = NAN; break;
    case 3: samples[0][0][0][0] = -INFINITY; break;
    case 4: options.alpha = 0; break;
    case 5: options.alpha = 1; break;
    case 6: options.alpha = NAN; break;
    case 7: samples = torch::rand({6, 3, 16, 16}); break;
    case 8: options.bins = 0; break;
    case 9: options.iterations = -1; break;
    case 10: train = torch::rand({12, 192}); break;
  }
  auto result = NdbJsd::evaluate(samples, train, options);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

void TestNdbJsd::badKmeansInput() {
  auto result = NdbJsd::kmeans(torch::rand({20, 12}), torch::rand({4, 5}), 10);
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("NDB/JSD: the rows have 12 values, the centres 5"));
  result = NdbJsd::kmeans(torch::rand({20, 12}), torch::rand({4, 12}), -1);
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("NDB/JSD: iterations must be at least 0, got -1"));
  auto rows = torch::rand({20, 12});
  rows[3][3] = NAN;
  result = NdbJsd::kmeans(rows, torch::rand({4, 12}), 10);
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("NDB/JSD: the rows contain NaN or Inf values"));
  auto assigned = NdbJsd::assign(torch::rand({3, 2}), torch::rand({2, 3}));
  QVERIFY(!assigned);
}

STREETGAN_TEST_GUILESS_MAIN(TestNdbJsd)
#include "tst_ndb_jsd.moc"
