// SlicedWasserstein against an independent numpy reference (tests/core/reference/
// sliced_wasserstein_reference.py) fed the same images, patch positions and directions, so the
// comparison can be tight (1e-6 relative on the distances; the pyramid norms to 1e-9); then the
// properties of the distance (identical sets with the same positions give exactly 0, blur and
// shift give more, growing with them), the seeded draws, and every bad input.
#include "core/eval/laplacian_patches.h"
#include "core/eval/sliced_wasserstein.h"
#include "tests/support/python_reference.h"
#include "tests/support/test_suite.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using streetgan::test::runPythonReference;
using streetgan::test::writeNpy;

namespace {

namespace F = torch::nn::functional;

// Smooth random colour fields with fine noise, in [-1, 1]: every pyramid level has content.
torch::Tensor smoothImagesSwd(int n, int size, int seed) {
  torch::manual_seed(seed);
  const std::int64_t low = std::max(2, size / 8);
  const torch::Tensor coarse = torch::randn({n, 3, low, low});
  const torch::Tensor up = F::interpolate(coarse, F::InterpolateFuncOptions()
                                                      .size(std::vector<std::int64_t>{size, size})
                                                      .mode(torch::kBilinear)
                                                      .align_corners(false));
  return (0.6 * up + 0.15 * torch::randn({n, 3, size, size})).clamp(-1, 1);
}

torch::Tensor noiseImagesSwd(int n, int size, int seed) {
  torch::manual_seed(seed);
  return torch::rand({n, 3, size, size}) * 2 - 1;
}

// A Gaussian blur of radius ⌈3σ⌉ with mirror borders.
torch::Tensor blurredSwdImages(const torch::Tensor& x, double sigma) {
  const int r = static_cast<int>(std::ceil(3 * sigma));
  const torch::Tensor t = torch::arange(-r, r + 1, torch::kFloat32);
  torch::Tensor g = torch::exp(-t * t / (2 * sigma * sigma));
  g = g / g.sum();
  const std::int64_t c = x.size(1);
  const torch::Tensor padded = torch::reflection_pad2d(x, {r, r, r, r});
  const auto depthwise = F::Conv2dFuncOptions().groups(c);
  const torch::Tensor across = F::conv2d(padded, g.view({1, 1, 1, -1}).repeat({c, 1, 1, 1}), depthwise);
  return F::conv2d(across, g.view({1, 1, -1, 1}).repeat({c, 1, 1, 1}), depthwise);
}

// Moved right and down by k px, the uncovered band black (−1).
torch::Tensor shifted(const torch::Tensor& x, int k) {
  torch::Tensor out = torch::full_like(x, -1.0);
  const std::int64_t s = x.size(2);
  out.narrow(2, k, s - k).narrow(3, k, s - k).copy_(x.narrow(2, 0, s - k).narrow(3, 0, s - k));
  return out;
}

// Random patch centres (image, row, column) for `per_image` patches of each of `images` images.
torch::Tensor randomPositions(std::int64_t images, std::int64_t per_image, std::int64_t size) {
  const std::int64_t m = images * per_image;
  const torch::Tensor image =
      torch::arange(images, torch::kLong).view({images, 1}).expand({images, per_image}).reshape({m, 1});
  return torch::cat({image, torch::randint(3, size - 3, {m, 2}, torch::kLong)}, 1);
}

bool relativelyCloseSwd(double ours, double reference, double relative) {
  return std::fabs(ours - reference) <= relative * std::fabs(reference) + 1e-300;
}

SlicedWassersteinOptions shared() {
  SlicedWassersteinOptions options;
  options.shared_positions = true;
  return options;
}

}  // namespace

