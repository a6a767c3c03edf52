// NearestNeighbourSearch against a numpy brute force (tests/core/reference/
// nearest_neighbours_reference.py), with blocks smaller than the data, the query's own row
// excluded, near-duplicates that float32 cannot order (the float64 redo), hand-computed cases,
// the downsampling of images to rows, and every bad input it must refuse.
#include "core/eval/nearest_neighbour_search.h"
#include "tests/support/python_reference.h"
#include "tests/support/test_suite.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

using namespace streetgan;
using namespace streetgan::test;

namespace {

torch::Tensor jsonMatrixSearch(const QJsonArray& rows) {
  std::vector<double> flat;
  std::int64_t columns = 0;
  for (const auto& row : rows) {
    const QJsonArray values = row.toArray();
    columns = values.size();
    for (const auto& value : values) flat.push_back(value.toDouble());
  }
  return torch::tensor(flat, torch::kFloat64).view({static_cast<std::int64_t>(rows.size()), columns});
}

// |a − b| ≤ 1e-6·|b| everywhere (and 1e-12 absolute for distances of 0).
bool closeToSearch(const torch::Tensor& a, const torch::Tensor& b, double relative = 1e-6) {
  return ((a - b).abs() <= b.abs() * relative + 1e-12).all().item<bool>();
}

// Rows near a 12-dimensional subspace of `d` dimensions, plus noise: what images at 32 px look
// like to a projection on their leading components.
torch::Tensor lowRankRows(std::int64_t n, std::int64_t d, const torch::Tensor& basis, double noise) {
  return torch::mm(torch::randn({n, basis.size(0)}, torch::kFloat64), basis) + noise * torch::randn({n, d}, torch::kFloat64);
}

// ‖E(x) − E(y)‖ ≤ ‖x − y‖ by construction: the projection of x − mean on `columns` orthonormal
// columns (the top principal axes of `fit`), with the norm of what they leave out appended.
// Built here from LibTorch's eigh, apart from PixelPcaFeatures.
std::pair<torch::Tensor, torch::Tensor> principalBounds(const torch::Tensor& fit, const torch::Tensor& a,
                                                        const torch::Tensor& b, std::int64_t columns) {
  const torch::Tensor mean = fit.mean(0), centred = fit - mean;
  const auto eig = torch::linalg_eigh(torch::mm(centred.t(), centred), "L");
  const torch::Tensor axes = std::get<1>(eig).narrow(1, fit.size(1) - columns, columns);
  const auto bound = [&](const torch::Tensor& x) {
    const torch::Tensor c = x - mean, f = torch::mm(c, axes);
    const torch::Tensor rest = (c.square().sum(1) - f.square().sum(1)).clamp_min(0).sqrt();
    return torch::cat({f, rest.unsqueeze(1)}, 1);
  };
  return {bound(a), bound(b)};
}

}  // namespace

class TestNearestNeighbourSearch : public QObject {
  Q_OBJECT
private slots:
  void agreesWithNumpy_data();
  void agreesWithNumpy();
  void handComputed();
  void duplicatesAreNotTheQueryItself();
  void downsampledRowsAreBlockMeans_data();
  void downsampledRowsAreBlockMeans();
  void downsampledRowsOverlappingAreas();
  void downsampledRowsRefuseNonImages();
  void badInput_data();
  void badInput();
  void boundedSearchGivesTheSameAnswer_data();
  void boundedSearchGivesTheSameAnswer();
  void badBounds_data();
  void badBounds();
};

