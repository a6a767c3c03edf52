// MemorisationCheck against a numpy brute force (tests/core/reference/memorisation_reference.py,
// given the same subset of training images), numpy's percentile on hand-computed values, the
// seeded subset, copies found and fresh noise not, and every bad input it must refuse.
#include "core/eval/memorisation.h"
#include "core/eval/pixel_pca_features.h"
#include "tests/support/python_reference.h"
#include "tests/support/test_suite.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace streetgan;
using namespace streetgan::test;

namespace {

torch::Tensor jsonTensor(const QJsonValue& value) {
  std::vector<double> flat;
  std::int64_t rows = 0, columns = 0;
  for (const auto& item : value.toArray()) {
    ++rows;
    if (item.isArray()) {
      columns = item.toArray().size();
      for (const auto& x : item.toArray()) flat.push_back(x.toDouble());
    } else {
      flat.push_back(item.toDouble());
    }
  }
  const auto t = torch::tensor(flat, torch::kFloat64);
  return columns > 0 ? t.view({rows, columns}) : t;
}

bool closeToMemorisation(const torch::Tensor& a, const torch::Tensor& b, double relative = 1e-6) {
  return a.sizes() == b.sizes() && ((a - b).abs() <= b.abs() * relative + 1e-12).all().item<bool>();
}

bool closeToMemorisation(double a, double b, double relative = 1e-6) { return std::fabs(a - b) <= std::fabs(b) * relative + 1e-12; }

// Training images around 10 smooth prototypes (4×4 patterns enlarged to side × side), each seen
// `per_prototype` times with noise 0.05: no duplicates, but every image has close neighbours.
torch::Tensor structuredTraining(int per_prototype, int side) {
  const auto low = torch::rand({10, 3, 4, 4}) * 1.6 - 0.8;
  const auto base = low.repeat_interleave(side / 4, 2).repeat_interleave(side / 4, 3);
  const auto which = torch::arange(10 * per_prototype, torch::kLong).remainder(10);
  return (base.index_select(0, which) + torch::randn({10 * per_prototype, 3, side, side}) * 0.05).clamp(-1, 1);
}

}  // namespace

class TestMemorisation : public QObject {
  Q_OBJECT
private slots:
  void agreesWithNumpy_data();
  void agreesWithNumpy();
  void percentileLikeNumpy_data();
  void percentileLikeNumpy();
  void trainSubsetIsSeeded();
  void copiesOfTrainingImagesAreFound();
  void freshNoiseIsNoCopy();
  void nearestTrainingImages();
  void spreadOfBothSets();
  void spreadFallsWhenSamplesCollapse();
  void boundRowsGiveTheSameFigures_data();
  void boundRowsGiveTheSameFigures();
  void badInput_data();
  void badInput();
  void badRows();
};

void TestMemorisation::agreesWithNumpy_data() {
  QTest::addColumn<int>("n_samples");
  QTest::addColumn<int>("n_train");
  QTest::addColumn<int>("side");
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("queries");  // train_self_queries
  QTest::addColumn<int>("copies");   // samples that are training images
  QTest::addColumn<double>("percentile");
  QTest::addColumn<int>("block");
  QTest::newRow("64 px at 32, a subset of the training images") << 30 << 200 << 64 << 32 << 60 << 5 << 1.0 << 1024;
  QTest::newRow("48 px at 32 (overlapping areas), every training image") << 20 << 80 << 48 << 32 << 1000 << 3 << 1.0 << 64;
  QTest::newRow("32 px as is, 10th percentile, blocks of 16") << 25 << 150 << 32 << 32 << 150 << 4 << 10.0 << 16;
  QTest::newRow("64 px at 16, 5th percentile, no copies") << 15 << 100 << 64 << 16 << 40 << 0 << 5.0 << 1024;
}