class TestSlicedWasserstein : public QObject {
  Q_OBJECT
private slots:
  void resolutions_data();
  void resolutions();
  void constantImagesHaveFlatLaplacianLevels();
  void levelPatchesMatchThePyramid_data();
  void levelPatchesMatchThePyramid();
  void agreesWithPython_data();
  void agreesWithPython();
  void identicalSetsWithTheSamePositionsGiveZero_data();
  void identicalSetsWithTheSamePositionsGiveZero();
  void independentDrawsOfIdenticalSetsGiveLittle();
  void blurGrowsTheDistance_data();
  void blurGrowsTheDistance();
  void shiftGrowsTheDistance_data();
  void shiftGrowsTheDistance();
  void seededAndDeterministic();
  void blocksChangeNothing();
  void unequalCountsAreSubsampled();
  void float32IsClose();
  void progressAndCancel();
  void badInput_data();
  void badInput();
  void badPieces();
};

void TestSlicedWasserstein::resolutions_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<QVector<int>>("expected");
  QTest::newRow("16") << 16 << QVector<int>{16};
  QTest::newRow("20") << 20 << QVector<int>{20};
  QTest::newRow("32") << 32 << QVector<int>{32, 16};
  QTest::newRow("48") << 48 << QVector<int>{48, 24};
  QTest::newRow("64") << 64 << QVector<int>{64, 32, 16};
  QTest::newRow("128") << 128 << QVector<int>{128, 64, 32, 16};
  QTest::newRow("8, below") << 8 << QVector<int>{};
}

void TestSlicedWasserstein::resolutions() {
  QFETCH(int, size);
  QFETCH(QVector<int>, expected);
  const std::vector<int> levels = SlicedWasserstein::resolutions(size, 16);
  QCOMPARE(QVector<int>(levels.begin(), levels.end()), expected);
}

void TestSlicedWasserstein::constantImagesHaveFlatLaplacianLevels() {
  auto pyramid = SlicedWasserstein::laplacianPyramid(torch::full({2, 3, 64, 64}, 0.3, torch::kFloat64), 16);
  QVERIFY2(pyramid, pyramid.error().c_str());
  QCOMPARE(int(pyramid->size()), 3);
  QCOMPARE((*pyramid)[0].size(2), std::int64_t(64));
  QCOMPARE((*pyramid)[1].size(2), std::int64_t(32));
  QCOMPARE((*pyramid)[2].size(2), std::int64_t(16));
  QVERIFY((*pyramid)[0].abs().max().item<double>() < 1e-12);
  QVERIFY((*pyramid)[1].abs().max().item<double>() < 1e-12);
  QVERIFY(((*pyramid)[2] - 0.3).abs().max().item<double>() < 1e-12);  // the Gaussian level itself
}

void TestSlicedWasserstein::levelPatchesMatchThePyramid_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("smallest");
  QTest::addColumn<bool>("float64");
  QTest::newRow("32 px to 16, float64") << 32 << 16 << true;
  QTest::newRow("64 px to 16, float64") << 64 << 16 << true;
  QTest::newRow("64 px to 4, float64") << 64 << 4 << true;
  QTest::newRow("128 px to 8, float64") << 128 << 8 << true;
  QTest::newRow("64 px to 16, float32") << 64 << 16 << false;
  QTest::newRow("128 px to 4, float32") << 128 << 4 << false;
}

void TestSlicedWasserstein::levelPatchesMatchThePyramid() {
  // LaplacianPatches (what compute() uses, image by image) against the whole-set pieces that are
  // checked against Python below.
  QFETCH(int, size);
  QFETCH(int, smallest);
  QFETCH(bool, float64);
  const torch::Tensor images = noiseImagesSwd(5, size, size + smallest) + smoothImagesSwd(5, size, smallest);
  auto pyramid = SlicedWasserstein::laplacianPyramid(images, smallest);
  QVERIFY(pyramid);
  const std::size_t levels = pyramid->size();
  QCOMPARE(levels, SlicedWasserstein::resolutions(size, smallest).size());
  const int patch = smallest >= 7 ? 7 : 3;
  LaplacianPatches patches;
  for (std::size_t l = 0; l < levels; ++l) {
    const std::int64_t level_size = (*pyramid)[l].size(2), half = patch / 2;
    const torch::Tensor pos = torch::cat({torch::arange(5, torch::kLong).repeat_interleave(40).view({200, 1}),
                                          torch::randint(half, level_size - half, {200, 2}, torch::kLong)}, 1);
    auto expected = SlicedWasserstein::patchDescriptors((*pyramid)[l], pos, patch);
    QVERIFY(expected);
    const torch::Tensor input = images.to(float64 ? torch::kFloat64 : torch::kFloat32).contiguous();
    torch::Tensor ours = torch::empty({200, 3 * patch * patch}, input.options());
    patches.gather(input, l, levels, pos, patch, ours);
    const double scale = expected->abs().max().item<double>();
    const double error = (ours.to(torch::kFloat64) - *expected).abs().max().item<double>();
    QVERIFY2(scale > 0, "a flat level tests nothing");
    QVERIFY2(error <= (float64 ? 1e-12 : 2e-6) * scale,
             qPrintable(QString("level %1 (%2 px): error %3 of %4").arg(l).arg(level_size).arg(error).arg(scale)));
  }
}