void TestNearestNeighbourSearch::agreesWithNumpy_data() {
  QTest::addColumn<int>("n");      // queries (mode 1: the reference rows themselves)
  QTest::addColumn<int>("n_ref");
  QTest::addColumn<int>("d");
  QTest::addColumn<int>("k");
  QTest::addColumn<int>("block");
  QTest::addColumn<int>("mode");   // 0: plain; 1: exclude_self; 2: a subset of the reference rows, each excluding itself
  QTest::addColumn<bool>("float64");
  QTest::addColumn<bool>("clusters");  // 4 tight clusters (spread 1e-4) of 100: more than the float32 pass can order
  QTest::newRow("one block, k 1") << 50 << 200 << 7 << 1 << 1024 << 0 << false << false;
  QTest::newRow("blocks smaller than the data") << 37 << 301 << 16 << 5 << 16 << 0 << false << false;
  QTest::newRow("block of one, float64") << 9 << 20 << 3 << 2 << 1 << 0 << true << false;
  QTest::newRow("k equals the reference size") << 5 << 6 << 4 << 6 << 4 << 0 << true << false;
  QTest::newRow("exclude self") << 120 << 120 << 12 << 3 << 32 << 1 << false << false;
  QTest::newRow("exclude self, k = N - 1") << 10 << 10 << 4 << 9 << 3 << 1 << true << false;
  QTest::newRow("a subset excluding itself") << 30 << 200 << 10 << 2 << 64 << 2 << false << false;
  QTest::newRow("32x32 RGB rows, 4 reference blocks") << 40 << 500 << 3072 << 4 << 128 << 0 << false << false;
  QTest::newRow("near-duplicate clusters, float32") << 30 << 400 << 64 << 3 << 50 << 0 << false << true;
  QTest::newRow("near-duplicate clusters, exclude self") << 400 << 400 << 64 << 2 << 64 << 1 << true << true;
}

void TestNearestNeighbourSearch::agreesWithNumpy() {
  QFETCH(int, n);
  QFETCH(int, n_ref);
  QFETCH(int, d);
  QFETCH(int, k);
  QFETCH(int, block);
  QFETCH(int, mode);
  QFETCH(bool, float64);
  QFETCH(bool, clusters);
  torch::manual_seed(n_ref * 7 + d * 3 + k + mode);
  const auto dtype = float64 ? torch::kFloat64 : torch::kFloat32;
  torch::Tensor reference, queries;
  if (clusters) {
    const auto base = torch::rand({4, d}, torch::kFloat64) * 2 - 1;
    reference = base.repeat({(n_ref + 3) / 4, 1}).narrow(0, 0, n_ref) + torch::randn({n_ref, d}, torch::kFloat64) * 1e-4;
    queries = base.index_select(0, torch::randint(4, {n}, torch::kLong)) + torch::randn({n, d}, torch::kFloat64) * 1e-4;
  } else {
    reference = torch::rand({n_ref, d}, torch::kFloat64) * 2 - 1;
    queries = torch::rand({n, d}, torch::kFloat64) * 2 - 1;
  }
  reference = reference.to(dtype);
  queries = queries.to(dtype);

  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QString excluded_arg = "none";
  Result<NearestNeighbours> ours = makeError("not run");
  torch::Tensor excluded;
  if (mode == 0) {
    ours = NearestNeighbourSearch::search(queries, reference, k, false, block);
  } else if (mode == 1) {
    queries = reference;
    excluded_arg = "self";
    ours = NearestNeighbourSearch::search(queries, reference, k, true, block);
  } else {
    excluded = std::get<0>(torch::randperm(n_ref, torch::kLong).narrow(0, 0, n).sort());
    queries = reference.index_select(0, excluded);
    excluded[0] = -1;  // this one may find itself, at distance 0
    excluded_arg = dir.filePath("excluded.npy");
    QVERIFY(writeNpy(excluded_arg, excluded));
    ours = NearestNeighbourSearch::searchExcluding(queries, reference, excluded, k, block);
  }
  QVERIFY2(ours, ours.error().c_str());
  QVERIFY(ours->distances.scalar_type() == torch::kFloat64);
  QVERIFY(ours->indices.scalar_type() == torch::kLong);
  QCOMPARE(ours->distances.size(0), queries.size(0));
  QCOMPARE(ours->distances.size(1), std::int64_t(k));

  QVERIFY(writeNpy(dir.filePath("q.npy"), queries));
  QVERIFY(writeNpy(dir.filePath("r.npy"), reference));
  const auto reference_result = runPythonReference("nearest_neighbours_reference.py",
                                                   {dir.filePath("q.npy"), dir.filePath("r.npy"), QString::number(k), excluded_arg});
  QVERIFY2(reference_result.ok, qPrintable(reference_result.error));
  const torch::Tensor expected_distances = jsonMatrixSearch(reference_result.json["distances"].toArray());
  const torch::Tensor expected_indices = jsonMatrixSearch(reference_result.json["indices"].toArray()).to(torch::kLong);
  QVERIFY2(closeToSearch(ours->distances, expected_distances),
           qPrintable(QString("largest difference %1").arg((ours->distances - expected_distances).abs().max().item<double>())));
  QVERIFY2(torch::equal(ours->indices, expected_indices),
           qPrintable(QString("%1 indices differ").arg((ours->indices != expected_indices).sum().item<std::int64_t>())));
  if (k > 1) QVERIFY((ours->distances.narrow(1, 1, k - 1) >= ours->distances.narrow(1, 0, k - 1)).all().item<bool>());
  if (mode == 1) QVERIFY((ours->indices != torch::arange(n_ref).view({-1, 1})).all().item<bool>());
  if (mode == 2) QCOMPARE(ours->distances[0][0].item<double>(), 0.0);
}