void TestMemorisation::agreesWithNumpy() {
  QFETCH(int, n_samples);
  QFETCH(int, n_train);
  QFETCH(int, side);
  QFETCH(int, size);
  QFETCH(int, queries);
  QFETCH(int, copies);
  QFETCH(double, percentile);
  QFETCH(int, block);
  torch::manual_seed(n_train + side + size);
  const auto train = torch::rand({n_train, 3, side, side}) * 2 - 1;
  const auto samples = torch::cat({train.narrow(0, 0, copies), torch::rand({n_samples - copies, 3, side, side}) * 2 - 1});
  MemorisationOptions options;
  options.size = size;
  options.train_self_queries = queries;
  options.percentile = percentile;
  options.seed = static_cast<std::uint64_t>(n_samples);
  options.block = block;
  auto result = MemorisationCheck::evaluate(samples, train, options);
  QVERIFY2(result, result.error().c_str());
  QCOMPARE(result->train_queries.size(0), std::int64_t(std::min(queries, n_train)));
  QCOMPARE(result->n_samples, std::int64_t(n_samples));
  QCOMPARE(result->n_train, std::int64_t(n_train));

  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(writeNpy(dir.filePath("samples.npy"), samples));
  QVERIFY(writeNpy(dir.filePath("train.npy"), train));
  QVERIFY(writeNpy(dir.filePath("subset.npy"), result->train_queries));
  const auto reference = runPythonReference(
      "memorisation_reference.py", {dir.filePath("samples.npy"), dir.filePath("train.npy"), dir.filePath("subset.npy"),
                                    QString::number(size), QString::number(percentile, 'g', 17), "3"});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const auto& json = reference.json;
  QVERIFY(torch::equal(result->nearest_indices, jsonTensor(json["nearest_indices"]).to(torch::kLong)));
  QVERIFY(torch::equal(result->nearest_index, result->nearest_indices.select(1, 0)));
  QVERIFY(closeToMemorisation(result->nearest_distances, jsonTensor(json["nearest_distances"])));
  QVERIFY(closeToMemorisation(result->nearest_distance, result->nearest_distances.select(1, 0)));
  QVERIFY(closeToMemorisation(result->train_nn_distance, jsonTensor(json["train_nn_distance"])));
  QVERIFY(closeToMemorisation(result->ratio, jsonTensor(json["ratio"])));
  QVERIFY2(closeToMemorisation(result->threshold, json["threshold"].toDouble()),
           qPrintable(QString("%1 vs %2").arg(result->threshold, 0, 'g', 17).arg(json["threshold"].toDouble(), 0, 'g', 17)));
  QVERIFY(closeToMemorisation(result->train_nn_median, json["train_nn_median"].toDouble()));
  QVERIFY(closeToMemorisation(result->mean_ratio, json["mean_ratio"].toDouble()));
  QVERIFY(closeToMemorisation(result->median_ratio, json["median_ratio"].toDouble()));
  QCOMPARE(result->copy_rate, json["copy_rate"].toDouble());
  QVERIFY(result->copy_rate >= double(copies) / n_samples);  // the copies are at distance 0
}

void TestMemorisation::percentileLikeNumpy_data() {
  QTest::addColumn<QVector<double>>("values");
  QTest::addColumn<double>("q");
  QTest::addColumn<double>("expected");  // numpy.percentile(values, q)
  QTest::newRow("median of four") << QVector<double>{4, 1, 3, 2} << 50.0 << 2.5;
  QTest::newRow("1st percentile of four") << QVector<double>{1, 2, 3, 4} << 1.0 << 1.03;
  QTest::newRow("1st percentile of five") << QVector<double>{5, 4, 3, 2, 1} << 1.0 << 1.04;
  QTest::newRow("one value") << QVector<double>{7} << 1.0 << 7.0;
  QTest::newRow("maximum") << QVector<double>{3, 1, 2} << 100.0 << 3.0;
  QTest::newRow("minimum") << QVector<double>{3, 1, 2} << 0.0 << 1.0;
  QTest::newRow("a quarter of two") << QVector<double>{10, 0} << 25.0 << 2.5;
}

void TestMemorisation::percentileLikeNumpy() {
  QFETCH(QVector<double>, values);
  QFETCH(double, q);
  QFETCH(double, expected);
  const double ours = MemorisationCheck::percentile(std::vector<double>(values.begin(), values.end()), q);
  QVERIFY2(std::fabs(ours - expected) < 1e-12, qPrintable(QString::number(ours, 'g', 17)));
}

