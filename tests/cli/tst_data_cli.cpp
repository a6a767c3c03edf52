// The data commands of the real `streetgan` program: data stats, data preview, cache build and
// info, and training from the cache and from a folder with unreadable files.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::test;

namespace {

QVector<double> lossesOfData(const QString& run_dir) {
  QVector<double> losses;
  for (const auto& e : eventsOfType(readEvents(run_dir), "step")) losses << e.value("loss_d").toDouble();
  return losses;
}

}  // namespace

class TestDataCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void statsTable();
  void statsJsonWithFilters();
  void statsErrors_data();
  void statsErrors();
  void previewWritesAGrid();
  void previewOfABadImage();
  void cacheTrainingMatchesJpegTraining();
  void cacheBuildProgressLines();
  void trainingSkipsAndCountsBadFiles();
  void unreadableDataSetStopsWithOneError();

private:
  QTemporaryDir dir_;
  QString data_;
};

void TestDataCli::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = makeTinyDataset(dir_.path());
}

void TestDataCli::statsTable() {
  const auto r = runCli({"data", "stats", data_});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.out.contains("MSLS layout, 32 images"), qPrintable(r.out));
  QVERIFY2(r.out.contains(QRegularExpression("alderbrook\\s+32\\s+100.0%\\s+4")), qPrintable(r.out));
  QVERIFY2(r.out.contains(QRegularExpression("total\\s+32\\s+100.0%")), qPrintable(r.out));
}

