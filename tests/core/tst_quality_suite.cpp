// The whole metric suite on sets whose answer is known: identical sets, a collapsed generator
// (one training image repeated), a generator that returns training images, and shifted or
// blurred training images; its file format; bad input and cancelling.
#include "core/eval/quality_alarms.h"
#include "core/runs/quality_evaluation_file.h"
#include "core/eval/quality_suite.h"
#include "core/train/compute_device.h"
#include "tests/support/test_suite.h"

#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>
#include <map>
#include <vector>

using namespace streetgan;
namespace figure = streetgan::quality_figure;

namespace {

// `n` smooth street-like test images of `size` px in [-1, 1]: random low-frequency patterns
// (a few cosines per channel) with a horizon line, from `seed`.
torch::Tensor smoothImagesSuite(std::int64_t n, int size, std::uint64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor y = torch::linspace(0, 1, size).view({1, 1, size, 1});
  const torch::Tensor x = torch::linspace(0, 1, size).view({1, 1, 1, size});
  torch::Tensor images = torch::zeros({n, 3, size, size});
  for (int term = 0; term < 4; ++term) {
    const torch::Tensor fy = torch::rand({n, 3, 1, 1}) * 6, fx = torch::rand({n, 3, 1, 1}) * 6;
    const torch::Tensor phase = torch::rand({n, 3, 1, 1}) * 6.283;
    images += 0.3 * torch::cos(fy * y * 3.1416 + fx * x * 3.1416 + phase);
  }
  const torch::Tensor horizon = torch::rand({n, 1, 1, 1}) * 0.5 + 0.25;
  images += 0.4 * (y > horizon).to(torch::kFloat32) - 0.2;
  return images.clamp(-1, 1);
}

QualitySuiteOptions smallOptions() {
  QualitySuiteOptions options;
  options.ndb.bins = 10;
  options.diversity.pairs = 200;
  options.kernel.subset_size = 100;
  options.kernel.subsets = 10;
  options.pixel_features.components = 32;
  options.memorisation.train_self_queries = 1000;
  return options;
}

torch::Tensor blurredSuiteImages(const torch::Tensor& images, int radius) {
  const int width = 2 * radius + 1;
  const torch::Tensor kernel = torch::full({3, 1, width, width}, 1.0f / static_cast<float>(width * width));
  namespace F = torch::nn::functional;
  return F::conv2d(torch::replication_pad2d(images, {radius, radius, radius, radius}), kernel,
                   F::Conv2dFuncOptions().groups(3));
}

}  // namespace

class TestQualitySuite : public QObject {
  Q_OBJECT

private slots:
  void identicalSetsScoreAsIdentical();
  void collapsedGeneratorIsCaught();
  void copiedTrainingImagesAreCaught();
  void distancesGrowWithShiftAndBlur();
  void onlyTheAskedMetrics();
  void duplicatedTrainingImagesLeaveANote();
  void fileRoundTrip();
  void badInputAndCancel();
  void unmetNeedsAreSaidFirstOrLeftOut();
  void theFiguresDoNotDependOnThreads();
};

void TestQualitySuite::identicalSetsScoreAsIdentical() {
  const torch::Tensor train = smoothImagesSuite(300, 32, 1);
  auto result = QualitySuite::evaluate(train.clone(), train, smallOptions());
  QVERIFY2(result.ok(), result.error().c_str());
  const auto& m = result->metrics;
  QCOMPARE(m.at(figure::kNdb), 0.0);
  QVERIFY(m.at(figure::kJsd) < 1e-12);
  QCOMPARE(m.at(figure::kPrecision), 1.0);
  QCOMPARE(m.at(figure::kRecall), 1.0);
  QCOMPARE(m.at(figure::kCoverage), 1.0);
  QVERIFY2(m.at(figure::kFid) < 1e-6, qPrintable(QString::number(m.at(figure::kFid))));
  // KID's subsets of the two sides are drawn apart from the same rows, so a row can sit in both:
  // the estimate is at most zero within its spread (the shared rows pull it below).
  QVERIFY2(m.at(figure::kKid) < 3 * m.at(figure::kKidStddev) + 1e-6,
           qPrintable(QString("KID %1 ± %2").arg(m.at(figure::kKid)).arg(m.at(figure::kKidStddev))));
  // The same patches are not drawn from both sides either: SWD is the noise of 128 patches a
  // level, far below what a blur of one pixel gives (distancesGrowWithShiftAndBlur).
  QVERIFY(m.count(figure::kSwd) == 1);
  QCOMPARE(m.at(figure::kMsSsimSamples), m.at(figure::kMsSsimTrain));
  QCOMPARE(m.at(figure::kCopyRate), 1.0);
  QCOMPARE(result->n_samples, static_cast<std::int64_t>(300));
  QCOMPARE(result->feature_space, std::string("pixels32-pca32"));
  QVERIFY(!result->notes.empty());  // MS-SSIM on fewer scales at 32 px
}

