// MsSsim against an independent numpy reference (tests/core/reference/ms_ssim_reference.py) to 1e-6
// relative on random, structured, constant and inverted pairs at several sizes and scale counts;
// identical pairs give exactly 1; the scale choice, the weights, the diversity's pairs and
// statistics, and every bad input.
#include "core/eval/ms_ssim.h"
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

torch::Tensor smoothImagesSsim(int n, int size, int seed) {
  torch::manual_seed(seed);
  const std::int64_t low = std::max(2, size / 8);
  const auto options =
      F::InterpolateFuncOptions().size(std::vector<std::int64_t>{size, size}).mode(torch::kBilinear).align_corners(false);
  const torch::Tensor up = F::interpolate(torch::randn({n, 3, low, low}), options);
  return (0.6 * up + 0.1 * torch::randn({n, 3, size, size})).clamp(-1, 1);
}

torch::Tensor noiseImagesSsim(int n, int size, int seed) {
  torch::manual_seed(seed);
  return torch::rand({n, 3, size, size}) * 2 - 1;
}

// Pairs of a kind: 0 independent noise, 1 independent smooth, 2 smooth and a noisy copy,
// 3 identical, 4 constants, 5 an image and its negative, 6 a smooth image and a brighter copy.
std::pair<torch::Tensor, torch::Tensor> pairsOf(int kind, int n, int size, int seed) {
  switch (kind) {
    case 0: return {noiseImagesSsim(n, size, seed), noiseImagesSsim(n, size, seed + 500)};
    case 1: return {smoothImagesSsim(n, size, seed), smoothImagesSsim(n, size, seed + 500)};
    case 2: {
      const torch::Tensor a = smoothImagesSsim(n, size, seed);
      return {a, (a + 0.1 * torch::randn_like(a)).clamp(-1, 1)};
    }
    case 3: {
      const torch::Tensor a = smoothImagesSsim(n, size, seed);
      return {a, a.clone()};
    }
    case 4: {
      torch::manual_seed(seed);
      return {torch::rand({n, 3, 1, 1}).expand({n, 3, size, size}) * 2 - 1,
              torch::rand({n, 3, 1, 1}).expand({n, 3, size, size}) * 2 - 1};
    }
    case 5: {
      const torch::Tensor a = noiseImagesSsim(n, size, seed);
      return {a, -a};
    }
    default: {
      const torch::Tensor a = smoothImagesSsim(n, size, seed);
      return {a, (a * 0.8 + 0.3).clamp(-1, 1)};
    }
  }
}

bool relativelyCloseSsim(double ours, double reference, double relative) {
  return std::fabs(ours - reference) <= relative * std::fabs(reference) + 1e-300;
}

}  // namespace

class TestMsSsim : public QObject {
  Q_OBJECT
private slots:
  void scalesFor_data();
  void scalesFor();
  void weights();
  void identicalPairsGiveExactlyOne_data();
  void identicalPairsGiveExactlyOne();
  void agreesWithPython_data();
  void agreesWithPython();
  void symmetric();
  void noiseLowersIt();
  void pairIndices();
  void diversityIsTheMeanOverItsPairs();
  void diversityOfCopiesIsOne();
  void similarSetsAreLessDiverse();
  void diversityReportsScales_data();
  void diversityReportsScales();
  void badInput_data();
  void badInput();
  void badDiversityInput();
};

void TestMsSsim::scalesFor_data() {
  QTest::addColumn<int>("height");
  QTest::addColumn<int>("width");
  QTest::addColumn<int>("scales");
  QTest::newRow("10") << 10 << 10 << 0;
  QTest::newRow("11") << 11 << 11 << 1;
  QTest::newRow("20") << 20 << 20 << 1;
  QTest::newRow("21") << 21 << 21 << 2;
  QTest::newRow("32") << 32 << 32 << 2;
  QTest::newRow("41") << 41 << 41 << 3;
  QTest::newRow("64") << 64 << 64 << 3;
  QTest::newRow("81") << 81 << 81 << 4;
  QTest::newRow("128") << 128 << 128 << 4;
  QTest::newRow("160") << 160 << 160 << 4;
  QTest::newRow("161") << 161 << 161 << 5;
  QTest::newRow("1024") << 1024 << 1024 << 5;
  QTest::newRow("64x128") << 64 << 128 << 3;
}

void TestMsSsim::scalesFor() {
  QFETCH(int, height);
  QFETCH(int, width);
  QFETCH(int, scales);
  QCOMPARE(MsSsim::scalesFor(height, width), scales);
  if (scales > 0) {
    QVERIFY(MsSsim::minimumSize(scales) <= std::min(height, width));
    if (scales < MsSsim::kMaxScales) QVERIFY(MsSsim::minimumSize(scales + 1) > std::min(height, width));
  }
}