void TestMemorisation::trainSubsetIsSeeded() {
  const torch::Tensor a = MemorisationCheck::trainSubset(100, 10, 7);
  QCOMPARE(a.size(0), std::int64_t(10));
  QVERIFY(a.scalar_type() == torch::kLong);
  QVERIFY((a.narrow(0, 1, 9) > a.narrow(0, 0, 9)).all().item<bool>());  // ascending, distinct
  QVERIFY(a.min().item<std::int64_t>() >= 0 && a.max().item<std::int64_t>() < 100);
  QVERIFY(torch::equal(a, MemorisationCheck::trainSubset(100, 10, 7)));
  QVERIFY(!torch::equal(a, MemorisationCheck::trainSubset(100, 10, 8)));
  QVERIFY(torch::equal(MemorisationCheck::trainSubset(5, 10, 0), torch::arange(5, torch::kLong)));
  QCOMPARE(MemorisationCheck::trainSubset(5, 0, 0).size(0), std::int64_t(0));
}

void TestMemorisation::copiesOfTrainingImagesAreFound() {
  torch::manual_seed(11);
  const auto train = structuredTraining(20, 64);
  const auto which = torch::tensor({0, 7, 19, 50, 123, 199}, torch::kLong);
  MemorisationOptions options;
  options.train_self_queries = 100;
  auto result = MemorisationCheck::evaluate(train.index_select(0, which), train, options);
  QVERIFY2(result, result.error().c_str());
  QVERIFY(result->threshold > 0);
  QCOMPARE(result->copy_rate, 1.0);
  QVERIFY(torch::equal(result->nearest_index, which));
  QCOMPARE(result->nearest_distance.abs().max().item<double>(), 0.0);
  QCOMPARE(result->mean_ratio, 0.0);
}

void TestMemorisation::freshNoiseIsNoCopy() {
  torch::manual_seed(12);
  const auto train = structuredTraining(20, 64);
  const auto noise = torch::rand({25, 3, 64, 64}) * 2 - 1;
  auto result = MemorisationCheck::evaluate(noise, train, MemorisationOptions{});
  QVERIFY2(result, result.error().c_str());
  QCOMPARE(result->copy_rate, 0.0);
  QCOMPARE(result->train_queries.size(0), std::int64_t(200));  // fewer than 10000: every training image
  QVERIFY(result->nearest_distance.min().item<double>() > result->threshold);
  QVERIFY(result->median_ratio > 2);
}

namespace {

// The spread as the header defines it, by brute force: m rows drawn from `rows` with the seed,
// `queries` of them (drawn with seed + 1) to their nearest other drawn row, the median.
double bruteSpread(const torch::Tensor& rows, std::int64_t m, std::int64_t queries, std::uint64_t seed) {
  const auto drawn = rows.index_select(0, MemorisationCheck::trainSubset(rows.size(0), m, seed)).to(torch::kFloat64);
  const auto asked = MemorisationCheck::trainSubset(m, queries, seed + 1);
  auto distances = torch::cdist(drawn.index_select(0, asked), drawn);
  distances.scatter_(1, asked.view({-1, 1}), std::numeric_limits<double>::infinity());  // not itself
  const auto nearest = std::get<0>(distances.min(1));
  std::vector<double> values(nearest.data_ptr<double>(), nearest.data_ptr<double>() + nearest.numel());
  return MemorisationCheck::percentile(values, 50.0);
}

}  // namespace

void TestMemorisation::spreadOfBothSets() {
  // Equal counts of each set (the smaller one's), spread_queries of them measured, by brute force.
  torch::manual_seed(14);
  const auto train = structuredTraining(20, 64);
  const auto samples = torch::rand({40, 3, 64, 64}) * 2 - 1;
  MemorisationOptions options;
  options.seed = 5;
  options.spread_queries = 30;
  auto result = MemorisationCheck::evaluate(samples, train, options);
  QVERIFY2(result, result.error().c_str());
  const auto sample_rows = NearestNeighbourSearch::downsampledRows(samples, 32);
  const auto train_rows = NearestNeighbourSearch::downsampledRows(train, 32);
  QVERIFY(closeToMemorisation(result->sample_spread, bruteSpread(sample_rows, 40, 30, 5 + 101), 1e-9));
  QVERIFY(closeToMemorisation(result->train_spread, bruteSpread(train_rows, 40, 30, 5 + 202), 1e-9));
  QVERIFY(closeToMemorisation(result->spread_ratio, result->sample_spread / result->train_spread, 1e-12));
  QVERIFY(result->spread_ratio > 1);  // noise is more varied than the prototypes' images
}

