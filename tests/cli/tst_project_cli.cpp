// `streetgan project` through the real program, on a tiny trained checkpoint: two photographs of
// the data set projected into a walk file (their latents, photographs and errors), the same seed
// giving the same latents, the batch-statistics mode recorded, the file walked by `streetgan
// walk --walk`, the preview PNG; and the errors a researcher meets, each leaving no file behind.
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
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <sys/stat.h>

using namespace streetgan::test;

class TestProjectCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void twoPhotographsBecomeAWalk();
  void sameSeedSameLatents();
  void batchStatisticsAreRecorded();
  void errors_data();
  void errors();
  void aFailedWriteKeepsWhatWasThere();

private:
  QJsonObject project(const QStringList& extra, const QString& out);
  QTemporaryDir dir_;
  QString checkpoint_;
  QStringList photos_;
};

void TestProjectCli::initTestCase() {
  const QString data = makeTinyDataset(dir_.filePath("data"));
  const CliResult trained = runCli(tinyTrainArgs(data, dir_.filePath("run"), 1));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  QDirIterator checkpoints(dir_.filePath("run/checkpoints"), {"*.pt"});
  QVERIFY(checkpoints.hasNext());
  checkpoint_ = checkpoints.next();
  QDirIterator images(data, {"*.jpg"}, QDir::Files, QDirIterator::Subdirectories);
  while (images.hasNext() && photos_.size() < 2) photos_ << images.next();
  QCOMPARE(photos_.size(), 2);
}

QJsonObject TestProjectCli::project(const QStringList& extra, const QString& out) {
  const CliResult r = runCli(QStringList{"project"} + extra + QStringList{"--checkpoint", checkpoint_, "--out", out});
  if (r.exit_code != 0) qWarning("%s", qPrintable(r.err));
  return QJsonDocument::fromJson([&] {
           QFile f(out);
           return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
         }())
      .object();
}