void TestMsSsim::weights() {
  const std::vector<double> standard{0.0448, 0.2856, 0.3001, 0.2363, 0.1333};
  const std::vector<std::int64_t> sizes{11, 21, 41, 81, 161};
  for (int scales = 1; scales <= 5; ++scales) {
    QCOMPARE(MsSsim::minimumSize(scales), sizes[std::size_t(scales - 1)]);
    const std::vector<double> w = MsSsim::weights(scales);
    QCOMPARE(int(w.size()), scales);
    double sum = 0, standard_sum = 0;
    for (int s = 0; s < scales; ++s) sum += w[std::size_t(s)], standard_sum += standard[std::size_t(s)];
    if (scales == 5) {  // as they are, as tf: they sum to 1.0001
      QVERIFY(w == standard);
      continue;
    }
    QVERIFY(std::fabs(sum - 1) < 1e-15);
    for (int s = 0; s < scales; ++s)
      QVERIFY(std::fabs(w[std::size_t(s)] - standard[std::size_t(s)] / standard_sum) < 1e-15);
  }
  QVERIFY(std::fabs(MsSsim::weights(3)[0] - 0.0448 / 0.6305) < 1e-15);
}

void TestMsSsim::identicalPairsGiveExactlyOne_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<bool>("smooth");
  QTest::newRow("32 px, noise") << 32 << false;
  QTest::newRow("64 px, smooth") << 64 << true;
  QTest::newRow("64 px, noise") << 64 << false;
  QTest::newRow("128 px, smooth") << 128 << true;
}

void TestMsSsim::identicalPairsGiveExactlyOne() {
  QFETCH(int, size);
  QFETCH(bool, smooth);
  const torch::Tensor a = smooth ? smoothImagesSsim(5, size, size) : noiseImagesSsim(5, size, size);
  auto values = MsSsim::pairwise(a, a.clone());
  QVERIFY2(values, values.error().c_str());
  QCOMPARE(values->size(0), std::int64_t(5));
  for (int i = 0; i < 5; ++i) QCOMPARE((*values)[i].item<double>(), 1.0);
}

void TestMsSsim::agreesWithPython_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("scales");  // 0: the most
  QTest::addColumn<int>("kind");
  QTest::addColumn<int>("seed");
  QTest::newRow("32 px, noise") << 32 << 0 << 0 << 1;
  QTest::newRow("32 px, noisy copies") << 32 << 0 << 2 << 2;
  QTest::newRow("45 px (odd sides), smooth") << 45 << 0 << 1 << 3;
  QTest::newRow("64 px, smooth") << 64 << 0 << 1 << 4;
  QTest::newRow("64 px, noisy copies") << 64 << 0 << 2 << 5;
  QTest::newRow("64 px, identical") << 64 << 0 << 3 << 6;
  QTest::newRow("64 px, constants") << 64 << 0 << 4 << 7;
  QTest::newRow("64 px, negatives (clamped to 0)") << 64 << 0 << 5 << 8;
  QTest::newRow("64 px, brighter copies") << 64 << 0 << 6 << 9;
  QTest::newRow("64 px, 1 scale") << 64 << 1 << 2 << 10;
  QTest::newRow("128 px, noisy copies") << 128 << 0 << 2 << 11;
  QTest::newRow("128 px, 2 scales, seed 12") << 128 << 2 << 1 << 12;
  QTest::newRow("161 px, 5 scales") << 161 << 0 << 2 << 13;
}