void TestNearestNeighbourSearch::handComputed() {
  const auto reference = torch::tensor({0.0, 1.0, 3.0, 7.0}, torch::kFloat64).view({4, 1});
  const auto queries = torch::tensor({2.9, -5.0, 6.0}, torch::kFloat64).view({3, 1});
  auto found = NearestNeighbourSearch::search(queries, reference, 2, false, 1);
  QVERIFY2(found, found.error().c_str());
  const std::vector<std::vector<std::int64_t>> indices{{2, 1}, {0, 1}, {3, 2}};
  const std::vector<std::vector<double>> distances{{0.1, 1.9}, {5, 6}, {1, 3}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      QCOMPARE(found->indices[i][j].item<std::int64_t>(), indices[std::size_t(i)][std::size_t(j)]);
      QVERIFY(std::fabs(found->distances[i][j].item<double>() - distances[std::size_t(i)][std::size_t(j)]) < 1e-12);
    }
}

void TestNearestNeighbourSearch::duplicatesAreNotTheQueryItself() {
  // Rows 0 and 1 are the same: excluding itself, each finds the other at distance 0.
  const auto rows = torch::tensor({0.5f, -0.5f, 0.5f, -0.5f, 0.9f, 0.9f}).view({3, 2});
  auto found = NearestNeighbourSearch::search(rows, rows, 1, true);
  QVERIFY2(found, found.error().c_str());
  QCOMPARE(found->indices[0][0].item<std::int64_t>(), std::int64_t(1));
  QCOMPARE(found->indices[1][0].item<std::int64_t>(), std::int64_t(0));
  QCOMPARE(found->distances[0][0].item<double>(), 0.0);
  QCOMPARE(found->distances[1][0].item<double>(), 0.0);
  QVERIFY(found->indices[2][0].item<std::int64_t>() != 2);
  QVERIFY(std::fabs(found->distances[2][0].item<double>() - std::sqrt(0.16 + 1.96)) < 1e-6);
}

void TestNearestNeighbourSearch::downsampledRowsAreBlockMeans_data() {
  QTest::addColumn<int>("n");
  QTest::addColumn<int>("side");
  QTest::addColumn<int>("size");
  QTest::newRow("64 to 32") << 3 << 64 << 32;
  QTest::newRow("32 unchanged") << 2 << 32 << 32;
  QTest::newRow("48 to 16") << 2 << 48 << 16;
  QTest::newRow("empty batch") << 0 << 64 << 32;
}

void TestNearestNeighbourSearch::downsampledRowsAreBlockMeans() {
  QFETCH(int, n);
  QFETCH(int, side);
  QFETCH(int, size);
  torch::manual_seed(side + size);
  const auto images = torch::rand({n, 3, side, side}) * 2 - 1;
  const torch::Tensor rows = NearestNeighbourSearch::downsampledRows(images, size);
  QVERIFY(rows.defined());
  QVERIFY(rows.scalar_type() == torch::kFloat32);
  QCOMPARE(rows.size(0), std::int64_t(n));
  QCOMPARE(rows.size(1), std::int64_t(3 * size * size));
  const int f = side / size;
  const auto expected =
      images.to(torch::kFloat64).view({n, 3, size, f, size, f}).mean({3, 5}).reshape({n, 3 * size * size});
  QVERIFY(closeToSearch(rows.to(torch::kFloat64), expected, 1e-6));
}