void TestMemorisation::spreadFallsWhenSamplesCollapse() {
  torch::manual_seed(15);
  const auto train = structuredTraining(20, 64);
  // The training images themselves, all of them: the same rows on both sides, a ratio of 1.
  auto same = MemorisationCheck::evaluate(train, train, MemorisationOptions{});
  QVERIFY2(same, same.error().c_str());
  QCOMPARE(same->spread_ratio, 1.0);
  // One training image over and over: every sample's nearest other sample is at 0.
  auto collapsed = MemorisationCheck::evaluate(train.narrow(0, 3, 1).expand({50, 3, 64, 64}), train,
                                               MemorisationOptions{});
  QVERIFY2(collapsed, collapsed.error().c_str());
  QCOMPARE(collapsed->sample_spread, 0.0);
  QCOMPARE(collapsed->spread_ratio, 0.0);
  QVERIFY(collapsed->train_spread > 0);
  // A single sample has no other sample: no spread.
  auto one = MemorisationCheck::evaluate(train.narrow(0, 0, 1), train, MemorisationOptions{});
  QVERIFY2(one, one.error().c_str());
  QVERIFY(std::isnan(one->spread_ratio));
  MemorisationOptions bad;
  bad.spread_queries = 0;
  auto refused = MemorisationCheck::evaluate(train, train, bad);
  QVERIFY(!refused);
  QVERIFY2(refused.error().find("spread_queries must be at least 1, got 0") != std::string::npos,
           refused.error().c_str());
}

void TestMemorisation::boundRowsGiveTheSameFigures_data() {
  QTest::addColumn<int>("components");
  QTest::newRow("40 components (a tight bound)") << 40;
  QTest::newRow("4 components (a loose bound: many queries searched in full)") << 4;
}

void TestMemorisation::boundRowsGiveTheSameFigures() {
  // The quality suite bounds the searches by its pixel features: the figures must not move.
  QFETCH(int, components);
  torch::manual_seed(14);
  const auto train = structuredTraining(30, 64);
  const auto samples = (train.narrow(0, 0, 120) + torch::randn({120, 3, 64, 64}) * 0.1).clamp(-1, 1);
  auto space = PixelPcaFeatures::fit(train, PixelPcaOptions{32, components});
  QVERIFY2(space, space.error().c_str());
  const auto sample_rows = NearestNeighbourSearch::downsampledRows(samples, 32);
  const auto train_rows = NearestNeighbourSearch::downsampledRows(train, 32);
  auto sample_features = space->transform(samples), train_features = space->transform(train);
  QVERIFY(sample_features && train_features);
  auto sample_bounds = space->boundRows(sample_rows, *sample_features);
  auto train_bounds = space->boundRows(train_rows, *train_features);
  QVERIFY2(sample_bounds && train_bounds, sample_bounds ? train_bounds.error().c_str() : sample_bounds.error().c_str());
  // A contraction: no pair of rows is nearer in the bound rows than in the pixels.
  const auto pixel = torch::cdist(sample_rows.to(torch::kFloat64), train_rows.to(torch::kFloat64));
  const auto bounded = torch::cdist(*sample_bounds, *train_bounds);
  QVERIFY((bounded <= pixel + 1e-9).all().item<bool>());
  MemorisationOptions options;
  options.train_self_queries = 150;
  options.spread_queries = 60;
  auto plain = MemorisationCheck::evaluateRows(sample_rows, train_rows, options);
  auto fast = MemorisationCheck::evaluateRows(sample_rows, train_rows, *sample_bounds, *train_bounds, options);
  QVERIFY2(plain && fast, plain ? fast.error().c_str() : plain.error().c_str());
  QVERIFY(torch::equal(fast->nearest_indices, plain->nearest_indices));
  QVERIFY(((fast->nearest_distances - plain->nearest_distances).abs() <= 1e-12).all().item<bool>());
  QVERIFY(((fast->train_nn_distance - plain->train_nn_distance).abs() <= 1e-12).all().item<bool>());
  QCOMPARE(fast->copy_rate, plain->copy_rate);
  QVERIFY(closeToMemorisation(fast->threshold, plain->threshold, 1e-12));
  QVERIFY(closeToMemorisation(fast->spread_ratio, plain->spread_ratio, 1e-12));
  QVERIFY(closeToMemorisation(fast->median_ratio, plain->median_ratio, 1e-12));
  // Bounds for one set only are refused.
  auto half = MemorisationCheck::evaluateRows(sample_rows, train_rows, *sample_bounds, torch::Tensor(), options);
  QVERIFY(!half);
  QVERIFY2(QString::fromStdString(half.error()).contains("bound rows are needed for both"), half.error().c_str());
}