void TestSlicedWasserstein::agreesWithPython_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("images");
  QTest::addColumn<int>("per_image");
  QTest::addColumn<int>("projections");
  QTest::addColumn<int>("kind");  // 0 two noise sets, 1 two smooth sets, 2 smooth against its blur
  QTest::addColumn<int>("seed");
  QTest::newRow("32 px, noise") << 32 << 4 << 64 << 128 << 0 << 1;
  QTest::newRow("32 px, smooth") << 32 << 5 << 128 << 256 << 1 << 2;
  QTest::newRow("64 px, smooth") << 64 << 4 << 128 << 512 << 1 << 3;
  QTest::newRow("64 px, blurred") << 64 << 3 << 128 << 512 << 2 << 4;
  QTest::newRow("64 px, noise, seed 5") << 64 << 3 << 100 << 300 << 0 << 5;
  QTest::newRow("128 px, smooth") << 128 << 3 << 128 << 512 << 1 << 6;
  QTest::newRow("128 px, blurred") << 128 << 2 << 128 << 256 << 2 << 7;
}

void TestSlicedWasserstein::agreesWithPython() {
  QFETCH(int, size);
  QFETCH(int, images);
  QFETCH(int, per_image);
  QFETCH(int, projections);
  QFETCH(int, kind);
  QFETCH(int, seed);
  const torch::Tensor a = kind == 0 ? noiseImagesSwd(images, size, seed) : smoothImagesSwd(images, size, seed);
  const torch::Tensor b = kind == 0   ? noiseImagesSwd(images, size, seed + 1000)
                          : kind == 1 ? smoothImagesSwd(images, size, seed + 1000)
                                      : blurredSwdImages(a, 1.0);
  auto pa = SlicedWasserstein::laplacianPyramid(a, 16);
  auto pb = SlicedWasserstein::laplacianPyramid(b, 16);
  QVERIFY2(pa && pb, pa ? pb.error().c_str() : pa.error().c_str());
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(writeNpy(dir.filePath("a.npy"), a) && writeNpy(dir.filePath("b.npy"), b));
  torch::manual_seed(seed + 77);
  std::vector<double> ours;
  for (std::size_t l = 0; l < pa->size(); ++l) {
    const std::int64_t s = (*pa)[l].size(2);
    const torch::Tensor pos_a = randomPositions(images, per_image, s), pos_b = randomPositions(images, per_image, s);
    const torch::Tensor directions = torch::randn({147, projections}, torch::kFloat64);
    auto da = SlicedWasserstein::patchDescriptors((*pa)[l], pos_a, 7);
    auto db = SlicedWasserstein::patchDescriptors((*pb)[l], pos_b, 7);
    QVERIFY2(da && db, da ? db.error().c_str() : da.error().c_str());
    QCOMPARE(da->size(0), std::int64_t(images * per_image));
    QCOMPARE(da->size(1), std::int64_t(147));
    auto na = SlicedWasserstein::normaliseDescriptors(*da);
    auto nb = SlicedWasserstein::normaliseDescriptors(*db);
    QVERIFY(na && nb);
    auto d = SlicedWasserstein::distance(*na, *nb, directions);
    QVERIFY2(d, d.error().c_str());
    ours.push_back(*d);
    const QString suffix = QString("_%1.npy").arg(l);
    QVERIFY(writeNpy(dir.filePath("positions_a" + suffix), pos_a));
    QVERIFY(writeNpy(dir.filePath("positions_b" + suffix), pos_b));
    QVERIFY(writeNpy(dir.filePath("directions" + suffix), directions));
  }
  const auto reference = runPythonReference("sliced_wasserstein_reference.py", {dir.path(), "16", "7"});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonArray levels = reference.json["resolutions"].toArray();
  const QJsonArray distances = reference.json["distances"].toArray();
  QCOMPARE(levels.size(), qsizetype(pa->size()));
  for (std::size_t l = 0; l < pa->size(); ++l) {
    const auto i = static_cast<qsizetype>(l);
    QCOMPARE(levels[i].toInt(), int((*pa)[l].size(2)));
    const double norm_a = (*pa)[l].norm().item<double>(), norm_b = (*pb)[l].norm().item<double>();
    QVERIFY(relativelyCloseSwd(norm_a, reference.json["level_norms_a"].toArray()[i].toDouble(), 1e-9));
    QVERIFY(relativelyCloseSwd(norm_b, reference.json["level_norms_b"].toArray()[i].toDouble(), 1e-9));
    const double theirs = distances[i].toDouble();
    QVERIFY2(relativelyCloseSwd(ours[l], theirs, 1e-6),
             qPrintable(QString("level %1: %2 vs %3").arg(l).arg(ours[l], 0, 'g', 17).arg(theirs, 0, 'g', 17)));
    QVERIFY(ours[l] > 0);
  }
}

