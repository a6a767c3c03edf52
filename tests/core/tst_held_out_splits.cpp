// HeldOutSplits: the one loader of the validation and test images (streetgan parzen, Parzen during
// training): two folders taken whole, or one seeded draw from a held-out split that never overlaps,
// unreadable images skipped and reported, and each failure worded as its caller has always worded it.
#include "core/eval/held_out_splits.h"
#include "tests/support/test_suite.h"

#include <QColor>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <vector>

using namespace streetgan;

namespace {

constexpr int kSize = 8;

bool writeImages(const QString& folder, int count, int shade) {
  if (!QDir().mkpath(folder)) return false;
  for (int i = 0; i < count; ++i) {
    QImage image(kSize, kSize, QImage::Format_RGB888);
    image.fill(QColor(shade, (i * 37) % 256, 255 - shade));
    if (!image.save(QDir(folder).filePath(QString("image-%1.png").arg(i)))) return false;
  }
  return true;
}

QSet<QString> pathsOf(const ImageRows& rows) {
  QSet<QString> paths;
  for (const auto& path : rows.paths) paths.insert(QString::fromStdString(path));
  return paths;
}

}  // namespace

class TestHeldOutSplits : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void drawsFromTheHeldOutSplit();
  void theSeedDecidesTheDraw();
  void foldersAreTakenWhole();
  void folderErrorsNameTheFolder();
  void tooFewHeldOutImages_data();
  void tooFewHeldOutImages();
  void datasetErrors();
  void unreadableImagesAreSkipped();
  void aSplitWithNoImage_data();
  void aSplitWithNoImage();
  void forModelIsWhatTrainingUses();

private:
  HeldOutSplitsRequest drawRequest(const QString& held_city) const {
    HeldOutSplitsRequest request;
    request.dataroot = data_.toStdString();
    request.filter.holdout_cities = {held_city.toStdString()};
    request.seed = 7;
    request.n_valid = 100;
    request.n_test = 100;
    request.img_size = kSize;
    request.crop_scale = 1.0;
    return request;
  }

  QTemporaryDir dir_;
  QString data_;
};

void TestHeldOutSplits::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = dir_.filePath("data");
  QVERIFY(writeImages(data_ + "/train", 6, 10));
  QVERIFY(writeImages(data_ + "/held", 6, 200));
  QVERIFY(writeImages(data_ + "/single", 1, 100));
  QVERIFY(writeImages(dir_.filePath("valid"), 2, 50));
  QVERIFY(writeImages(dir_.filePath("test"), 3, 150));
}

void TestHeldOutSplits::drawsFromTheHeldOutSplit() {
  HeldOutSplitsRequest request = drawRequest("held");
  auto splits = HeldOutSplits::load(request);
  QVERIFY2(splits.ok(), splits.error().c_str());
  // At most half for validation; test takes what is left.
  QCOMPARE(splits->valid.rows.size(0), std::int64_t(3));
  QCOMPARE(splits->test.rows.size(0), std::int64_t(3));
  QCOMPARE(splits->valid.rows.size(1), std::int64_t(3 * kSize * kSize));
  const QSet<QString> valid = pathsOf(splits->valid), test = pathsOf(splits->test);
  QVERIFY(!valid.intersects(test));
  for (const QString& path : valid + test) QVERIFY2(path.startsWith(data_ + "/held/"), qPrintable(path));
  request.n_valid = 2;
  request.n_test = 1;
  splits = HeldOutSplits::load(request);
  QVERIFY2(splits.ok(), splits.error().c_str());
  QCOMPARE(splits->valid.rows.size(0), std::int64_t(2));
  QCOMPARE(splits->test.rows.size(0), std::int64_t(1));
}

void TestHeldOutSplits::theSeedDecidesTheDraw() {
  HeldOutSplitsRequest request = drawRequest("held");
  request.n_valid = 2;
  request.n_test = 2;
  auto first = HeldOutSplits::load(request);
  auto again = HeldOutSplits::load(request);
  QVERIFY(first.ok() && again.ok());
  QCOMPARE(first->valid.paths, again->valid.paths);
  QCOMPARE(first->test.paths, again->test.paths);
  QVERIFY(first->valid.rows.equal(again->valid.rows));
  // Another seed draws another order of the six (the chance of the same 4 in order is 1 in 360).
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 12 && !differs; ++seed) {
    request.seed = seed;
    auto other = HeldOutSplits::load(request);
    QVERIFY(other.ok());
    differs = other->valid.paths != first->valid.paths || other->test.paths != first->test.paths;
  }
  QVERIFY(differs);
}

void TestHeldOutSplits::foldersAreTakenWhole() {
  HeldOutSplitsRequest request = drawRequest("held");
  request.from_folders = true;
  request.valid_folder = dir_.filePath("valid").toStdString();
  request.test_folder = dir_.filePath("test").toStdString();
  request.n_valid = 1;  // a draw's sizes; folders are taken whole
  request.n_test = 1;
  auto splits = HeldOutSplits::load(request);
  QVERIFY2(splits.ok(), splits.error().c_str());
  QCOMPARE(splits->valid.rows.size(0), std::int64_t(2));
  QCOMPARE(splits->test.rows.size(0), std::int64_t(3));
  for (const QString& path : pathsOf(splits->valid)) QVERIFY(path.startsWith(dir_.filePath("valid") + "/"));
}