void TestDataCli::statsJsonWithFilters() {
  const auto r = runCli({"data", "stats", data_, "--subset", "database", "--max-per-sequence", "2",
                         "--holdout-fraction", "0.34", "--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject stats = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(stats.value("layout").toString(), QString("MSLS"));
  const QJsonArray filters = stats.value("filters").toArray();
  QCOMPARE(filters.first().toObject().value("remaining").toInt(), 32);
  QCOMPARE(filters[1].toObject().value("step").toString(), QString("subset"));
  QCOMPARE(filters[1].toObject().value("remaining").toInt(), 24);  // 3 database sequences of 8
  const int images = stats.value("images").toInt();
  const int held = stats.value("other_part").toInt();
  QVERIFY(images > 0 && images % 2 == 0 && images <= 6);  // whole sequences, 2 frames each
  double share = 0;
  for (const auto& group : stats.value("groups").toArray()) share += group.toObject().value("share").toDouble();
  QVERIFY(qAbs(share - 1.0) < 1e-9);
  const auto held_out = runCli({"data", "stats", data_, "--subset", "database", "--max-per-sequence", "2",
                                "--holdout-fraction", "0.34", "--holdout", "--json"});
  QVERIFY2(held_out.exit_code == 0, qPrintable(held_out.err));
  const QJsonObject other = QJsonDocument::fromJson(held_out.out.toUtf8()).object();
  QCOMPARE(other.value("other_part").toInt() + held, 24);
  QCOMPARE(other.value("images").toInt() + images, 6);  // 3 sequences, capped at 2 frames
}

void TestDataCli::statsErrors_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("message");
  QTest::newRow("unknown city") << QStringList{"--cities", "paris"} << 1 << "unknown city \"paris\" in data.cities; cities here: alderbrook";
  QTest::newRow("bad subset") << QStringList{"--subset", "both"} << 2 << "config key \"data.subset\": \"both\" is not allowed; allowed: all, database or query";
  QTest::newRow("bad fraction") << QStringList{"--holdout-fraction", "half"} << 2 << "option '--holdout-fraction': \"half\" is not a number";
  QTest::newRow("fraction out of range") << QStringList{"--holdout-fraction", "1.5"} << 2 << "data.holdout_fraction";
  QTest::newRow("negative cap") << QStringList{"--max-per-sequence", "-1"} << 2 << "--max-per-sequence";
  QTest::newRow("no folder") << QStringList{} << 2 << "give exactly one data folder";
}

void TestDataCli::statsErrors() {
  QFETCH(QStringList, args);
  QFETCH(int, code);
  QFETCH(QString, message);
  QStringList full{"data", "stats"};
  if (!message.startsWith("give exactly one")) full << data_;
  const auto r = runCli(full + args);
  QCOMPARE(r.exit_code, code);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QCOMPARE(r.err.trimmed().count('\n'), 0);
}

void TestDataCli::previewWritesAGrid() {
  QString image;
  QDirIterator it(data_, {"*.jpg"}, QDir::Files, QDirIterator::Subdirectories);
  QVERIFY(it.hasNext());
  image = it.next();
  const QString out = testOutputDir() + "/data-preview.png";
  const auto r = runCli({"data", "preview", image, "--n", "16", "--out", out, "--flip", "--rotate-deg", "8",
                         "--scale-jitter", "0.1", "--seed", "3"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QImage grid(out);
  QCOMPARE(grid.size(), QSize(4 * 66 + 2, 4 * 66 + 2));  // 4x4 tiles of 64 px, 2 px borders
  const QImage first = grid.copy(2, 2, 64, 64), second = grid.copy(68, 2, 64, 64);
  QVERIFY(first != second);  // every variant has its own augmentation
  const QString again = dir_.path() + "/again.png";
  QCOMPARE(runCli({"data", "preview", image, "--n", "16", "--out", again, "--flip", "--rotate-deg", "8",
                   "--scale-jitter", "0.1", "--seed", "3"}).exit_code, 0);
  QCOMPARE(QImage(again), grid);  // same seed, same pixels
}

void TestDataCli::previewOfABadImage() {
  const QString bad = dir_.path() + "/bad.jpg";
  QFile file(bad);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("text");
  file.close();
  const auto r = runCli({"data", "preview", bad, "--out", dir_.path() + "/x.png"});
  QCOMPARE(r.exit_code, 1);
  QVERIFY2(r.err.contains(bad + ": not an image"), qPrintable(r.err));
  QVERIFY(!QFile::exists(dir_.path() + "/x.png"));
}

void TestDataCli::cacheTrainingMatchesJpegTraining() {
  const QString cache = dir_.path() + "/tiny.sgcache";
  const auto built = runCli({"cache", "build", "--dataroot", data_, "--out", cache, "--workers", "2"});
  QVERIFY2(built.exit_code == 0, qPrintable(built.err));
  QVERIFY2(built.out.contains("100%  32/32 images"), qPrintable(built.out));
  QVERIFY2(built.out.contains("32 images"), qPrintable(built.out));
  const auto info = runCli({"cache", "info", cache});
  QVERIFY2(info.exit_code == 0, qPrintable(info.err));
  QVERIFY2(info.out.contains("32 images, 3 channel(s), decoded at 1/4 size, 0 damaged"), qPrintable(info.out));

  const QString from_files = dir_.path() + "/run-files", from_cache = dir_.path() + "/run-cache";
  const auto a = runCli(tinyTrainArgs(data_, from_files, 2) << "--workers" << "1");
  QVERIFY2(a.exit_code == 0, qPrintable(a.err));
  const auto b = runCli(tinyTrainArgs(data_, from_cache, 2) << "--workers" << "3" << "--cache" << cache);
  QVERIFY2(b.exit_code == 0, qPrintable(b.err));
  const auto losses = lossesOfData(from_files);
  QCOMPARE(losses.size(), 8);
  QCOMPARE(lossesOfData(from_cache), losses);
  const auto started = eventsOfType(readEvents(from_cache), "run_started").first();
  QCOMPARE(started.value("dataset").toObject().value("cache").toString(), cache);
  QCOMPARE(started.value("dataset").toObject().value("workers").toInt(), 3);
  for (const auto& step : eventsOfType(readEvents(from_cache), "step")) {
    const double wait = step.value("data_wait_fraction").toDouble(-1);
    QVERIFY(wait >= 0.0 && wait <= 1.0);
  }
  // A cache decoded at another size (crop 2x needs 1/2, the cache holds 1/4) is refused up front.
  QStringList args = tinyTrainArgs(data_, dir_.path() + "/run-refused", 1);
  args[args.indexOf("-t") + 1] = R"({"augment":{"crop_scale":2},"batch_size":8,"ngf":8,"ndf":8,"nz":16})";
  const auto refused = runCli(args << "--cache" << cache);
  QCOMPARE(refused.exit_code, 2);
  QVERIFY2(refused.err.contains("rebuild it with streetgan cache build"), qPrintable(refused.err));
}

void TestDataCli::cacheBuildProgressLines() {
  // --progress: the machine-readable lines of docs/events.md on stderr, counting up to every
  // image; stdout keeps only the summary (no percentages).
  const QString cache = dir_.path() + "/progress.sgcache";
  const auto built = runCli({"cache", "build", "--dataroot", data_, "--out", cache, "--progress"});
  QVERIFY2(built.exit_code == 0, qPrintable(built.err));
  QVERIFY2(!built.out.contains("100%"), qPrintable(built.out));
  const QRegularExpression pattern(R"(^progress/1 \{"task":"cache-build","done":(\d+),"total":32\b)");
  int lines = 0, last_done = -1;
  for (const QString& line : built.err.split('\n', Qt::SkipEmptyParts)) {
    if (!line.startsWith("progress")) continue;  // a library's own warning, say
    const auto match = pattern.match(line);
    QVERIFY2(match.hasMatch(), qPrintable("not a progress line: " + line));
    const int done = match.captured(1).toInt();
    QVERIFY2(done >= last_done, qPrintable(built.err));  // never backwards
    last_done = done;
    ++lines;
  }
  QVERIFY2(lines >= 1, qPrintable(built.err));
  QCOMPARE(last_done, 32);
}

void TestDataCli::trainingSkipsAndCountsBadFiles() {
  const QString root = dir_.path() + "/mixed";
  QDir().mkpath(root);
  int copied = 0;
  QDirIterator it(data_, {"*.jpg"}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext() && copied < 12) QVERIFY(QFile::copy(it.next(), root + QString("/good%1.jpg").arg(copied++)));
  QFile(root + "/empty.jpg").open(QIODevice::WriteOnly);
  QFile text(root + "/notes.jpg");
  QVERIFY(text.open(QIODevice::WriteOnly));
  text.write("not a picture");
  text.close();
  const QString run = dir_.path() + "/run-mixed";
  const auto r = runCli(tinyTrainArgs(root, run, 2));
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const auto events = readEvents(run);
  QStringList warned;
  for (const auto& w : eventsOfType(events, "warning")) warned << w.value("path").toString();
  warned.sort();
  // Each bad file is named once per epoch it was tried in.
  QCOMPARE(warned, (QStringList{root + "/empty.jpg", root + "/empty.jpg", root + "/notes.jpg", root + "/notes.jpg"}));
  const auto epochs = eventsOfType(events, "epoch_end");
  QCOMPARE(epochs.size(), 2);
  for (const auto& e : epochs) {
    QCOMPARE(e.value("skipped_files").toInt(), 2);
    QCOMPARE(e.value("images").toInt(), 12);
  }
}

void TestDataCli::unreadableDataSetStopsWithOneError() {
  const QString root = dir_.path() + "/unreadable";
  QDir().mkpath(root);
  for (int i = 0; i < 5; ++i) {
    QFile f(root + QString("/broken%1.jpg").arg(i));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("\xFF\xD8\xFF garbage");
  }
  const QString run = dir_.path() + "/run-unreadable";
  const auto r = runCli(tinyTrainArgs(root, run, 3));
  QCOMPARE(r.exit_code, 1);
  QVERIFY2(r.err.contains("none of the first 5 images could be read"), qPrintable(r.err));
  const auto finished = eventsOfType(readEvents(run), "run_finished");
  QCOMPARE(finished.size(), 1);
  QCOMPARE(finished.first().value("status").toString(), QString("failed"));
  QCOMPARE(eventsOfType(readEvents(run), "warning").size(), 5);
}

STREETGAN_TEST_GUILESS_MAIN(TestDataCli)
#include "tst_data_cli.moc"