void TestNearestNeighbourSearch::downsampledRowsOverlappingAreas() {
  // Adaptive areas: 3 → 2 covers rows/columns {0, 1} and {1, 2}.
  const auto image = torch::arange(9, torch::kFloat32).view({1, 1, 3, 3});
  const torch::Tensor rows = NearestNeighbourSearch::downsampledRows(image, 2);
  QVERIFY(rows.defined());
  QVERIFY(torch::allclose(rows, torch::tensor({2.0f, 3.0f, 5.0f, 6.0f}).view({1, 4})));
}

void TestNearestNeighbourSearch::downsampledRowsRefuseNonImages() {
  QVERIFY(!NearestNeighbourSearch::downsampledRows(torch::zeros({3, 8, 8}), 4).defined());
  QVERIFY(!NearestNeighbourSearch::downsampledRows(torch::zeros({2, 3, 8, 8}), 0).defined());
  QVERIFY(!NearestNeighbourSearch::downsampledRows(torch::Tensor(), 4).defined());
}

void TestNearestNeighbourSearch::badInput_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("NaN in the queries") << 0 << "the queries contain NaN or Inf values";
  QTest::newRow("Inf in the reference") << 1 << "the reference rows contain NaN or Inf values";
  QTest::newRow("k zero") << 2 << "k must be at least 1, got 0";
  QTest::newRow("k above the reference size") << 3 << "k = 6 needs at least 6 reference rows, got 5";
  QTest::newRow("k = N excluding self")
      << 4 << "k = 5 with each query's own row excluded needs at least 6 reference rows, got 5";
  QTest::newRow("columns differ") << 5 << "the queries have 4 columns, the reference rows 3";
  QTest::newRow("exclude_self on other rows")
      << 6 << "exclude_self needs the queries to be the reference rows: 3 queries, 5 reference rows";
  QTest::newRow("block zero") << 7 << "the block size must be at least 1, got 0";
  QTest::newRow("no queries") << 8 << "there are no queries";
  QTest::newRow("not a matrix") << 9 << "the queries must be a matrix (one row per item), got 3 dimensions";
  QTest::newRow("excluded row out of range") << 10 << "excluded row 5 is outside the 5 reference rows";
  QTest::newRow("excluded rows of another length") << 11 << "the excluded rows must be one index per query (3), got 2";
  QTest::newRow("integer queries") << 12 << "the queries must be floating point";
  QTest::newRow("no reference rows") << 13 << "there are no reference rows";
}

void TestNearestNeighbourSearch::badInput() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  auto queries = torch::rand({3, 4}), reference = torch::rand({5, 4});
  int k = 2;
  bool exclude_self = false;
  std::int64_t block = 16;
  torch::Tensor excluded;
  switch (kind) {
    case 0: queries[1][2] = NAN; break;
    case 1: reference[4][0] = INFINITY; break;
    case 2: k = 0; break;
    case 3: k = 6; break;
    case 4: queries = reference; exclude_self = true; k = 5; break;
    case 5: reference = torch::rand({5, 3}); break;
    case 6: exclude_self = true; break;
    case 7: block = 0; break;
    case 8: queries = torch::zeros({0, 4}); break;
    case 9: queries = torch::zeros({3, 4, 1}); break;
    case 10: excluded = torch::tensor({0, 5, -1}, torch::kLong); break;
    case 11: excluded = torch::tensor({0, 1}, torch::kLong); break;
    case 12: queries = torch::ones({3, 4}, torch::kLong); break;
    case 13: reference = torch::zeros({0, 4}); break;
  }
  auto result = excluded.defined() ? NearestNeighbourSearch::searchExcluding(queries, reference, excluded, k, block)
                                   : NearestNeighbourSearch::search(queries, reference, k, exclude_self, block);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