void TestSlicedWasserstein::identicalSetsWithTheSamePositionsGiveZero_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("seed");
  QTest::newRow("32 px") << 32 << 1;
  QTest::newRow("64 px") << 64 << 2;
  QTest::newRow("128 px") << 128 << 3;
}

void TestSlicedWasserstein::identicalSetsWithTheSamePositionsGiveZero() {
  QFETCH(int, size);
  QFETCH(int, seed);
  const torch::Tensor a = smoothImagesSwd(6, size, seed);
  // The pieces, one set of positions for both copies.
  auto pyramid = SlicedWasserstein::laplacianPyramid(a, 16);
  QVERIFY(pyramid);
  const torch::Tensor pos = randomPositions(6, 128, size);
  auto da = SlicedWasserstein::normaliseDescriptors(*SlicedWasserstein::patchDescriptors((*pyramid)[0], pos, 7));
  auto db = SlicedWasserstein::normaliseDescriptors(*SlicedWasserstein::patchDescriptors((*pyramid)[0], pos, 7));
  QVERIFY(da && db);
  auto d = SlicedWasserstein::distance(*da, *db, torch::randn({147, 512}, torch::kFloat64));
  QVERIFY(d);
  QCOMPARE(*d, 0.0);
  // The whole metric with shared positions.
  SlicedWassersteinOptions options = shared();
  options.seed = static_cast<std::uint64_t>(seed);
  auto result = SlicedWasserstein::compute(a, a.clone(), options);
  QVERIFY2(result, result.error().c_str());
  QCOMPARE(int(result->distances_e3.size()), int(SlicedWasserstein::resolutions(size, 16).size()));
  for (double distance : result->distances_e3) QCOMPARE(distance, 0.0);
  QCOMPARE(result->mean_e3, 0.0);
}

void TestSlicedWasserstein::independentDrawsOfIdenticalSetsGiveLittle() {
  // Karras' setting: each set has its own patches, so even identical sets differ a little.
  const torch::Tensor a = smoothImagesSwd(16, 32, 9);
  auto same = SlicedWasserstein::compute(a, a, {});
  auto blur = SlicedWasserstein::compute(a, blurredSwdImages(a, 2.0), {});
  QVERIFY2(same && blur, same ? blur.error().c_str() : same.error().c_str());
  for (double distance : same->distances_e3) QVERIFY(distance > 0);
  QVERIFY2(same->mean_e3 * 1.5 < blur->mean_e3, qPrintable(QString("%1 vs %2").arg(same->mean_e3).arg(blur->mean_e3)));
}