void TestMemorisation::nearestTrainingImages() {
  torch::manual_seed(13);
  const auto train = torch::rand({60, 3, 64, 64}) * 2 - 1;
  const auto samples = torch::rand({7, 3, 64, 64}) * 2 - 1;
  MemorisationOptions options;
  options.show_nearest = 3;
  auto result = MemorisationCheck::evaluate(samples, train, options);
  auto nearest = MemorisationCheck::nearest(samples, train, 3, options.size, 16);
  QVERIFY2(result && nearest, nearest.ok() ? result.error().c_str() : nearest.error().c_str());
  QCOMPARE(nearest->indices.size(1), std::int64_t(3));
  QVERIFY(torch::equal(nearest->indices, result->nearest_indices));
  QVERIFY(closeToMemorisation(nearest->distances, result->nearest_distances, 1e-12));
}

void TestMemorisation::badInput_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("no samples") << 0 << "memorisation: there are no samples";
  QTest::newRow("one training image") << 1 << "needs at least 2 training images, got 1";
  QTest::newRow("sizes differ") << 2 << "the samples are 3x16x16, the training images 3x8x8";
  QTest::newRow("NaN in the samples") << 3 << "the samples contain NaN or Inf values";
  QTest::newRow("Inf in the training images") << 4 << "the training images contain NaN or Inf values";
  QTest::newRow("percentile above 100") << 5 << "the percentile must be in [0, 100], got 101";
  QTest::newRow("size zero") << 6 << "the image size must be at least 1, got 0";
  QTest::newRow("more nearest than training images")
      << 7 << "showing 3 nearest training images needs at least 3 training images, got 2";
  QTest::newRow("not images") << 8 << "the samples must be a batch of images (N, C, H, W), got 2 dimensions";
  QTest::newRow("no training queries") << 9 << "train_self_queries must be at least 1, got 0";
  QTest::newRow("duplicated training images") << 10 << "the distance ratio is undefined";
  QTest::newRow("no training images") << 11 << "there are no training images";
}

void TestMemorisation::badInput() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  auto samples = torch::rand({4, 3, 8, 8}), train = torch::rand({6, 3, 8, 8});
  MemorisationOptions options;
  options.size = 4;
  switch (kind) {
    case 0: samples = torch::zeros({0, 3, 8, 8}); break;
    case 1: train = torch::rand({1, 3, 8, 8}); break;
    case 2: samples = torch::rand({4, 3, 16, 16}); break;
    case 3: samples[2][1][3][3] = NAN; break;
    case 4: train[5][0][0][0] = INFINITY; break;
    case 5: options.percentile = 101; break;
    case 6: options.size = 0; break;
    case 7: train = torch::rand({2, 3, 8, 8}); break;
    case 8: samples = torch::rand({4, 192}); break;
    case 9: options.train_self_queries = 0; break;
    case 10: train = torch::rand({1, 3, 8, 8}).expand({6, 3, 8, 8}).contiguous(); break;
    case 11: train = torch::zeros({0, 3, 8, 8}); break;
  }
  auto result = MemorisationCheck::evaluate(samples, train, options);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

void TestMemorisation::badRows() {
  auto result = MemorisationCheck::evaluateRows(torch::rand({4, 12}), torch::rand({6, 10}));
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("memorisation: the sample rows have 12 values, the training rows 10"));
  result = MemorisationCheck::evaluateRows(torch::rand({4, 12}), torch::rand({1, 12}));
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("memorisation: needs at least 2 training images, got 1"));
}

STREETGAN_TEST_GUILESS_MAIN(TestMemorisation)
#include "tst_memorisation.moc"
