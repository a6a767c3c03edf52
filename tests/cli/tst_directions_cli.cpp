// `streetgan directions` and `streetgan walk --direction` through the real program, on a tiny
// trained checkpoint: SeFa and PCA tables, directions saved into the run and read back, listed,
// renamed, exported for NumPy and deleted, a walk along a saved direction decoded back, and the
// errors a researcher can run into (each leaving nothing behind).
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::test;

class TestDirectionsCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void closedFormTableSavedIntoTheRun();
  void principalComponentsAsJsonAndNpy();
  void renameExportDelete();
  void walkAlongADirection();
  void errors_data();
  void errors();

private:
  QTemporaryDir dir_;
  QString run_, checkpoint_;
};

void TestDirectionsCli::initTestCase() {
  const QString data = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("run");
  const CliResult trained = runCli(tinyTrainArgs(data, run_, 1));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  QDirIterator it(run_ + "/checkpoints", {"*.pt"});
  QVERIFY(it.hasNext());
  checkpoint_ = it.next();
}

void TestDirectionsCli::closedFormTableSavedIntoTheRun() {
  const CliResult r = runCli({"directions", "--checkpoint", checkpoint_, "--top", "3", "--save", "sefa"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QStringList lines = r.out.trimmed().split('\n');
  QCOMPARE(lines.size(), 5);  // a title, the header, 3 rows
  QVERIFY2(lines[0].startsWith("# closed-form directions of " + checkpoint_), qPrintable(lines[0]));
  QVERIFY2(lines[1].startsWith("rank  eigenvalue"), qPrintable(lines[1]));
  double previous = INFINITY;
  for (int i = 2; i < 5; ++i) {
    const QStringList cells = lines[i].split(' ', Qt::SkipEmptyParts);
    QCOMPARE(cells[0].toInt(), i - 1);
    const double value = cells[1].toDouble();
    QVERIFY(value > 0 && value <= previous);
    previous = value;
  }
  for (int i = 1; i <= 3; ++i) {
    const QString saved = QString("%1/directions/sefa-%2.json").arg(run_).arg(i);
    QVERIFY2(QFile::exists(saved), qPrintable(r.err));
    QVERIFY2(r.err.contains("saved " + saved), qPrintable(r.err));
  }
  const CliResult listed = runCli({"directions", "--run", run_, "--list"});
  QVERIFY2(listed.exit_code == 0, qPrintable(listed.err));
  QVERIFY2(listed.out.contains(QRegularExpression("^sefa-1 +closed-form +eigenvalue [0-9.e+-]+  nz 16",
                                                   QRegularExpression::MultilineOption)),
           qPrintable(listed.out));
}

void TestDirectionsCli::principalComponentsAsJsonAndNpy() {
  const CliResult r = runCli({"directions", "--checkpoint", checkpoint_, "--method", "pca", "--n", "300", "--top", "2",
                              "--json", "--save", "pc", "--format", "npy"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(out["method"].toString(), QString("pca"));
  const QJsonArray directions = out["directions"].toArray();
  QCOMPARE(directions.size(), 2);
  double shares = 0;
  for (const auto& value : directions) {
    const QJsonObject d = value.toObject();
    QCOMPARE(d["vector"].toArray().size(), 16);  // the tiny model's latent
    double norm = 0;
    for (const auto& x : d["vector"].toArray()) norm += x.toDouble() * x.toDouble();
    QVERIFY(std::fabs(norm - 1) < 1e-5);
    shares += d["variance_share"].toDouble();
  }
  QVERIFY(shares > 0 && shares < 1);
  QProcess python;
  python.start("/usr/bin/python3", {"-c", "import sys, numpy; a = numpy.load(sys.argv[1]); print(a.dtype, a.shape)",
                                    run_ + "/directions/pc-2.npy"});
  QVERIFY(python.waitForFinished(60000));
  QCOMPARE(QString(python.readAllStandardOutput()).trimmed(), QString("float32 (16,)"));
}

void TestDirectionsCli::renameExportDelete() {
  QVERIFY(runCli({"directions", "--checkpoint", checkpoint_, "--top", "1", "--save", "first"}).exit_code == 0);
  const CliResult renamed = runCli({"directions", "--run", run_, "--rename", "first", "--to", "wide-road"});
  QVERIFY2(renamed.exit_code == 0, qPrintable(renamed.err));
  QVERIFY(!QFile::exists(run_ + "/directions/first.json"));
  QTemporaryDir out;
  const CliResult exported =
      runCli({"directions", "--run", run_, "--export", "wide-road", "--out", out.filePath("road.npy")});
  QVERIFY2(exported.exit_code == 0, qPrintable(exported.err));
  QCOMPARE(QFileInfo(out.filePath("road.npy")).size(), qint64(128 + 16 * 4));  // a 128-byte header, 16 floats
  const CliResult deleted = runCli({"directions", "--run", run_, "--delete", "wide-road"});
  QVERIFY2(deleted.exit_code == 0, qPrintable(deleted.err));
  QVERIFY(!QFile::exists(run_ + "/directions/wide-road.json"));
  const CliResult again = runCli({"directions", "--run", run_, "--delete", "wide-road"});
  QCOMPARE(again.exit_code, 1);
  QVERIFY2(again.err.contains("cannot delete " + run_ + "/directions/wide-road.json"), qPrintable(again.err));
}

void TestDirectionsCli::walkAlongADirection() {
  QVERIFY(runCli({"directions", "--checkpoint", checkpoint_, "--top", "1", "--save", "walked"}).exit_code == 0);
  QTemporaryDir out;
  const QString direction = run_ + "/directions/walked.json";
  const auto walk = [&](const QString& range, const QString& folder) {
    return runCli({"walk", "--checkpoint", checkpoint_, "--direction", direction, "--seed", "5", "--range", range,
                   "--frames-per-key", "6", "--easing", "linear", "--size", "0", "--out-dir", out.filePath(folder)});
  };
  const CliResult forth = walk("-3,3", "a"), back = walk("3,-3", "b");
  QVERIFY2(forth.exit_code == 0 && back.exit_code == 0, qPrintable(forth.err + back.err));
  QCOMPARE(QDir(out.filePath("a")).entryList({"*.png"}).size(), 7);  // 6 steps, both ends
  const auto frame = [&](const QString& folder, int i) {
    return QImage(out.filePath(QString("%1/frame_%2.png").arg(folder).arg(i, 6, 10, QChar('0')))).convertToFormat(QImage::Format_RGB888);
  };
  QVERIFY(frame("a", 0) != frame("a", 6));  // the direction moves the image
  // Walking the other way gives the same frames in reverse (to a level of rounding).
  for (int i = 0; i <= 6; ++i) {
    const QImage x = frame("a", i), y = frame("b", 6 - i);
    QVERIFY(!x.isNull() && x.size() == y.size());
    int largest = 0;
    for (int row = 0; row < x.height(); ++row)
      for (int c = 0; c < x.width() * 3; ++c)
        largest = std::max(largest, std::abs(int(x.constScanLine(row)[c]) - int(y.constScanLine(row)[c])));
    QVERIFY2(largest <= 1, qPrintable(QString("frame %1: %2 levels apart").arg(i).arg(largest)));
  }
}

void TestDirectionsCli::errors_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("message");
  QTest::newRow("unknown method") << QStringList{"directions", "--checkpoint", "@", "--method", "ica"} << 2
                                  << "option '--method': 'ica' is not allowed; allowed: sefa, pca";
  QTest::newRow("top 0") << QStringList{"directions", "--checkpoint", "@", "--top", "0"} << 2 << "--top";
  QTest::newRow("top above nz") << QStringList{"directions", "--checkpoint", "@", "--top", "17"} << 2
                                << "option '--top': the model's latent has 16 values, so at most 16 directions; got 17";
  QTest::newRow("pca: --n not above nz") << QStringList{"directions", "--checkpoint", "@", "--method", "pca", "--n", "16"}
                                         << 2 << "option '--n': principal components need more latents than the latent size (16)";
  QTest::newRow("a name too long for K directions")
      << QStringList{"directions", "--checkpoint", "@", "--top", "10", "--save", QString(62, 'a')} << 2
      << "with --top 10 the last name is " + QString(62, 'a') + "-10";
  QTest::newRow("saving over a saved direction")
      << QStringList{"directions", "--checkpoint", "@", "--top", "1", "--save", "taken"} << 2 << "taken.json already exists";
  QTest::newRow("a stray option with --delete") << QStringList{"directions", "--run", "@run", "--delete", "x", "--to", "y"}
                                                << 2 << "--to cannot go with --delete";
  QTest::newRow("a bad name for --delete") << QStringList{"directions", "--run", "@run", "--delete", "../x"} << 2
                                           << "option '--delete': a direction's name must not start with '.'";
  QTest::newRow("no such run") << QStringList{"directions", "--run", "@run/nothing", "--list"} << 1 << "no such run folder";
  QTest::newRow("walk: an empty direction")
      << QStringList{"walk", "--checkpoint", "@", "--direction", "", "--out-dir", "@out"} << 2
      << "option '--direction': give a direction file";
  QTest::newRow("walk: a hexadecimal range")
      << QStringList{"walk", "--checkpoint", "@", "--direction", "@small", "--range", "0x10,1", "--out-dir", "@out"} << 2
      << "two different numbers from -1000 to 1000";
  QTest::newRow("a path as the name") << QStringList{"directions", "--checkpoint", "@", "--save", "../x"} << 2
                                      << "option '--save': a direction's name must not start with '.'";
  QTest::newRow("--n with sefa") << QStringList{"directions", "--checkpoint", "@", "--n", "100"} << 2
                                 << "--n and --seed go with --method pca";
  QTest::newRow("--list without --run") << QStringList{"directions", "--list"} << 2 << "need --run DIR";
  QTest::newRow("--rename without --to") << QStringList{"directions", "--run", "@run", "--rename", "x"} << 2
                                         << "--rename OLD needs --to NEW";
  QTest::newRow("walk: a direction of another size")
      << QStringList{"walk", "--checkpoint", "@", "--direction", "@small", "--out-dir", "@out"} << 1
      << "the direction has 3 values, the generator's latent 16";
  QTest::newRow("walk: no such direction")
      << QStringList{"walk", "--checkpoint", "@", "--direction", "@run/directions/none.json", "--out-dir", "@out"} << 1
      << "none.json";
  QTest::newRow("walk: an empty range")
      << QStringList{"walk", "--checkpoint", "@", "--direction", "@small", "--range", "1,1", "--out-dir", "@out"} << 2
      << "option '--range': '1,1' is not allowed; allowed: A,B, two different numbers from -1000 to 1000";
  QTest::newRow("walk: --range without --direction")
      << QStringList{"walk", "--checkpoint", "@", "--seeds", "1,2", "--range", "-1,1", "--out-dir", "@out"} << 2
      << "--range goes with --direction";
}

void TestDirectionsCli::errors() {
  QFETCH(QStringList, args);
  QFETCH(int, code);
  QFETCH(QString, message);
  QTemporaryDir scratch;
  const QString small = scratch.filePath("small.json");
  QFile file(small);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(R"({"v": 1, "kind": "closed-form", "eigenvalue": 1, "vector": [1, 0, 0]})");
  file.close();
  const QString out = scratch.filePath("out");
  for (QString& arg : args) {
    if (arg == "@") arg = checkpoint_;
    else if (arg == "@small") arg = small;
    else if (arg == "@out") arg = out;
    else if (arg.startsWith("@run")) arg = run_ + arg.mid(4);
  }
  if (!QFile::exists(run_ + "/directions/taken.json"))
    QVERIFY(runCli({"directions", "--checkpoint", checkpoint_, "--top", "1", "--save", "taken"}).exit_code == 0);
  const QStringList before = QDir(run_ + "/directions").entryList(QDir::Files);
  const CliResult r = runCli(args);
  QCOMPARE(r.exit_code, code);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QCOMPARE(r.err.count('\n'), 1);  // one line
  QVERIFY(!QFile::exists(out));
  QCOMPARE(QDir(run_ + "/directions").entryList(QDir::Files), before);
}

STREETGAN_TEST_GUILESS_MAIN(TestDirectionsCli)
#include "tst_directions_cli.moc"
