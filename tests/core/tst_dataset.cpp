// ImageDataset: layout detection, the MSLS filters, the per-sequence cap and the held-out split,
// on an MSLS tree whose CSVs the test writes itself, so every expected count is known.
#include "core/config/train_config.h"
#include "core/data/crop_fit.h"
#include "core/data/image_dataset.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

using namespace streetgan;

namespace {

// Layout: cities "athens" and "boston"; each has database/ with 2 sequences of 10 frames and
// query/ with 1 sequence of 4 frames: 48 images. In athens/database sequence s0 is night, and
// frames 0 and 1 of every sequence are panoramas.
void writeFile(const QString& path, const QByteArray& bytes) {
  QDir().mkpath(QFileInfo(path).path());
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(bytes);
}

void makeMsls(const QString& root, bool with_raw = true) {
  for (const QString city : {"athens", "boston"})
    for (const QString subset : {"database", "query"}) {
      const QString folder = root + "/train_val/" + city + "/" + subset;
      QByteArray seq = ",key,sequence_key,frame_number\n";
      QByteArray post = ",key,easting,northing,unique_cluster,control_panel,night,view_direction\n";
      QByteArray raw = ",key,lon,lat,ca,captured_at,pano\n";
      const int sequences = subset == "database" ? 2 : 1, frames = subset == "database" ? 10 : 4;
      int row = 0;
      for (int s = 0; s < sequences; ++s)
        for (int f = 0; f < frames; ++f, ++row) {
          const QString key = QString("%1-%2-s%3-f%4").arg(city, subset).arg(s).arg(f);
          const QString sequence = QString("%1-%2-s%3").arg(city, subset).arg(s);
          writeFile(folder + "/images/" + key + ".jpg", "not decoded by the dataset");
          seq += QString("%1,%2,%3,%4\n").arg(row).arg(key, sequence).arg(f).toUtf8();
          const bool night = city == "athens" && subset == "database" && s == 0;
          post += QString("%1,%2,1.0,2.0,0,0,%3,Forward\n").arg(row).arg(key, night ? "True" : "False").toUtf8();
          raw += QString("%1,%2,4.0,52.0,90,0,%3\n").arg(row).arg(key, f < 2 ? "True" : "False").toUtf8();
        }
      writeFile(folder + "/seq_info.csv", seq);
      writeFile(folder + "/postprocessed.csv", post);
      if (with_raw) writeFile(folder + "/raw.csv", raw);
    }
}

DatasetFilter filterFrom(const QByteArray& json) {
  auto config = applyConfigText(TrainConfig{}, "{\"data\":" + json.toStdString() + "}", ConfigScope::All, "test");
  if (!config) qFatal("bad filter in test: %s", config.error().c_str());
  return config->data.filter;
}

}  // namespace

class TestDataset : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void filters_data();
  void filters();
  void perSequenceCapKeepsEvenlySpacedFrames();
  void holdoutSplitIsDisjointAndKeepsSequencesWhole();
  void missingCsvIsNamedOnlyWhenNeeded();
  void plainFolders();
  void unreadableRootAndEmptyFolder();
  void imagesSmallerThanTheCropAreSaid();

private:
  QTemporaryDir dir_;
  QString msls_;
};

void TestDataset::initTestCase() {
  QVERIFY(dir_.isValid());
  msls_ = dir_.path() + "/msls";
  makeMsls(msls_);
}

void TestDataset::filters_data() {
  QTest::addColumn<QByteArray>("filter");
  QTest::addColumn<int>("expected");
  QTest::addColumn<QString>("error");
  QTest::newRow("everything") << QByteArray("{}") << 48 << "";
  QTest::newRow("one city") << QByteArray(R"({"cities":["boston"]})") << 24 << "";
  QTest::newRow("cities as text") << QByteArray(R"({"cities":"athens,boston"})") << 48 << "";
  QTest::newRow("exclude a city") << QByteArray(R"({"exclude_cities":["athens"]})") << 24 << "";
  QTest::newRow("database only") << QByteArray(R"({"subset":"database"})") << 40 << "";
  QTest::newRow("query only") << QByteArray(R"({"subset":"query"})") << 8 << "";
  QTest::newRow("msls split test") << QByteArray(R"({"msls_split":"test"})") << 0 << "no image left after the filters";
  // 6 sequences: 2 panoramas each.
  QTest::newRow("drop panoramas") << QByteArray(R"({"drop_panoramas":true})") << 36 << "";
  QTest::newRow("night") << QByteArray(R"({"time_of_day":"night"})") << 10 << "";
  QTest::newRow("day") << QByteArray(R"({"time_of_day":"day"})") << 38 << "";
  QTest::newRow("cap 3 per sequence") << QByteArray(R"({"max_per_sequence":3})") << 18 << "";
  QTest::newRow("cap above every sequence") << QByteArray(R"({"max_per_sequence":50})") << 48 << "";
  QTest::newRow("day, no panoramas, cap 5")
      << QByteArray(R"({"time_of_day":"day","drop_panoramas":true,"max_per_sequence":5})") << 19 << "";
  QTest::newRow("hold out a city") << QByteArray(R"({"holdout_cities":["athens"]})") << 24 << "";
  QTest::newRow("unknown city") << QByteArray(R"({"cities":["paris"]})") << 0
                                << "unknown city \"paris\" in data.cities; cities here: athens, boston";
  QTest::newRow("unknown excluded city") << QByteArray(R"({"exclude_cities":["x"]})") << 0 << "data.exclude_cities";
  QTest::newRow("unknown held-out city") << QByteArray(R"({"holdout_cities":["x"]})") << 0 << "data.holdout_cities";
  QTest::newRow("nothing left") << QByteArray(R"({"cities":["athens"],"exclude_cities":["athens"]})") << 0
                                << "no image left after the filters (found 48, cities 24, exclude_cities 0)";
}