void TestSlicedWasserstein::blurGrowsTheDistance_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("seed");
  QTest::newRow("32 px, seed 1") << 32 << 1;
  QTest::newRow("32 px, seed 2") << 32 << 2;
  QTest::newRow("64 px, seed 3") << 64 << 3;
  QTest::newRow("64 px, seed 4") << 64 << 4;
}

void TestSlicedWasserstein::blurGrowsTheDistance() {
  QFETCH(int, size);
  QFETCH(int, seed);
  const torch::Tensor a = smoothImagesSwd(16, size, seed);
  std::vector<double> previous(SlicedWasserstein::resolutions(size, 16).size(), 0.0);  // identical: 0
  for (double sigma : {0.5, 1.0, 2.0}) {
    auto result = SlicedWasserstein::compute(a, blurredSwdImages(a, sigma), shared());
    QVERIFY2(result, result.error().c_str());
    for (std::size_t l = 0; l < previous.size(); ++l) {
      QVERIFY2(result->distances_e3[l] > previous[l],
               qPrintable(QString("σ %1, level %2: %3 after %4").arg(sigma).arg(result->resolutions[l])
                              .arg(result->distances_e3[l]).arg(previous[l])));
      previous[l] = result->distances_e3[l];
    }
  }
}

void TestSlicedWasserstein::shiftGrowsTheDistance_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("seed");
  QTest::newRow("32 px") << 32 << 5;
  QTest::newRow("64 px") << 64 << 6;
}

void TestSlicedWasserstein::shiftGrowsTheDistance() {
  QFETCH(int, size);
  QFETCH(int, seed);
  const torch::Tensor a = smoothImagesSwd(16, size, seed);
  double previous = 0;  // identical
  for (int k : {1, 2, 4, 8}) {
    auto result = SlicedWasserstein::compute(a, shifted(a, k), shared());
    QVERIFY2(result, result.error().c_str());
    QVERIFY2(result->mean_e3 > previous,
             qPrintable(QString("shift %1: %2 after %3").arg(k).arg(result->mean_e3).arg(previous)));
    previous = result->mean_e3;
  }
}

void TestSlicedWasserstein::seededAndDeterministic() {
  const torch::Tensor a = smoothImagesSwd(8, 32, 1), b = smoothImagesSwd(8, 32, 2);
  SlicedWassersteinOptions options;
  options.seed = 11;
  auto first = SlicedWasserstein::compute(a, b, options);
  auto again = SlicedWasserstein::compute(a, b, options);
  options.seed = 12;
  auto other = SlicedWasserstein::compute(a, b, options);
  QVERIFY(first && again && other);
  QCOMPARE(first->resolutions, (std::vector<int>{32, 16}));
  QCOMPARE(first->distances_e3, again->distances_e3);  // bit for bit
  QVERIFY(first->distances_e3 != other->distances_e3);
  QCOMPARE(first->images, std::int64_t(8));
  QVERIFY(std::fabs(first->mean_e3 - (first->distances_e3[0] + first->distances_e3[1]) / 2) < 1e-12);
}

void TestSlicedWasserstein::blocksChangeNothing() {
  const torch::Tensor a = smoothImagesSwd(10, 64, 3), b = noiseImagesSwd(10, 64, 4);
  SlicedWassersteinOptions whole, small;
  whole.float64 = small.float64 = true;
  small.block = 3;
  auto x = SlicedWasserstein::compute(a, b, whole);
  auto y = SlicedWasserstein::compute(a, b, small);
  QVERIFY(x && y);
  for (std::size_t l = 0; l < x->distances_e3.size(); ++l)
    QVERIFY2(relativelyCloseSwd(y->distances_e3[l], x->distances_e3[l], 1e-12),
             qPrintable(QString("%1 vs %2").arg(y->distances_e3[l], 0, 'g', 17).arg(x->distances_e3[l], 0, 'g', 17)));
}

