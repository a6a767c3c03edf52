// The feature-space metrics (FID, KID, precision/recall/density/coverage) and the pixel PCA
// features, against independent numpy/scipy references on the same inputs
// (tests/core/reference/feature_metrics_reference.py), and how they behave on sets whose answer
// is known.
#include "core/eval/feature_distances.h"
#include "core/eval/manifold_metrics.h"
#include "core/eval/network_features.h"
#include "core/eval/pixel_pca_features.h"
#include "tests/support/python_reference.h"
#include "tests/support/test_suite.h"

#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using streetgan::test::runPythonReference;
using streetgan::test::writeNpy;

namespace {

// Rows from a correlated Gaussian: `n` × `d`, mean `shift`, scaled by `scale`, from `seed`.
torch::Tensor gaussianRows(std::int64_t n, std::int64_t d, double shift, double scale, std::uint64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor mixing = torch::randn({d, d}, torch::kFloat64) / std::sqrt(static_cast<double>(d));
  return torch::mm(torch::randn({n, d}, torch::kFloat64), mixing) * scale + shift;
}

bool near(double ours, double reference, double relative) {
  return std::abs(ours - reference) <= relative * std::max(1.0, std::abs(reference)) ||
         std::abs(ours - reference) <= relative * std::abs(reference);
}

QString npyFeatures(const QTemporaryDir& dir, const QString& name, const torch::Tensor& t) {
  const QString path = dir.filePath(name + ".npy");
  if (!writeNpy(path, t)) qFatal("cannot write %s", qPrintable(path));
  return path;
}

}  // namespace

class TestFeatureMetrics : public QObject {
  Q_OBJECT

private slots:
  void frechetMatchesReference_data();
  void frechetMatchesReference();
  void frechetOfIdenticalSetsIsZero();
  void kernelMatchesReference_data();
  void kernelMatchesReference();
  void aRowNoSubsetDrawsLeavesTheSumsAlone();
  void kernelSeparatesShiftedSets();
  void manifoldMatchesReference_data();
  void manifoldMatchesReference();
  void manifoldOfIdenticalAndCollapsedSets();
  void pixelPcaMatchesReference_data();
  void pixelPcaMatchesReference();
  void networkFeaturesMatchReference();
  void badInputs();
};

void TestFeatureMetrics::frechetMatchesReference_data() {
  QTest::addColumn<int>("n");
  QTest::addColumn<int>("d");
  QTest::addColumn<double>("shift");
  QTest::addColumn<double>("scale");
  QTest::newRow("8 dimensions, shifted") << 300 << 8 << 0.5 << 1.0;
  QTest::newRow("32 dimensions, scaled") << 400 << 32 << 0.0 << 1.7;
  QTest::newRow("64 dimensions, both") << 600 << 64 << -0.3 << 0.6;
}