void TestDataset::filters() {
  QFETCH(QByteArray, filter);
  QFETCH(int, expected);
  QFETCH(QString, error);
  auto dataset = ImageDataset::open(msls_.toStdString(), filterFrom(filter));
  if (!error.isEmpty()) {
    QVERIFY(!dataset);
    QVERIFY2(QString::fromStdString(dataset.error()).contains(error), dataset.error().c_str());
    return;
  }
  QVERIFY2(dataset, dataset.error().c_str());
  QCOMPARE(dataset->layout(), DatasetLayout::Msls);
  QCOMPARE(int(dataset->size()), expected);
  std::int64_t sum = 0;
  for (const auto& group : dataset->groupCounts()) sum += group.images;
  QCOMPARE(int(sum), expected);
  for (std::size_t i = 1; i < dataset->size(); ++i) QVERIFY(dataset->path(i - 1) < dataset->path(i));
}

void TestDataset::perSequenceCapKeepsEvenlySpacedFrames() {
  auto dataset = ImageDataset::open(msls_.toStdString(), filterFrom(R"({"max_per_sequence":3,"cities":["athens"],"subset":"database"})"));
  QVERIFY2(dataset, dataset.error().c_str());
  std::set<long long> frames;
  for (const auto& e : dataset->entries())
    if (e.sequence == "athens-database-s1") frames.insert(e.frame);
  QCOMPARE(frames, (std::set<long long>{0, 4, 9}));
  auto one = ImageDataset::open(msls_.toStdString(), filterFrom(R"({"max_per_sequence":1,"subset":"query"})"));
  QVERIFY(one);
  QCOMPARE(int(one->size()), 2);
  QCOMPARE(one->entry(0).frame, 2LL);  // the middle frame of 4
}

void TestDataset::holdoutSplitIsDisjointAndKeepsSequencesWhole() {
  const auto filter = filterFrom(R"({"holdout_fraction":0.5,"holdout_seed":3})");
  auto train = ImageDataset::open(msls_.toStdString(), filter, DatasetPart::Train);
  auto held = ImageDataset::open(msls_.toStdString(), filter, DatasetPart::Holdout);
  auto again = ImageDataset::open(msls_.toStdString(), filter, DatasetPart::Train);
  QVERIFY(train && held && again);
  QCOMPARE(int(train->size() + held->size()), 48);
  QCOMPARE(train->otherPartSize(), std::int64_t(held->size()));
  QVERIFY(train->size() > 0 && held->size() > 0);
  std::set<std::string> train_sequences, held_sequences;
  for (const auto& e : train->entries()) train_sequences.insert(e.sequence);
  for (const auto& e : held->entries()) held_sequences.insert(e.sequence);
  for (const auto& s : held_sequences) QVERIFY2(!train_sequences.count(s), s.c_str());
  QCOMPARE(again->size(), train->size());  // seeded: the same split every time
  auto other_seed = ImageDataset::open(msls_.toStdString(), filterFrom(R"({"holdout_fraction":0.5,"holdout_seed":4})"));
  QVERIFY(other_seed);
}

void TestDataset::missingCsvIsNamedOnlyWhenNeeded() {
  const QString root = dir_.path() + "/no-raw";
  makeMsls(root, false);
  auto all = ImageDataset::open(root.toStdString(), filterFrom("{}"));
  QVERIFY2(all, all.error().c_str());
  QCOMPARE(int(all->size()), 48);
  auto pano = ImageDataset::open(root.toStdString(), filterFrom(R"({"drop_panoramas":true})"));
  QVERIFY(!pano);
  QVERIFY2(QString::fromStdString(pano.error()).contains("data.drop_panoramas needs raw.csv"), pano.error().c_str());
  QVERIFY2(QString::fromStdString(pano.error()).contains("raw.csv is missing"), pano.error().c_str());
  auto night = ImageDataset::open(root.toStdString(), filterFrom(R"({"time_of_day":"night"})"));
  QVERIFY2(night, night.error().c_str());  // postprocessed.csv is there
  writeFile(root + "/train_val/athens/query/seq_info.csv", ",key,sequence_key\n0,a,b\n");
  auto capped = ImageDataset::open(root.toStdString(), filterFrom(R"({"max_per_sequence":2})"));
  QVERIFY(!capped);
  QVERIFY2(QString::fromStdString(capped.error()).contains("no column \"frame_number\""), capped.error().c_str());
}