void TestSlicedWasserstein::unequalCountsAreSubsampled() {
  const torch::Tensor a = smoothImagesSwd(12, 32, 5), b = smoothImagesSwd(7, 32, 6);
  auto ab = SlicedWasserstein::compute(a, b, {});
  auto ba = SlicedWasserstein::compute(b, a, {});
  QVERIFY2(ab && ba, ab ? ba.error().c_str() : ab.error().c_str());
  QCOMPARE(ab->images, std::int64_t(7));
  QCOMPARE(ba->images, std::int64_t(7));
  for (double distance : ab->distances_e3) QVERIFY(std::isfinite(distance) && distance > 0);
}

void TestSlicedWasserstein::float32IsClose() {
  const torch::Tensor a = smoothImagesSwd(8, 64, 7), b = smoothImagesSwd(8, 64, 8);
  SlicedWassersteinOptions precise;
  precise.float64 = true;
  auto x = SlicedWasserstein::compute(a, b, precise);
  auto y = SlicedWasserstein::compute(a, b, {});  // float32, the default
  QVERIFY(x && y);
  for (std::size_t l = 0; l < x->distances_e3.size(); ++l)
    QVERIFY2(relativelyCloseSwd(y->distances_e3[l], x->distances_e3[l], 1e-4),
             qPrintable(QString("%1 vs %2").arg(y->distances_e3[l]).arg(x->distances_e3[l])));
}

void TestSlicedWasserstein::progressAndCancel() {
  const torch::Tensor a = smoothImagesSwd(6, 32, 1);
  SlicedWassersteinOptions options;
  options.block = 2;
  std::vector<double> fractions;
  options.progress = [&](double f) {
    fractions.push_back(f);
    return true;
  };
  QVERIFY(SlicedWasserstein::compute(a, a, options));
  QVERIFY(!fractions.empty());
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    QVERIFY(fractions[i] > 0 && fractions[i] <= 1);
    if (i) QVERIFY(fractions[i] >= fractions[i - 1]);
  }
  QVERIFY(std::fabs(fractions.back() - 1.0) < 1e-12);
  int calls = 0;
  options.progress = [&](double) { return ++calls < 3; };
  auto result = SlicedWasserstein::compute(a, a, options);
  QVERIFY(!result);
  QCOMPARE(QString::fromStdString(result.error()), QString("SWD: cancelled"));
  QCOMPARE(calls, 3);
}

void TestSlicedWasserstein::badInput_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("4 channels") << 0 << "the first set has 4 channels, images need 3";
  QTest::newRow("below the smallest level") << 1 << "the second set holds 8 px images, below the smallest level of 16 px";
  QTest::newRow("NaN") << 2 << "the second set contains NaN or Inf values";
  QTest::newRow("Inf") << 3 << "the first set contains NaN or Inf values";
  QTest::newRow("empty") << 4 << "the first set is empty";
  QTest::newRow("not images") << 5 << "the first set must be images (N, 3, H, W), got 3 dimensions";
  QTest::newRow("not square") << 6 << "the first set holds 16x32 images, they must be square";
  QTest::newRow("sizes differ") << 7 << "the first set holds 32 px images, the second 64 px";
  QTest::newRow("odd level") << 8 << "70 px images do not halve evenly down to 16 px (the level of 35 px is odd)";
  QTest::newRow("even patch") << 9 << "the patch size must be odd and at least 1, got 6";
  QTest::newRow("no projections") << 10 << "the number of projections must be between 1 and";
  QTest::newRow("no patches") << 11 << "patches per image must be between 1 and";
  QTest::newRow("integer pixels") << 12 << "the first set must hold floating-point pixels";
  QTest::newRow("smallest level below the patch") << 13 << "the smallest level must be at least 4 px and the patch size (7), got 5 px";
}