void TestFeatureMetrics::frechetMatchesReference() {
  QFETCH(int, n);
  QFETCH(int, d);
  QFETCH(double, shift);
  QFETCH(double, scale);
  QTemporaryDir dir;
  const torch::Tensor real = gaussianRows(n, d, 0.0, 1.0, 1), fake = gaussianRows(n + 17, d, shift, scale, 2);
  auto ours = FeatureDistances::frechet(real, fake);
  QVERIFY2(ours.ok(), ours.error().c_str());
  auto reference = runPythonReference("feature_metrics_reference.py",
                                      {"fid", npyFeatures(dir, "real", real), npyFeatures(dir, "fake", fake)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const double expected = reference.json["fid"].toDouble();
  QVERIFY2(near(*ours, expected, 1e-6), qPrintable(QString("ours %1, reference %2").arg(*ours, 0, 'g', 12).arg(expected, 0, 'g', 12)));
}

void TestFeatureMetrics::frechetOfIdenticalSetsIsZero() {
  const torch::Tensor rows = gaussianRows(500, 16, 0.2, 1.0, 3);
  auto distance = FeatureDistances::frechet(rows, rows.clone());
  QVERIFY2(distance.ok(), distance.error().c_str());
  // Only rounding separates the two: well under a millionth of the features' variance.
  QVERIFY2(*distance < 1e-9, qPrintable(QString::number(*distance)));
}

void TestFeatureMetrics::kernelMatchesReference_data() {
  QTest::addColumn<int>("subset_size");
  QTest::addColumn<int>("subsets");
  QTest::addColumn<double>("shift");
  QTest::addColumn<int>("rows");
  QTest::addColumn<bool>("duplicates");
  // Many large subsets of few rows read their sums from the kernel matrices of all rows, computed
  // once; a few small subsets, or above 2,364 rows a side, take each subset's own products.
  QTest::newRow("subsets of 50, same distribution: own products") << 50 << 5 << 0.0 << 400 << false;
  QTest::newRow("subsets of 200, shifted: own products") << 200 << 3 << 0.4 << 400 << false;
  QTest::newRow("20 subsets of 250, shifted: kernel matrices") << 250 << 20 << 0.4 << 400 << false;
  QTest::newRow("20 subsets of 250, a row twice in each: kernel matrices") << 250 << 20 << 0.4 << 400 << true;
  QTest::newRow("subsets of 50, a row twice in each: own products") << 50 << 3 << 0.4 << 400 << true;
  QTest::newRow("2,400 rows a side: own products") << 1000 << 3 << 0.4 << 2400 << false;
}

void TestFeatureMetrics::kernelMatchesReference() {
  QFETCH(int, subset_size);
  QFETCH(int, subsets);
  QFETCH(double, shift);
  QFETCH(int, rows);
  QFETCH(bool, duplicates);
  QTemporaryDir dir;
  const int fake_rows = rows > 1000 ? rows : rows * 3 / 4;  // 400 → 300, as before
  const torch::Tensor real = gaussianRows(rows, 24, 0.0, 1.0, 4), fake = gaussianRows(fake_rows, 24, shift, 1.0, 5);
  const torch::Tensor real_subsets = FeatureDistances::subsetIndices(rows, subset_size, subsets, 7);
  const torch::Tensor fake_subsets = FeatureDistances::subsetIndices(fake_rows, subset_size, subsets, 8);
  if (duplicates) {  // each subset's second row is its first again: counted twice, as the reference does
    real_subsets.select(1, 1).copy_(real_subsets.select(1, 0));
    fake_subsets.select(1, 1).copy_(fake_subsets.select(1, 0));
  }
  auto ours = FeatureDistances::kernelOnSubsets(real, fake, real_subsets, fake_subsets);
  QVERIFY2(ours.ok(), ours.error().c_str());
  auto reference = runPythonReference("feature_metrics_reference.py",
                                      {"kid", npyFeatures(dir, "real", real), npyFeatures(dir, "fake", fake),
                                       npyFeatures(dir, "rs", real_subsets), npyFeatures(dir, "fs", fake_subsets)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonArray expected = reference.json["values"].toArray();
  QCOMPARE(expected.size(), static_cast<int>(ours->size()));
  for (int i = 0; i < expected.size(); ++i) {
    // MMD² is a difference of large sums: compare against the kernel's scale, not the difference.
    QVERIFY2(std::abs((*ours)[i] - expected[i].toDouble()) < 1e-9,
             qPrintable(QString("subset %1: ours %2, reference %3").arg(i).arg((*ours)[i]).arg(expected[i].toDouble())));
  }
  // The subsets drawn are distinct rows.
  for (int s = 0; s < subsets && !duplicates; ++s)
    QCOMPARE(std::get<0>(torch::_unique(real_subsets[s])).size(0), static_cast<std::int64_t>(subset_size));
}

void TestFeatureMetrics::aRowNoSubsetDrawsLeavesTheSumsAlone() {
  // Features this large overflow the cubic kernel. The kernel matrices of all rows would hold Inf
  // in that row, and 0 · Inf would spoil every subset's sum: the subsets' own products never read it.
  const torch::Tensor real = gaussianRows(400, 24, 0.0, 1.0, 4), fake = gaussianRows(300, 24, 0.4, 1.0, 5);
  const torch::Tensor huge = real.clone();
  huge[399].fill_(1e120);
  const torch::Tensor subsets = torch::arange(250, torch::kInt64).repeat({20, 1});  // rows 0 to 249, 20 times
  auto plain = FeatureDistances::kernelOnSubsets(real, fake, subsets, subsets);
  auto spoiled = FeatureDistances::kernelOnSubsets(huge, fake, subsets, subsets);
  QVERIFY2(plain.ok() && spoiled.ok(), plain.ok() ? spoiled.error().c_str() : plain.error().c_str());
  for (std::size_t s = 0; s < plain->size(); ++s)
    QVERIFY2(std::abs((*spoiled)[s] - (*plain)[s]) < 1e-9,
             qPrintable(QString("subset %1: %2 against %3").arg(s).arg((*spoiled)[s]).arg((*plain)[s])));
}

void TestFeatureMetrics::kernelSeparatesShiftedSets() {
  // Two halves of one draw: the same distribution (the seed also draws the mixing matrix).
  const torch::Tensor rows = gaussianRows(2000, 16, 0.0, 1.0, 9);
  const torch::Tensor real = rows.slice(0, 0, 1000), same = rows.slice(0, 1000, 2000);
  KernelDistanceOptions options;
  options.subset_size = 500;
  options.subsets = 20;
  auto baseline = FeatureDistances::kernel(real, same, options);
  QVERIFY2(baseline.ok(), baseline.error().c_str());
  // The same distribution: zero within the estimator's spread over subsets.
  QVERIFY2(std::abs(baseline->mean) < 3 * baseline->stddev + 1e-3,
           qPrintable(QString("KID %1 ± %2").arg(baseline->mean).arg(baseline->stddev)));
  double previous = baseline->mean;
  for (double shift : {0.2, 0.5, 1.0}) {
    auto shifted = FeatureDistances::kernel(real, same + shift, options);
    QVERIFY2(shifted.ok(), shifted.error().c_str());
    QVERIFY2(shifted->mean > previous, qPrintable(QString("shift %1: %2 after %3").arg(shift).arg(shifted->mean).arg(previous)));
    previous = shifted->mean;
  }
}

void TestFeatureMetrics::manifoldMatchesReference_data() {
  QTest::addColumn<int>("k");
  QTest::addColumn<double>("shift");
  QTest::addColumn<int>("block");
  QTest::newRow("k 5, same distribution") << 5 << 0.0 << 1024;
  QTest::newRow("k 5, shifted, small blocks") << 5 << 0.6 << 37;
  QTest::newRow("k 3, scaled") << 3 << 0.2 << 64;
}

void TestFeatureMetrics::manifoldMatchesReference() {
  QFETCH(int, k);
  QFETCH(double, shift);
  QFETCH(int, block);
  QTemporaryDir dir;
  const torch::Tensor real = gaussianRows(400, 12, 0.0, 1.0, 11), fake = gaussianRows(350, 12, shift, 1.3, 12);
  ManifoldMetricsOptions options;
  options.k = k;
  options.block = block;
  auto ours = ManifoldMetrics::compute(real, fake, options);
  QVERIFY2(ours.ok(), ours.error().c_str());
  auto reference = runPythonReference("feature_metrics_reference.py",
                                      {"prdc", npyFeatures(dir, "real", real), npyFeatures(dir, "fake", fake), QString::number(k)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  QVERIFY(near(ours->precision, reference.json["precision"].toDouble(), 1e-9));
  QVERIFY(near(ours->recall, reference.json["recall"].toDouble(), 1e-9));
  QVERIFY(near(ours->density, reference.json["density"].toDouble(), 1e-9));
  QVERIFY(near(ours->coverage, reference.json["coverage"].toDouble(), 1e-9));
}

void TestFeatureMetrics::manifoldOfIdenticalAndCollapsedSets() {
  const torch::Tensor real = gaussianRows(300, 8, 0.0, 1.0, 13);
  auto identical = ManifoldMetrics::compute(real, real.clone());
  QVERIFY2(identical.ok(), identical.error().c_str());
  QCOMPARE(identical->precision, 1.0);
  QCOMPARE(identical->recall, 1.0);
  QCOMPARE(identical->coverage, 1.0);
  // One real row repeated (a collapsed generator), with a little jitter so the ball is not empty:
  // precise (it sits on the data), but it covers and recalls almost nothing.
  const torch::Tensor collapsed = real[0].unsqueeze(0).repeat({300, 1}) + 1e-6 * torch::randn({300, 8}, torch::kFloat64);
  auto result = ManifoldMetrics::compute(real, collapsed);
  QVERIFY2(result.ok(), result.error().c_str());
  QCOMPARE(result->precision, 1.0);
  QVERIFY2(result->recall < 0.05, qPrintable(QString::number(result->recall)));
  QVERIFY2(result->coverage < 0.05, qPrintable(QString::number(result->coverage)));
}

void TestFeatureMetrics::pixelPcaMatchesReference_data() {
  QTest::addColumn<int>("image_size");
  QTest::addColumn<int>("pixel_size");
  QTest::addColumn<int>("components");
  QTest::newRow("64 px at 16, 24 components") << 64 << 16 << 24;
  QTest::newRow("32 px at 8, 10 components") << 32 << 8 << 10;
}

void TestFeatureMetrics::pixelPcaMatchesReference() {
  QFETCH(int, image_size);
  QFETCH(int, pixel_size);
  QFETCH(int, components);
  QTemporaryDir dir;
  // Images with a clear spectrum: a few smooth patterns with decaying weights, plus noise, so the
  // leading components are well separated (a tie at the cut would make the subspace ambiguous).
  torch::manual_seed(21);
  const std::int64_t n = 300, d = 3 * image_size * image_size;
  const torch::Tensor patterns = torch::randn({40, d}, torch::kFloat64);
  const torch::Tensor weights = torch::pow(0.8, torch::arange(40, torch::kFloat64));
  auto images = [&](std::int64_t count, double shift) {
    const torch::Tensor mixed = torch::mm(torch::randn({count, 40}, torch::kFloat64) * weights, patterns) * 0.1 + shift;
    return mixed.reshape({count, 3, image_size, image_size}).clamp(-1, 1).to(torch::kFloat32);
  };
  const torch::Tensor train = images(n, 0.0), other = images(200, 0.05);
  PixelPcaOptions options;
  options.size = pixel_size;
  options.components = components;
  auto features = PixelPcaFeatures::fit(train, options);
  QVERIFY2(features.ok(), features.error().c_str());
  auto train_features = features->transform(train), other_features = features->transform(other);
  QVERIFY(train_features.ok() && other_features.ok());
  QCOMPARE(train_features->sizes(), (std::vector<std::int64_t>{n, components}));
  auto fid = FeatureDistances::frechet(*train_features, *other_features);
  auto prdc = ManifoldMetrics::compute(*train_features, *other_features);
  QVERIFY(fid.ok() && prdc.ok());
  auto reference = runPythonReference("feature_metrics_reference.py",
                                      {"pca", npyFeatures(dir, "train", train), QString::number(pixel_size),
                                       QString::number(components), npyFeatures(dir, "other", other)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  const QJsonArray variances = reference.json["variances"].toArray();
  for (int i = 0; i < components; ++i)
    QVERIFY2(near(features->variances()[i].item<double>(), variances[i].toDouble(), 1e-6), qPrintable(QString::number(i)));
  // Components have a sign of their own choosing; the metrics do not depend on it.
  const double expected_fid = reference.json["fid"].toDouble();
  QVERIFY2(near(*fid, expected_fid, 1e-6), qPrintable(QString("ours %1, reference %2").arg(*fid).arg(expected_fid)));
  QVERIFY(near(prdc->precision, reference.json["prdc"].toObject()["precision"].toDouble(), 1e-9));
  QVERIFY(near(prdc->coverage, reference.json["prdc"].toObject()["coverage"].toDouble(), 1e-9));
}

void TestFeatureMetrics::networkFeaturesMatchReference() {
  QTemporaryDir dir;
  const QString net = dir.filePath("net.pt");
  // A small convolutional network, scripted by python3-torch, standing in for Inception.
  QProcess python;
  python.start("/usr/bin/python3", {"-c",
                                    "import sys, torch\n"
                                    "torch.manual_seed(0)\n"
                                    "net = torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3, 2), torch.nn.ReLU(),\n"
                                    "                          torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten())\n"
                                    "torch.jit.script(net).save(sys.argv[1])\n",
                                    net});
  QVERIFY(python.waitForFinished(120000));
  QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
  // The network runs in a worker process: the real `streetgan features-worker`.
  FeaturesWorkerOptions worker;
  worker.command = {STREETGAN_CLI, "features-worker"};
  auto features = NetworkFeatures::load(net.toStdString(), 16, c10::kCPU, worker);
  QVERIFY2(features.ok(), features.error().c_str());
  QCOMPARE(features->sha256().size(), std::size_t{64});
  torch::manual_seed(31);
  const torch::Tensor real_images = torch::rand({120, 3, 16, 16}) * 2 - 1;
  const torch::Tensor fake_images = (torch::rand({110, 3, 16, 16}) * 1.6 - 0.7);
  auto real = features->extract(real_images, 32), fake = features->extract(fake_images, 32);
  QVERIFY2(real.ok() && fake.ok(), real.ok() ? fake.error().c_str() : real.error().c_str());
  QCOMPARE(real->size(1), static_cast<std::int64_t>(24));
  const torch::Tensor real_subsets = FeatureDistances::subsetIndices(120, 50, 4, 1);
  const torch::Tensor fake_subsets = FeatureDistances::subsetIndices(110, 50, 4, 2);
  auto fid = FeatureDistances::frechet(*real, *fake);
  auto kid = FeatureDistances::kernelOnSubsets(*real, *fake, real_subsets, fake_subsets);
  auto prdc = ManifoldMetrics::compute(*real, *fake);
  QVERIFY(fid.ok() && kid.ok() && prdc.ok());
  auto reference = runPythonReference("feature_metrics_reference.py",
                                      {"network", net, npyFeatures(dir, "real", real_images), npyFeatures(dir, "fake", fake_images),
                                       npyFeatures(dir, "rs", real_subsets), npyFeatures(dir, "fs", fake_subsets)});
  QVERIFY2(reference.ok, qPrintable(reference.error));
  // The network runs in float32 on both sides: features agree to float32's precision, so the
  // figures to 1e-5 (the metrics themselves are exact in float64, see the rows above).
  QVERIFY2(near(*fid, reference.json["fid"].toDouble(), 1e-5),
           qPrintable(QString("ours %1, reference %2").arg(*fid).arg(reference.json["fid"].toDouble())));
  const QJsonArray kids = reference.json["kid"].toArray();
  for (int i = 0; i < kids.size(); ++i) QVERIFY(std::abs((*kid)[i] - kids[i].toDouble()) < 1e-6);
  QVERIFY(near(prdc->precision, reference.json["prdc"].toObject()["precision"].toDouble(), 1e-9));
  QVERIFY(near(prdc->recall, reference.json["prdc"].toObject()["recall"].toDouble(), 1e-9));
}

void TestFeatureMetrics::badInputs() {
  const torch::Tensor rows = gaussianRows(20, 4, 0, 1, 1);
  auto one_row = FeatureDistances::frechet(rows.slice(0, 0, 1), rows);
  QVERIFY(!one_row.ok());
  QVERIFY2(QString::fromStdString(one_row.error()).contains("at least 2 real"), one_row.error().c_str());
  auto dims = FeatureDistances::frechet(rows, gaussianRows(20, 5, 0, 1, 1));
  QVERIFY(!dims.ok());
  QVERIFY2(QString::fromStdString(dims.error()).contains("4 dimensions, the generated 5"), dims.error().c_str());
  torch::Tensor nan_rows = rows.clone();
  nan_rows[3][1] = std::nan("");
  auto nan = FeatureDistances::kernel(rows, nan_rows);
  QVERIFY(!nan.ok());
  QVERIFY2(QString::fromStdString(nan.error()).contains("NaN"), nan.error().c_str());
  for (const torch::Tensor& subsets : {torch::zeros({0, 4}, torch::kInt64), torch::zeros({2, 4}, torch::kFloat64)}) {
    auto bad = FeatureDistances::kernelOnSubsets(rows, rows, subsets, subsets);  // no subset; not indices
    QVERIFY(!bad.ok());
    QVERIFY2(QString::fromStdString(bad.error()).contains("integer index matrices"), bad.error().c_str());
  }
  auto few = ManifoldMetrics::compute(rows.slice(0, 0, 5), rows);
  QVERIFY(!few.ok());
  QVERIFY2(QString::fromStdString(few.error()).contains("at least 6 real feature vectors for k = 5, got 5"), few.error().c_str());
  auto vector = FeatureDistances::frechet(torch::zeros({5}), rows);
  QVERIFY(!vector.ok());
  auto too_many = PixelPcaFeatures::fit(torch::zeros({4, 3, 8, 8}), PixelPcaOptions{8, 500});
  QVERIFY(!too_many.ok());
  QVERIFY2(QString::fromStdString(too_many.error()).contains("components must be 1 to 192, got 500"), too_many.error().c_str());
  auto small = PixelPcaFeatures::fit(torch::zeros({4, 3, 16, 16}), PixelPcaOptions{32, 8});
  QVERIFY(!small.ok());
  QVERIFY2(QString::fromStdString(small.error()).contains("smaller than 32x32"), small.error().c_str());
}

STREETGAN_TEST_GUILESS_MAIN(TestFeatureMetrics)
#include "tst_feature_metrics.moc"