void TestQualitySuite::collapsedGeneratorIsCaught() {
  const torch::Tensor train = smoothImagesSuite(300, 32, 2);
  const torch::Tensor collapsed = train[7].unsqueeze(0).repeat({300, 1, 1, 1});
  auto result = QualitySuite::evaluate(collapsed, train, smallOptions());
  QVERIFY2(result.ok(), result.error().c_str());
  const auto& m = result->metrics;
  QVERIFY2(m.at(figure::kRecall) < 0.05, qPrintable(QString::number(m.at(figure::kRecall))));
  QVERIFY2(m.at(figure::kCoverage) < 0.05, qPrintable(QString::number(m.at(figure::kCoverage))));
  QCOMPARE(m.at(figure::kCopyRate), 1.0);
  QCOMPARE(m.at(figure::kMsSsimSamples), 1.0);  // every pair is the same image
  QVERIFY(m.at(figure::kMsSsimTrain) < 0.9);
  QVERIFY2(m.at(figure::kNdb) >= 5, qPrintable(QString::number(m.at(figure::kNdb))));
  QCOMPARE(m.at(figure::kSpreadRatio), 0.0);  // every sample's nearest other sample is itself again
  QStringList said;
  for (const QualityAlarm& alarm : QualityAlarms::fromEvaluation(*result, QualityAlarmThresholds{}))
    said << QString::fromStdString(alarm.kind + ": " + alarm.message);
  QVERIFY2(said.filter("collapse: mode collapse: a sample lies 0.00 times as far").size() == 1, qPrintable(said.join("\n")));
  QVERIFY2(said.filter("collapse: mode collapse: the samples are more alike").size() == 1, qPrintable(said.join("\n")));
}

void TestQualitySuite::copiedTrainingImagesAreCaught() {
  const torch::Tensor train = smoothImagesSuite(400, 32, 3);
  const torch::Tensor copies = train.index_select(0, torch::randperm(400).slice(0, 0, 200));
  auto result = QualitySuite::evaluate(copies, train, smallOptions());
  QVERIFY2(result.ok(), result.error().c_str());
  QCOMPARE(result->metrics.at(figure::kCopyRate), 1.0);
  QCOMPARE(result->metrics.at(figure::kNearestRatio), 0.0);
  // Fresh images of the same kind are not copies.
  auto fresh = QualitySuite::evaluate(smoothImagesSuite(200, 32, 33), train, smallOptions());
  QVERIFY2(fresh.ok(), fresh.error().c_str());
  QVERIFY2(fresh->metrics.at(figure::kCopyRate) < 0.1, qPrintable(QString::number(fresh->metrics.at(figure::kCopyRate))));
  // As varied as the training images: a spread about theirs.
  const double spread = fresh->metrics.at(figure::kSpreadRatio);
  QVERIFY2(spread > 0.5 && spread < 2.0, qPrintable(QString::number(spread)));
  QVERIFY(fresh->metrics.at(figure::kNearestRatio) > 0.5);
}

void TestQualitySuite::distancesGrowWithShiftAndBlur() {
  const torch::Tensor train = smoothImagesSuite(300, 32, 4);
  const torch::Tensor other = smoothImagesSuite(300, 32, 44);  // the same distribution, other images
  QualitySuiteOptions options = smallOptions();
  options.metrics = {"swd", "fid"};
  double previous_swd = -1, previous_fid = -1;
  for (double shift : {0.0, 0.1, 0.3}) {
    auto result = QualitySuite::evaluate((other + shift).clamp(-1, 1), train, options);
    QVERIFY2(result.ok(), result.error().c_str());
    QVERIFY2(result->metrics.at(figure::kSwd) > previous_swd, qPrintable(QString("shift %1").arg(shift)));
    QVERIFY2(result->metrics.at(figure::kFid) > previous_fid, qPrintable(QString("shift %1").arg(shift)));
    previous_swd = result->metrics.at(figure::kSwd);
    previous_fid = result->metrics.at(figure::kFid);
  }
  previous_swd = -1;
  for (int radius : {0, 1, 2}) {
    auto result = QualitySuite::evaluate(radius == 0 ? other : blurredSuiteImages(other, radius), train, options);
    QVERIFY2(result.ok(), result.error().c_str());
    QVERIFY2(result->metrics.at(figure::kSwd) > previous_swd, qPrintable(QString("blur %1").arg(radius)));
    previous_swd = result->metrics.at(figure::kSwd);
  }
}