void TestSlicedWasserstein::badInput() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  torch::Tensor a = torch::zeros({2, 3, 32, 32}), b = torch::zeros({2, 3, 32, 32});
  SlicedWassersteinOptions options;
  switch (kind) {
    case 0: a = torch::zeros({2, 4, 32, 32}); break;
    case 1: b = torch::zeros({2, 3, 8, 8}); break;
    case 2: b[1][2][3][4] = NAN; break;
    case 3: a[0][0][0][0] = INFINITY; break;
    case 4: a = torch::zeros({0, 3, 32, 32}); break;
    case 5: a = torch::zeros({3, 32, 32}); break;
    case 6: a = torch::zeros({2, 3, 32, 16}); break;
    case 7: b = torch::zeros({2, 3, 64, 64}); break;
    case 8: a = b = torch::zeros({2, 3, 70, 70}); break;
    case 9: options.patch_size = 6; break;
    case 10: options.projections = 0; break;
    case 11: options.patches_per_image = 0; break;
    case 12: a = torch::zeros({2, 3, 32, 32}, torch::kInt); break;
    case 13: options.min_resolution = 5; break;
  }
  auto result = SlicedWasserstein::compute(a, b, options);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).startsWith("SWD: "), result.error().c_str());
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

void TestSlicedWasserstein::badPieces() {
  const torch::Tensor level = torch::zeros({2, 3, 16, 16}, torch::kFloat64);
  auto outside = SlicedWasserstein::patchDescriptors(level, torch::tensor({0, 3, 13}, torch::kLong).view({1, 3}), 7);
  QVERIFY(!outside);
  QVERIFY2(QString::fromStdString(outside.error()).contains("centre column is outside 3..12 (got 13)"),
           outside.error().c_str());
  auto image = SlicedWasserstein::patchDescriptors(level, torch::tensor({2, 8, 8}, torch::kLong).view({1, 3}), 7);
  QVERIFY(!image);
  QVERIFY2(QString::fromStdString(image.error()).contains("image index is outside 0..1 (got 2)"),
           image.error().c_str());
  auto floats = SlicedWasserstein::patchDescriptors(level, torch::zeros({1, 3}), 7);
  QVERIFY(!floats);
  QVERIFY(QString::fromStdString(floats.error()).contains("must be integers"));
  auto inside = SlicedWasserstein::patchDescriptors(level, torch::tensor({1, 3, 12}, torch::kLong).view({1, 3}), 7);
  QVERIFY2(inside, inside.error().c_str());
  auto columns = SlicedWasserstein::normaliseDescriptors(torch::zeros({4, 10}));
  QVERIFY(!columns);
  QVERIFY(QString::fromStdString(columns.error()).contains("3·k columns"));
  const torch::Tensor d = torch::rand({5, 6});
  auto mismatch = SlicedWasserstein::distance(d, torch::rand({4, 6}), torch::randn({6, 8}));
  QVERIFY(!mismatch);
  QVERIFY2(QString::fromStdString(mismatch.error()).contains("5x6 and 4x6"), mismatch.error().c_str());
  auto rows = SlicedWasserstein::distance(d, d, torch::randn({5, 8}));
  QVERIFY(!rows);
  QVERIFY(QString::fromStdString(rows.error()).contains("a matrix of 6 rows"));
  torch::Tensor zero = torch::randn({6, 8});
  zero.select(1, 3).zero_();
  auto zeroDirection = SlicedWasserstein::distance(d, d, zero);
  QVERIFY(!zeroDirection);
  QVERIFY(QString::fromStdString(zeroDirection.error()).contains("a direction is zero"));
  torch::Tensor nan = d.clone();
  nan[0][0] = NAN;
  auto nanDescriptors = SlicedWasserstein::distance(nan, d, torch::randn({6, 8}));
  QVERIFY(!nanDescriptors);
  QVERIFY(QString::fromStdString(nanDescriptors.error()).contains("NaN or Inf"));
}

STREETGAN_TEST_GUILESS_MAIN(TestSlicedWasserstein)
#include "tst_sliced_wasserstein.moc"