void TestHeldOutSplits::folderErrorsNameTheFolder() {
  HeldOutSplitsRequest request;
  request.from_folders = true;
  request.valid_folder = dir_.filePath("no-such-valid").toStdString();
  request.test_folder = dir_.filePath("test").toStdString();
  request.valid_folder_name = "option '--valid'";
  auto splits = HeldOutSplits::load(request);
  QVERIFY(!splits.ok());
  const std::string dataset_error = ImageDataset::open(request.valid_folder).error();
  QCOMPARE(QString::fromStdString(splits.error()), QString::fromStdString("option '--valid': " + dataset_error));
  request.valid_folder = dir_.filePath("valid").toStdString();
  request.test_folder = dir_.filePath("no-such-test").toStdString();
  splits = HeldOutSplits::load(request);
  QVERIFY(!splits.ok());
  QVERIFY2(QString::fromStdString(splits.error()).startsWith("test folder: "), splits.error().c_str());
}

void TestHeldOutSplits::tooFewHeldOutImages_data() {
  QTest::addColumn<QString>("purpose");
  QTest::addColumn<QString>("needs");
  QTest::newRow("streetgan parzen") << "" << "it needs";
  QTest::newRow("training") << "Parzen" << "Parzen evaluation needs";
}

void TestHeldOutSplits::tooFewHeldOutImages() {
  QFETCH(QString, purpose);
  QFETCH(QString, needs);
  HeldOutSplitsRequest request = drawRequest("single");
  request.purpose = purpose.toStdString();
  auto splits = HeldOutSplits::load(request);
  QVERIFY(!splits.ok());
  QCOMPARE(QString::fromStdString(splits.error()),
           data_ + ": the held-out split has 1 image(s); " + needs + " at least 2 (validation and test)");
}

void TestHeldOutSplits::datasetErrors() {
  HeldOutSplitsRequest request = drawRequest("nowhere");
  const std::string dataset_error = ImageDataset::open(request.dataroot, request.filter, DatasetPart::Holdout).error();
  QVERIFY(!dataset_error.empty());
  auto plain = HeldOutSplits::load(request);
  QVERIFY(!plain.ok());
  QCOMPARE(plain.error(), dataset_error);
  request.purpose = "Parzen";
  auto worded = HeldOutSplits::load(request);
  QVERIFY(!worded.ok());
  QCOMPARE(worded.error(), "Parzen held-out split: " + dataset_error);
  // No held-out split at all: the callers say why in their own words first; the loader refuses too.
  request.filter.holdout_cities.clear();
  QVERIFY(!HeldOutSplits::load(request).ok());
}

void TestHeldOutSplits::unreadableImagesAreSkipped() {
  const QString valid = dir_.filePath("valid-broken");
  QVERIFY(writeImages(valid, 2, 60));
  QFile broken(valid + "/broken.png");
  QVERIFY(broken.open(QIODevice::WriteOnly));
  broken.write("not a png");
  broken.close();
  HeldOutSplitsRequest request;
  request.from_folders = true;
  request.valid_folder = valid.toStdString();
  request.test_folder = dir_.filePath("test").toStdString();
  request.img_size = kSize;
  std::vector<std::string> skipped;
  request.on_skipped = [&skipped](const SkippedFile& file) { skipped.push_back(file.path); };
  auto splits = HeldOutSplits::load(request);
  QVERIFY2(splits.ok(), splits.error().c_str());
  QCOMPARE(splits->valid.rows.size(0), std::int64_t(2));
  QCOMPARE(skipped.size(), std::size_t(1));
  QCOMPARE(QString::fromStdString(skipped.front()), valid + "/broken.png");
}

void TestHeldOutSplits::aSplitWithNoImage_data() {
  QTest::addColumn<QString>("purpose");
  QTest::addColumn<QString>("prefix");
  QTest::newRow("streetgan parzen") << "" << "test split: ";
  QTest::newRow("training") << "Parzen" << "Parzen test split: ";
}

void TestHeldOutSplits::aSplitWithNoImage() {
  QFETCH(QString, purpose);
  QFETCH(QString, prefix);
  const QString test = dir_.filePath("test-broken");
  QVERIFY(QDir().mkpath(test));
  QFile broken(test + "/broken.png");
  QVERIFY(broken.open(QIODevice::WriteOnly));
  broken.write("not a png");
  broken.close();
  HeldOutSplitsRequest request;
  request.from_folders = true;
  request.valid_folder = dir_.filePath("valid").toStdString();
  request.test_folder = test.toStdString();
  request.img_size = kSize;
  request.purpose = purpose.toStdString();
  auto splits = HeldOutSplits::load(request);
  QVERIFY(!splits.ok());
  QVERIFY2(QString::fromStdString(splits.error()).startsWith(prefix + "not one of the 1 images could be read"),
           splits.error().c_str());
}

void TestHeldOutSplits::forModelIsWhatTrainingUses() {
  TrainConfig model;
  model.dataroot = "/data/msls";
  model.data.filter.holdout_fraction = 0.25;
  model.seed = 42;
  model.parzen.n_valid = 30;
  model.parzen.n_test = 40;
  model.img_size = 128;
  model.nc = 1;
  model.augment.crop_scale = 2.5;
  const HeldOutSplitsRequest request = HeldOutSplitsRequest::forModel(model);
  QCOMPARE(request.from_folders, false);
  QCOMPARE(request.dataroot, model.dataroot);
  QCOMPARE(request.filter.holdout_fraction, 0.25);
  QCOMPARE(request.seed, std::uint64_t(42));
  QCOMPARE(request.n_valid, std::size_t(30));
  QCOMPARE(request.n_test, std::size_t(40));
  QCOMPARE(request.img_size, 128);
  QCOMPARE(request.channels, 1);
  QCOMPARE(request.crop_scale, 2.5);
  QVERIFY(request.purpose.empty());
}

STREETGAN_TEST_GUILESS_MAIN(TestHeldOutSplits)
#include "tst_held_out_splits.moc"