void TestQualitySuite::onlyTheAskedMetrics() {
  auto parsed = QualitySuiteOptions::parseMetricList("fid,memorisation");
  QVERIFY(parsed.ok());
  QualitySuiteOptions options = smallOptions();
  options.metrics = *parsed;
  QStringList stages;
  options.progress = [&](const std::string& stage, int, int) {
    stages << QString::fromStdString(stage);
    return true;
  };
  const torch::Tensor train = smoothImagesSuite(100, 32, 5);
  auto result = QualitySuite::evaluate(smoothImagesSuite(100, 32, 6), train, options);
  QVERIFY2(result.ok(), result.error().c_str());
  QCOMPARE(result->metrics.count(figure::kFid), std::size_t{1});
  QCOMPARE(result->metrics.count(figure::kCopyRate), std::size_t{1});
  QCOMPARE(result->metrics.count(figure::kSwd), std::size_t{0});
  QCOMPARE(result->metrics.count(figure::kKid), std::size_t{0});
  QCOMPARE(stages, (QStringList{"features", "FID", "nearest training images", "done"}));
  auto bad = QualitySuiteOptions::parseMetricList("fid,inception");
  QVERIFY(!bad.ok());
  QVERIFY2(QString::fromStdString(bad.error()).contains("\"inception\" is not a metric"), bad.error().c_str());
}

void TestQualitySuite::duplicatedTrainingImagesLeaveANote() {
  // A training set of copies of 3 images: the memorisation check has no yardstick (the median
  // distance to the nearest other training image is 0), but the other figures still come back.
  auto parsed = QualitySuiteOptions::parseMetricList("swd,memorisation");
  QVERIFY(parsed.ok());
  QualitySuiteOptions options = smallOptions();
  options.metrics = *parsed;
  const torch::Tensor train = smoothImagesSuite(3, 32, 9).repeat({20, 1, 1, 1});
  auto result = QualitySuite::evaluate(smoothImagesSuite(60, 32, 10), train, options);
  QVERIFY2(result.ok(), result.error().c_str());
  QCOMPARE(result->metrics.count(figure::kSwd), std::size_t{1});
  QCOMPARE(result->metrics.count(figure::kCopyRate), std::size_t{0});
  bool noted = false;
  for (const std::string& note : result->notes) noted = noted || note.find("(mostly duplicates)") != std::string::npos;
  QVERIFY(noted);
}

void TestQualitySuite::fileRoundTrip() {
  QTemporaryDir dir;
  QualitySuiteOptions options = smallOptions();
  auto result = QualitySuite::evaluate(smoothImagesSuite(100, 32, 7), smoothImagesSuite(100, 32, 8), options);
  QVERIFY2(result.ok(), result.error().c_str());
  result->checkpoint = QualityEvaluation::Checkpoint{"step-0000000096.pt", 3, 96, 768};
  result->metrics["made_up"] = std::nan("");
  const std::string run = dir.path().toStdString();
  QVERIFY(QualityEvaluationFile::write(run, "step-0000000096", *result).ok());
  const auto files = QualityEvaluationFile::list(run);
  QCOMPARE(files.size(), std::size_t{1});
  auto read = QualityEvaluationFile::read(files.front());
  QVERIFY2(read.ok(), read.error().c_str());
  QCOMPARE(read->checkpoint->step, static_cast<std::int64_t>(96));
  QCOMPARE(read->metrics.size(), result->metrics.size());
  QCOMPARE(read->metrics.at(figure::kFid), result->metrics.at(figure::kFid));
  QVERIFY(std::isnan(read->metrics.at("made_up")));  // written as null
  QCOMPARE(read->notes, result->notes);
  // Hostile files: a string where a number goes, too deep, not a regular file.
  QFile bad(dir.filePath("evaluations/metrics-bad.json"));
  QVERIFY(bad.open(QIODevice::WriteOnly));
  bad.write("{\"v\": 1, \"metrics\": {\"fid\": \"low\"}}");
  bad.close();
  auto refused = QualityEvaluationFile::read(bad.fileName().toStdString());
  QVERIFY(!refused.ok());
  QVERIFY2(QString::fromStdString(refused.error()).contains("metrics: \"fid\" must be a number"), refused.error().c_str());
  QFile deep(dir.filePath("deep.json"));
  QVERIFY(deep.open(QIODevice::WriteOnly));
  deep.write(QByteArray(100, '[') + QByteArray(100, ']'));
  deep.close();
  QVERIFY(!QualityEvaluationFile::read(deep.fileName().toStdString()).ok());
  QVERIFY(!QualityEvaluationFile::read(dir.path().toStdString()).ok());
}