void TestDataset::plainFolders() {
  const QString root = dir_.path() + "/plain";
  for (const QString name : {"cats/a.jpg", "cats/b.PNG", "dogs/deep/c.jpeg", "top.webp", "notes.txt", "dogs/d.bmp"})
    writeFile(root + "/" + name, "x");
  auto dataset = ImageDataset::open(root.toStdString());
  QVERIFY2(dataset, dataset.error().c_str());
  QCOMPARE(dataset->layout(), DatasetLayout::Folder);
  QCOMPARE(int(dataset->size()), 5);
  const auto groups = dataset->groupCounts();
  QCOMPARE(int(groups.size()), 3);
  QCOMPARE(groups[0].group, std::string("."));
  QCOMPARE(groups[1].group, std::string("cats"));
  QCOMPARE(groups[2].images, std::int64_t(2));
  auto cats = ImageDataset::open(root.toStdString(), filterFrom(R"({"cities":["cats"]})"));
  QVERIFY(cats);
  QCOMPARE(int(cats->size()), 2);
  auto msls_only = ImageDataset::open(root.toStdString(), filterFrom(R"({"subset":"query"})"));
  QVERIFY(!msls_only);
  QVERIFY2(QString::fromStdString(msls_only.error()).contains("data.subset needs the MSLS layout"), msls_only.error().c_str());
}

void TestDataset::unreadableRootAndEmptyFolder() {
  auto missing = ImageDataset::open((dir_.path() + "/nope").toStdString());
  QVERIFY(!missing);
  QVERIFY(QString::fromStdString(missing.error()).contains("does not exist"));
  QDir().mkpath(dir_.path() + "/empty/sub");
  auto empty = ImageDataset::open((dir_.path() + "/empty").toStdString());
  QVERIFY(!empty);
  QVERIFY(QString::fromStdString(empty.error()).contains("no images found"));
}

STREETGAN_TEST_GUILESS_MAIN(TestDataset)
// A folder of 64-px images against the presets' crop of 4 × 64 = 256 pixels: every one is smaller,
// and the warning names the key and the largest crop_scale that fits; a crop that fits says nothing.
void TestDataset::imagesSmallerThanTheCropAreSaid() {
  const QString root = dir_.path() + "/small";
  QVERIFY(QDir().mkpath(root));
  for (int i = 0; i < 10; ++i) {
    const cv::Mat image(i < 8 ? 64 : 300, i < 8 ? 80 : 400, CV_8UC3, cv::Scalar(10 * i, 90, 200));
    QVERIFY(cv::imwrite(QString("%1/%2.png").arg(root).arg(i).toStdString(), image));
  }
  auto dataset = ImageDataset::open(root.toStdString());
  QVERIFY2(dataset, dataset.error().c_str());
  const CropFit fit = measureCropFit(*dataset, 4.0, 64);
  QCOMPARE(fit.looked_at, std::int64_t(10));
  QCOMPARE(fit.smaller, std::int64_t(8));
  QCOMPARE(fit.median_side, std::int64_t(64));
  QCOMPARE(fit.crop_side, std::int64_t(256));
  QCOMPARE(QString::fromStdString(cropFitWarning(fit, 4.0, 64)),
           QString("8 of 10 images looked at are smaller than the training crop of 256x256 pixels (augment.crop_scale 4 "
                   "x img_size 64; their shorter side is 64 pixels at the median): each is padded with black around a "
                   "smaller subject. Set augment.crop_scale to at most 1 for these images"));
  QVERIFY(cropFitWarning(measureCropFit(*dataset, 1.0, 64), 1.0, 64).empty());
  // Files whose size cannot be read are counted apart, and said.
  writeFile(root + "/broken.jpg", "not an image");
  auto with_broken = ImageDataset::open(root.toStdString());
  QVERIFY(with_broken);
  const CropFit broken_fit = measureCropFit(*with_broken, 4.0, 64);
  QCOMPARE(broken_fit.looked_at, std::int64_t(10));
  QCOMPARE(broken_fit.unreadable, std::int64_t(1));
  QVERIFY(QString::fromStdString(cropFitWarning(broken_fit, 4.0, 64))
              .endsWith("for these images (not counted: 1 more image with no size in the first 128 KiB)"));
}

#include "tst_dataset.moc"