void TestNearestNeighbourSearch::boundedSearchGivesTheSameAnswer_data() {
  QTest::addColumn<int>("bound");  // 0: 24 principal axes and the rest, 1: 3 coordinates, 2: nothing (zeros)
  QTest::addColumn<bool>("exclude");
  QTest::addColumn<int>("k");
  QTest::addColumn<bool>("float32");
  QTest::newRow("principal axes, k 3") << 0 << false << 3 << true;
  QTest::newRow("principal axes, k 1, own row excluded") << 0 << true << 1 << true;
  QTest::newRow("principal axes, k 5, float64 rows") << 0 << false << 5 << false;
  QTest::newRow("3 coordinates (most queries searched in full)") << 1 << false << 3 << true;
  QTest::newRow("3 coordinates, own row excluded") << 1 << true << 2 << true;
  QTest::newRow("zero bound (every query searched in full)") << 2 << false << 3 << true;
}

void TestNearestNeighbourSearch::boundedSearchGivesTheSameAnswer() {
  QFETCH(int, bound);
  QFETCH(bool, exclude);
  QFETCH(int, k);
  QFETCH(bool, float32);
  torch::manual_seed(40 + bound);
  const std::int64_t d = 192, n_ref = 900;
  const torch::Tensor basis = torch::randn({12, d}, torch::kFloat64);
  torch::Tensor reference = lowRankRows(n_ref, d, basis, 0.05);
  torch::Tensor excluded, queries;
  if (exclude) {
    excluded = torch::randperm(n_ref, torch::kLong).narrow(0, 0, 150);
    queries = reference.index_select(0, excluded);
  } else {
    queries = lowRankRows(150, d, basis, 0.05);
  }
  if (float32) {
    reference = reference.to(torch::kFloat32);
    queries = queries.to(torch::kFloat32);
  }
  torch::Tensor query_bounds, reference_bounds;
  if (bound == 0) {
    std::tie(query_bounds, reference_bounds) =
        principalBounds(reference.to(torch::kFloat64), queries.to(torch::kFloat64), reference.to(torch::kFloat64), 24);
  } else if (bound == 1) {
    query_bounds = queries.narrow(1, 0, 3).to(torch::kFloat64);
    reference_bounds = reference.narrow(1, 0, 3).to(torch::kFloat64);
  } else {
    query_bounds = torch::zeros({queries.size(0), 1}, torch::kFloat64);
    reference_bounds = torch::zeros({n_ref, 1}, torch::kFloat64);
  }
  auto full = excluded.defined() ? NearestNeighbourSearch::searchExcluding(queries, reference, excluded, k, 64)
                                 : NearestNeighbourSearch::search(queries, reference, k, false, 64);
  auto bounded =
      NearestNeighbourSearch::searchBounded(queries, reference, query_bounds, reference_bounds, excluded, k, 64);
  QVERIFY2(full && bounded, full ? bounded.error().c_str() : full.error().c_str());
  QVERIFY(torch::equal(bounded->indices, full->indices));
  QVERIFY(closeToSearch(bounded->distances, full->distances, 1e-12));
  if (excluded.defined()) QVERIFY(!(bounded->indices == excluded.view({-1, 1})).any().item<bool>());
}

void TestNearestNeighbourSearch::badBounds_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("missing") << 0 << "the bound rows are missing";
  QTest::newRow("one short") << 1 << "the bound rows must be one per query and reference row (3 and 5), got 2 and 5";
  QTest::newRow("columns differ") << 2 << "the bound rows have 2 and 3 columns";
  QTest::newRow("NaN") << 3 << "the bound rows contain NaN or Inf values";
  QTest::newRow("not a matrix") << 4 << "the queries' bound rows must be a matrix";
}

void TestNearestNeighbourSearch::badBounds() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  const auto queries = torch::rand({3, 4}), reference = torch::rand({5, 4});
  torch::Tensor qb = torch::rand({3, 2}), rb = torch::rand({5, 2});
  switch (kind) {
    case 0: qb = torch::Tensor(); break;
    case 1: qb = torch::rand({2, 2}); break;
    case 2: rb = torch::rand({5, 3}); break;
    case 3: rb[2][1] = NAN; break;
    case 4: qb = torch::rand({3}); break;
  }
  auto result = NearestNeighbourSearch::searchBounded(queries, reference, qb, rb, torch::Tensor(), 2, 16);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

STREETGAN_TEST_GUILESS_MAIN(TestNearestNeighbourSearch)
#include "tst_nearest_neighbour_search.moc"