void TestQualitySuite::badInputAndCancel() {
  const torch::Tensor train = smoothImagesSuite(50, 32, 9);
  QualitySuiteOptions options = smallOptions();
  auto few = QualitySuite::evaluate(train.slice(0, 0, 1), train, options);
  QVERIFY(!few.ok());
  QVERIFY2(QString::fromStdString(few.error()).contains("at least 2 samples, got 1"), few.error().c_str());
  options.ndb.bins = 100;  // more bins than the 50 training images
  auto bins = QualitySuite::evaluate(train, train, options);
  QVERIFY(!bins.ok());
  QVERIFY2(QString::fromStdString(bins.error()).startsWith("NDB/JSD needs at least 100 training images"), bins.error().c_str());
  auto sizes = QualitySuite::evaluate(smoothImagesSuite(10, 64, 1), train, smallOptions());
  QVERIFY(!sizes.ok());
  QVERIFY2(QString::fromStdString(sizes.error()).contains("64 px, the training images 32 px"), sizes.error().c_str());
  torch::Tensor nan = train.clone();
  nan[0][0][0][0] = std::nanf("");
  QVERIFY(!QualitySuite::evaluate(nan, train, smallOptions()).ok());
  QualitySuiteOptions cancelling = smallOptions();
  cancelling.progress = [](const std::string& stage, int, int) { return stage != "NDB/JSD bins"; };
  auto cancelled = QualitySuite::evaluate(train, train, cancelling);
  QVERIFY(!cancelled.ok());
  QCOMPARE(cancelled.error(), std::string("cancelled"));
}

void TestQualitySuite::unmetNeedsAreSaidFirstOrLeftOut() {
  QualitySuiteOptions options = smallOptions();
  options.ndb.bins = 100;
  auto ndb = QualitySuite::unmet(1000, 50, 64, options);
  QVERIFY(ndb.has_value());
  QCOMPARE(*ndb, std::string("NDB/JSD needs at least 100 training images for 100 bins, got 50"));
  auto bytes = QualitySuite::unmet(10000000, 10000, 64, options);
  QVERIFY(bytes.has_value());
  QVERIFY2(QString::fromStdString(*bytes).contains("would take 469218 MiB, more than 8192 MiB; use fewer"), bytes->c_str());
  QVERIFY(!QualitySuite::unmet(1000, 1000, 64, options).has_value());
  // Training's live metrics leave out what the images cannot give and keep the rest.
  options.skip_unmet = true;
  QVERIFY(!QualitySuite::unmet(1000, 50, 64, options).has_value());
  auto result = QualitySuite::evaluate(smoothImagesSuite(60, 32, 11), smoothImagesSuite(50, 32, 12), options);
  QVERIFY2(result.ok(), result.error().c_str());
  QCOMPARE(result->metrics.count(figure::kNdb), std::size_t{0});
  QCOMPARE(result->metrics.count(figure::kFid), std::size_t{1});
  QVERIFY(std::find(result->notes.begin(), result->notes.end(),
                    "NDB/JSD needs at least 100 training images for 100 bins, got 50; left out") != result->notes.end());
  // Cancelled from inside a stage.
  QualitySuiteOptions stopping = smallOptions();
  int asked = 0;
  stopping.should_stop = [&] { return ++asked > 3; };
  auto stopped = QualitySuite::evaluate(smoothImagesSuite(60, 32, 11), smoothImagesSuite(50, 32, 12), stopping);
  QVERIFY(!stopped.ok());
  QVERIFY2(QString::fromStdString(stopped.error()).contains("cancelled"), stopped.error().c_str());
}

// bench/README.md says each figure is the same for any number of threads (the parallel parts are
// summed in a fixed order): every figure of 1, 2 and 3 threads, compared exactly.
void TestQualitySuite::theFiguresDoNotDependOnThreads() {
  const torch::Tensor train = smoothImagesSuite(300, 32, 11), samples = smoothImagesSuite(300, 32, 12);
  std::vector<std::map<std::string, double>> figures;
  for (int threads : {1, 2, 3}) {
    setComputeThreads(threads);
    auto result = QualitySuite::evaluate(samples, train, smallOptions());
    QVERIFY2(result.ok(), result.error().c_str());
    figures.push_back(result->metrics);
  }
  setComputeThreads(2);
  QVERIFY(figures[0].size() >= 10);
  for (std::size_t run = 1; run < figures.size(); ++run)
    for (const auto& [name, value] : figures[0])
      QVERIFY2(figures[run].at(name) == value || (std::isnan(value) && std::isnan(figures[run].at(name))),
               qPrintable(QString("%1: %2 on 1 thread, %3 on %4").arg(QString::fromStdString(name)).arg(value, 0, 'g', 17)
                              .arg(figures[run].at(name), 0, 'g', 17).arg(run + 1)));
}

STREETGAN_TEST_GUILESS_MAIN(TestQualitySuite)
#include "tst_quality_suite.moc"