void TestMsSsim::agreesWithPython() {
  QFETCH(int, size);
  QFETCH(int, scales);
  QFETCH(int, kind);
  QFETCH(int, seed);
  const auto [a, b] = pairsOf(kind, 4, size, seed);
  auto ours = MsSsim::pairwise(a, b, scales);
  QVERIFY2(ours, ours.error().c_str());
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QVERIFY(writeNpy(dir.filePath("a.npy"), a) && writeNpy(dir.filePath("b.npy"), b));
  const int used = scales ? scales : MsSsim::scalesFor(size, size);
  const auto reference =
      runPythonReference("ms_ssim_reference.py", {dir.filePath("a.npy"), dir.filePath("b.npy"), QString::number(used)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonArray values = reference.json["ms_ssim"].toArray();
  QCOMPARE(values.size(), qsizetype(4));
  for (int i = 0; i < 4; ++i) {
    const double mine = (*ours)[i].item<double>(), theirs = values[i].toDouble();
    QVERIFY2(relativelyCloseSsim(mine, theirs, 1e-6),
             qPrintable(QString("pair %1: %2 vs %3").arg(i).arg(mine, 0, 'g', 17).arg(theirs, 0, 'g', 17)));
    QVERIFY(mine >= 0 && mine <= 1 + 1e-12);
    if (kind == 3) QCOMPARE(mine, 1.0);
    if (kind == 5) QCOMPARE(mine, 0.0);
  }
}

void TestMsSsim::symmetric() {
  const auto [a, b] = pairsOf(1, 6, 64, 3);
  auto ab = MsSsim::pairwise(a, b), ba = MsSsim::pairwise(b, a);
  QVERIFY(ab && ba);
  QVERIFY(((*ab) - (*ba)).abs().max().item<double>() < 1e-15);
}

void TestMsSsim::noiseLowersIt() {
  const torch::Tensor a = smoothImagesSsim(4, 64, 21);
  torch::manual_seed(22);
  const torch::Tensor noise = torch::randn_like(a);
  torch::Tensor previous = torch::ones({4}, torch::kFloat64);
  for (double sigma : {0.02, 0.05, 0.1, 0.2, 0.4}) {
    auto values = MsSsim::pairwise(a, (a + sigma * noise).clamp(-1, 1));
    QVERIFY(values);
    QVERIFY2((*values < previous).all().item<bool>(), qPrintable(QString("σ %1").arg(sigma)));
    previous = *values;
  }
}

void TestMsSsim::pairIndices() {
  const torch::Tensor pairs = MsSsim::pairIndices(5, 2000, 7);
  QCOMPARE(pairs.size(0), std::int64_t(2000));
  QCOMPARE(pairs.size(1), std::int64_t(2));
  QVERIFY((pairs.select(1, 0) != pairs.select(1, 1)).all().item<bool>());
  QVERIFY(pairs.min().item<std::int64_t>() == 0 && pairs.max().item<std::int64_t>() == 4);
  // every ordered pair of distinct images turns up (20 of them, about 100 times each)
  const torch::Tensor codes = pairs.select(1, 0) * 5 + pairs.select(1, 1);
  QCOMPARE(std::get<0>(at::_unique(codes)).size(0), std::int64_t(20));
  QVERIFY(torch::equal(pairs, MsSsim::pairIndices(5, 2000, 7)));
  QVERIFY(!torch::equal(pairs, MsSsim::pairIndices(5, 2000, 8)));
  QCOMPARE(MsSsim::pairIndices(1, 10, 0).size(0), std::int64_t(0));
}

void TestMsSsim::diversityIsTheMeanOverItsPairs() {
  const torch::Tensor images = smoothImagesSsim(20, 64, 31);
  MsSsimDiversityOptions options;
  options.pairs = 300;  // more than one block of pairs
  options.seed = 3;
  auto diversity = MsSsim::diversity(images, options);
  QVERIFY2(diversity, diversity.error().c_str());
  const torch::Tensor pairs = MsSsim::pairIndices(20, 300, 3);
  auto values =
      MsSsim::pairwise(images.index_select(0, pairs.select(1, 0)), images.index_select(0, pairs.select(1, 1)));
  QVERIFY(values);
  const double mean = values->mean().item<double>();
  const double stderr_mean = values->std(/*unbiased=*/true).item<double>() / std::sqrt(300.0);
  QVERIFY(std::fabs(diversity->mean - mean) < 1e-12);
  QVERIFY(std::fabs(diversity->stderr_mean - stderr_mean) < 1e-12);
  QCOMPARE(diversity->pairs, std::int64_t(300));
  QCOMPARE(diversity->scales, 3);
  QCOMPARE(diversity->size, std::int64_t(64));
}

void TestMsSsim::diversityOfCopiesIsOne() {
  const torch::Tensor one = smoothImagesSsim(1, 64, 41);
  auto diversity = MsSsim::diversity(one.expand({8, 3, 64, 64}).contiguous(), {});
  QVERIFY2(diversity, diversity.error().c_str());
  QCOMPARE(diversity->mean, 1.0);
  QCOMPARE(diversity->stderr_mean, 0.0);
  QCOMPARE(diversity->pairs, std::int64_t(1000));
}

void TestMsSsim::similarSetsAreLessDiverse() {
  const torch::Tensor one = smoothImagesSsim(1, 64, 51);
  torch::manual_seed(52);
  const torch::Tensor copies = (one.expand({16, 3, 64, 64}) + 0.1 * torch::randn({16, 3, 64, 64})).clamp(-1, 1);
  const torch::Tensor varied = smoothImagesSsim(16, 64, 53);
  auto similar = MsSsim::diversity(copies, {});
  auto diverse = MsSsim::diversity(varied, {});
  QVERIFY(similar && diverse);
  QVERIFY2(similar->mean > diverse->mean + 10 * (similar->stderr_mean + diverse->stderr_mean),
           qPrintable(QString("%1 vs %2").arg(similar->mean).arg(diverse->mean)));
  QVERIFY(diverse->stderr_mean > 0);
}

void TestMsSsim::diversityReportsScales_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<int>("scales");
  QTest::newRow("32 px") << 32 << 2;
  QTest::newRow("64 px") << 64 << 3;
  QTest::newRow("128 px") << 128 << 4;
}

void TestMsSsim::diversityReportsScales() {
  QFETCH(int, size);
  QFETCH(int, scales);
  MsSsimDiversityOptions options;
  options.pairs = 10;
  auto diversity = MsSsim::diversity(noiseImagesSsim(4, size, size), options);
  QVERIFY2(diversity, diversity.error().c_str());
  QCOMPARE(diversity->scales, scales);
  QCOMPARE(diversity->size, std::int64_t(size));
  QVERIFY(diversity->mean >= 0 && diversity->mean < 0.5);  // independent noise
}

void TestMsSsim::badInput_data() {
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("error");
  QTest::newRow("not images") << 0 << "the first images must be images (N, C, H, W), got 3 dimensions";
  QTest::newRow("shapes differ") << 1 << "the image pairs differ in shape: (2, 3, 32, 32) and (3, 3, 32, 32)";
  QTest::newRow("NaN") << 2 << "the second images contain NaN or Inf values";
  QTest::newRow("below the window") << 3 << "the first images are 10x10 px, below the 11 px window";
  QTest::newRow("6 scales") << 4 << "the number of scales must be between 1 and 5 (or 0: the most), got 6";
  QTest::newRow("negative scales") << 5 << "got -1";
  QTest::newRow("too many scales for 32 px") << 6 << "3 scales need images of at least 41 px, got 32 px";
  QTest::newRow("empty") << 7 << "the first images are empty";
  QTest::newRow("integer pixels") << 8 << "the second images must hold floating-point pixels";
}

void TestMsSsim::badInput() {
  QFETCH(int, kind);
  QFETCH(QString, error);
  torch::Tensor a = torch::zeros({2, 3, 32, 32}), b = torch::zeros({2, 3, 32, 32});
  int scales = 0;
  switch (kind) {
    case 0: a = torch::zeros({3, 32, 32}); break;
    case 1: b = torch::zeros({3, 3, 32, 32}); break;
    case 2: b[1][0][5][5] = NAN; break;
    case 3: a = b = torch::zeros({2, 3, 10, 10}); break;
    case 4: scales = 6; break;
    case 5: scales = -1; break;
    case 6: scales = 3; break;
    case 7: a = b = torch::zeros({0, 3, 32, 32}); break;
    case 8: b = torch::zeros({2, 3, 32, 32}, torch::kInt); break;
  }
  auto result = MsSsim::pairwise(a, b, scales);
  QVERIFY(!result);
  QVERIFY2(QString::fromStdString(result.error()).startsWith("MS-SSIM: "), result.error().c_str());
  QVERIFY2(QString::fromStdString(result.error()).contains(error), result.error().c_str());
}

void TestMsSsim::badDiversityInput() {
  MsSsimDiversityOptions options;
  auto one = MsSsim::diversity(torch::zeros({1, 3, 32, 32}), options);
  QVERIFY(!one);
  QVERIFY2(QString::fromStdString(one.error()).contains("needs at least 2 images, got 1"), one.error().c_str());
  options.pairs = 0;
  auto none = MsSsim::diversity(torch::zeros({4, 3, 32, 32}), options);
  QVERIFY(!none);
  QVERIFY2(QString::fromStdString(none.error()).contains("pairs must be between 1 and"), none.error().c_str());
  torch::Tensor nan = torch::zeros({4, 3, 32, 32});
  nan[2][1][0][0] = NAN;
  auto bad = MsSsim::diversity(nan, {});
  QVERIFY(!bad);
  QVERIFY(QString::fromStdString(bad.error()).contains("NaN or Inf"));
  auto small = MsSsim::diversity(torch::zeros({4, 3, 8, 8}), {});
  QVERIFY(!small);
  QVERIFY(QString::fromStdString(small.error()).contains("below the 11 px window"));
}

STREETGAN_TEST_GUILESS_MAIN(TestMsSsim)
#include "tst_ms_ssim.moc"