void TestProjectCli::twoPhotographsBecomeAWalk() {
  const QString out = dir_.filePath("two.json"), preview = dir_.filePath("two.png");
  const CliResult r = runCli({"project", photos_[0], photos_[1], "--checkpoint", checkpoint_, "--out", out, "--steps", "30",
                              "--restarts", "2", "--preview", preview, "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.err.contains("wrote 2 latents (BatchNorm: running statistics) to " + out), qPrintable(r.err));
  QVERIFY2(r.err.contains(photos_[0] + ": loss "), qPrintable(r.err));
  QFile file(out);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QJsonObject walk = QJsonDocument::fromJson(file.readAll()).object();
  QCOMPARE(walk["version"].toInt(), 1);
  QCOMPARE(walk["nz"].toInt(), 16);
  const QJsonArray keys = walk["keyframes"].toArray();
  QCOMPARE(keys.size(), 2);
  for (int i = 0; i < 2; ++i) {
    const QJsonObject key = keys[i].toObject();
    QCOMPARE(key["photo"].toString(), photos_[i]);
    QCOMPARE(key["latent"].toArray().size(), 16);
    QVERIFY(std::isfinite(key["loss"].toDouble()) && key["loss"].toDouble() > 0);
    QVERIFY(key["pixel_rmse"].toDouble() > 0 && key["pixel_rmse"].toDouble() < 255);
    QVERIFY(key["ms_ssim"].toDouble() >= 0 && key["ms_ssim"].toDouble() <= 1);
    QVERIFY(key["restart"].toInt() >= 0 && key["restart"].toInt() < 2);
  }
  const QJsonObject settings = walk["projection"].toObject();
  QCOMPARE(settings["steps"].toInt(), 30);
  QCOMPARE(settings["restarts"].toInt(), 2);
  QCOMPARE(settings["batch_statistics"].toBool(), false);
  QCOMPARE(settings["checkpoint"].toString(), checkpoint_);
  const QImage grid(preview);
  QVERIFY(!grid.isNull());
  QVERIFY2(grid.width() >= 128 && grid.height() >= 128, qPrintable(QString("%1x%2").arg(grid.width()).arg(grid.height())));

  // The file is a walk: from one photograph's latent to the other's.
  const QString frames = dir_.filePath("frames");
  const CliResult walked = runCli({"walk", "--checkpoint", checkpoint_, "--walk", out, "--frames-per-key", "3", "--out-dir",
                                   frames, "--size", "0"});
  QVERIFY2(walked.exit_code == 0, qPrintable(walked.err));
  QCOMPARE(QDir(frames).entryList({"*.png"}).size(), 4);
}

void TestProjectCli::sameSeedSameLatents() {
  const QStringList args{photos_[0], "--steps", "5", "--restarts", "2", "--seed", "7", "--threads", testThreadsText()};
  const QJsonObject a = project(args, dir_.filePath("a.json")), b = project(args, dir_.filePath("b.json"));
  QVERIFY(!a.isEmpty());
  QCOMPARE(a["keyframes"].toArray()[0].toObject()["latent"], b["keyframes"].toArray()[0].toObject()["latent"]);
  const QJsonObject c = project({photos_[0], "--steps", "5", "--restarts", "2", "--seed", "8"}, dir_.filePath("c.json"));
  QVERIFY(a["keyframes"].toArray()[0].toObject()["latent"] != c["keyframes"].toArray()[0].toObject()["latent"]);
}

void TestProjectCli::batchStatisticsAreRecorded() {
  const QString out = dir_.filePath("bn.json");
  const CliResult r = runCli({"project", photos_[0], "--checkpoint", checkpoint_, "--out", out, "--steps", "5", "--restarts",
                              "2", "--train-mode"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.err.contains("(BatchNorm: batch statistics)"), qPrintable(r.err));
  QFile file(out);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QCOMPARE(QJsonDocument::fromJson(file.readAll()).object()["projection"].toObject()["batch_statistics"].toBool(), true);
}

void TestProjectCli::errors_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("message");
  QTest::newRow("no photograph") << QStringList{"--checkpoint", "@", "--out", "@out"} << 2 << "no photograph given (PHOTO...)";
  QTest::newRow("no --out") << QStringList{"@photo", "--checkpoint", "@"} << 2 << "missing --out FILE.json";
  QTest::newRow("no --checkpoint") << QStringList{"@photo", "--out", "@out"} << 2 << "--checkpoint";
  QTest::newRow("steps 0") << QStringList{"@photo", "--checkpoint", "@", "--out", "@out", "--steps", "0"} << 2 << "--steps";
  QTest::newRow("restarts 300") << QStringList{"@photo", "--checkpoint", "@", "--out", "@out", "--restarts", "300"} << 2
                                << "--restarts";
  QTest::newRow("a negative prior") << QStringList{"@photo", "--checkpoint", "@", "--out", "@out", "--prior", "-1"} << 2
                                    << "--prior";
  QTest::newRow("no such photograph") << QStringList{"@photo", "@dir/none.jpg", "--checkpoint", "@", "--out", "@out"} << 1
                                      << "none.jpg";
  QTest::newRow("not an image") << QStringList{"@photo", "@text", "--checkpoint", "@", "--out", "@out"} << 1 << "text.jpg";
  QTest::newRow("--out is the checkpoint") << QStringList{"@photo", "--checkpoint", "@", "--out", "@"} << 2
                                          << "is one of the inputs; it would be overwritten";
  QTest::newRow("--out is a photograph") << QStringList{"@photo", "--checkpoint", "@", "--out", "@photo"} << 2
                                         << "is one of the inputs";
  QTest::newRow("--out is a FIFO") << QStringList{"@photo", "--checkpoint", "@", "--out", "@fifo"} << 2
                                   << "exists and is not a regular file; it is not replaced";
  QTest::newRow("--out is empty") << QStringList{"@photo", "--checkpoint", "@", "--out", ""} << 2
                                  << "option '--out': give a file name";
  QTest::newRow("--out in a missing folder") << QStringList{"@photo", "--checkpoint", "@", "--out", "@dir/no/o.json"} << 2
                                             << "option '--out': no folder";
  QTest::newRow("--preview is --out") << QStringList{"@photo", "--checkpoint", "@", "--out", "@out", "--preview", "@out"} << 2
                                      << "--out and --preview name the same file";
  QTest::newRow("--preview in a missing folder")
      << QStringList{"@photo", "--checkpoint", "@", "--out", "@out", "--preview", "@dir/no/p.png"} << 2
      << "option '--preview': no folder";
  QTest::newRow("a FIFO as a photograph") << QStringList{"@photo", "@fifo", "--checkpoint", "@", "--out", "@out"} << 1
                                          << "not a regular file";
  QTest::newRow("no such checkpoint") << QStringList{"@photo", "--checkpoint", "@dir/none.pt", "--out", "@out"} << 1
                                      << "none.pt";
}

void TestProjectCli::errors() {
  QFETCH(QStringList, args);
  QFETCH(int, code);
  QFETCH(QString, message);
  QTemporaryDir scratch;
  const QString out = scratch.filePath("out.json"), text = scratch.filePath("text.jpg");
  QFile file(text);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("not a photograph\n");
  file.close();
  const QString fifo = scratch.filePath("fifo");
  QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
  for (QString& arg : args) {
    if (arg == "@fifo") arg = fifo;
    else if (arg == "@") arg = checkpoint_;
    else if (arg == "@out") arg = out;
    else if (arg == "@photo") arg = photos_[0];
    else if (arg == "@text") arg = text;
    else if (arg.startsWith("@dir")) arg = scratch.path() + arg.mid(4);
  }
  if (!args.contains("--steps")) args << "--steps" << "3";
  if (!args.contains("--restarts")) args << "--restarts" << "1";
  const CliResult r = runCli(QStringList{"project"} + args, 120000);  // a FIFO must not hang it
  QCOMPARE(r.exit_code, code);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QCOMPARE(r.err.trimmed().count('\n'), 0);  // one line
  QVERIFY(!QFile::exists(out));
}

// --out cannot be written (a folder stands where its temporary file goes): the --preview file that
// was there before is kept byte for byte, and nothing else appears.
void TestProjectCli::aFailedWriteKeepsWhatWasThere() {
  QTemporaryDir scratch;
  const QString out = scratch.filePath("out.json"), preview = scratch.filePath("mine.png");
  QFile mine(preview);
  QVERIFY(mine.open(QIODevice::WriteOnly));
  mine.write("the user's own file");
  mine.close();
  QProcess process;
  // The folder is made before streetgan runs, by the shell that then becomes it (exec keeps the
  // pid its name holds).
  process.start("/bin/sh", QStringList{"-c", "mkdir \"$0.$$.tmp\" && exec \"$@\"", out, STREETGAN_CLI, "project", photos_[0],
                                      "--checkpoint", checkpoint_, "--out", out, "--preview", preview, "--steps", "5",
                                      "--restarts", "1", "--threads", testThreadsText()});
  QVERIFY(process.waitForStarted());
  const QString blocker = out + "." + QString::number(process.processId()) + ".tmp";
  QVERIFY2(process.waitForFinished(120000), "project did not end within 120 s");
  const QString err = QString::fromUtf8(process.readAllStandardError());
  QCOMPARE(process.exitCode(), 1);
  QVERIFY2(err.contains("nothing was written"), qPrintable(err));
  QCOMPARE(readFileBytes(preview), QByteArray("the user's own file"));
  QCOMPARE(QDir(scratch.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
           QStringList({"mine.png", QFileInfo(blocker).fileName()}));
}

STREETGAN_TEST_GUILESS_MAIN(TestProjectCli)
#include "tst_project_cli.moc"
