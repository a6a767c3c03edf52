// `streetgan walk` through the real program: videos of a tiny trained checkpoint decoded back,
// a saved walk file rendering the same frames, grid walks, the errors a researcher can run into
// (each leaving nothing behind) and SIGINT cancelling an export.
#include "tests/support/decoded_video.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

using namespace streetgan::test;

namespace {

QStringList entries(const QString& dir) {
  return QDir(dir).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
}

}  // namespace

class TestWalkCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void videosDecodeBack_data();
  void videosDecodeBack();
  void savedWalkRendersTheSameFrames();
  void gridWalk();
  void errors_data();
  void errors();
  void sigintCancelsAndLeavesNothing();

private:
  QTemporaryDir dir_;
  QString checkpoint_;
};

void TestWalkCli::initTestCase() {
  const QString data = makeTinyDataset(dir_.filePath("data"));
  const CliResult trained = runCli(tinyTrainArgs(data, dir_.filePath("run"), 1));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  QDirIterator it(dir_.filePath("run/checkpoints"), {"*.pt"});
  QVERIFY(it.hasNext());
  checkpoint_ = it.next();
}

void TestWalkCli::videosDecodeBack_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<QStringList>("options");
  QTest::addColumn<QString>("codec");
  QTest::addColumn<int>("size");
  QTest::newRow("gif, default size") << "walk.gif" << QStringList{} << "gif" << 512;
  QTest::newRow("mp4 at 256, nearest") << "walk.mp4" << QStringList{"--size", "256", "--filter", "nearest"} << "h264" << 256;
  QTest::newRow("webm at 128") << "walk.webm" << QStringList{"--size", "128", "--crf", "40"} << "vp9" << 128;
  QTest::newRow("gif by --format") << "walk.anim" << QStringList{"--format", "gif", "--size", "0"} << "gif" << 64;
}

void TestWalkCli::videosDecodeBack() {
  QFETCH(QString, name);
  QFETCH(QStringList, options);
  QFETCH(QString, codec);
  QFETCH(int, size);
  QTemporaryDir out;
  const QString path = out.filePath(name);
  const CliResult result = runCli(QStringList{"walk", "--checkpoint", checkpoint_, "--seeds", "3,14,15",
                                              "--frames-per-key", "4", "--loop", "--fps", "20", "--out", path} +
                                  options);
  QVERIFY2(result.exit_code == 0, qPrintable(result.err));
  QVERIFY2(result.err.contains("rendered 12/12, encoded 12/12\n"), qPrintable(result.err));  // the progress line
  QVERIFY2(result.err.contains(QString("wrote 12 frames of %1x%1").arg(size)), qPrintable(result.err));
  QCOMPARE(entries(out.path()), QStringList{name});
  const DecodedVideo video = decodeVideo(path);
  QVERIFY2(video.error.isEmpty(), qPrintable(video.error));
  QCOMPARE(video.codec, codec);
  QCOMPARE(static_cast<int>(video.frames.size()), 12);  // 3 keys × 4 frames, a loop
  QCOMPARE(video.width, size);
  QCOMPARE(video.height, size);
  if (codec == "gif") QCOMPARE(video.gif_loop_count, 0);
  else QVERIFY(std::abs(video.frame_rate - 20) < 1e-6);
}

void TestWalkCli::savedWalkRendersTheSameFrames() {
  QTemporaryDir out;
  const QString walk_file = out.filePath("walk.json");
  CliResult first = runCli({"walk", "--checkpoint", checkpoint_, "--seeds", "5,6,7", "--frames-per-key", "3",
                            "--mode", "lerp", "--easing", "linear", "--size", "0", "--save-walk", walk_file,
                            "--out-dir", out.filePath("a")});
  QVERIFY2(first.exit_code == 0, qPrintable(first.err));
  CliResult second = runCli({"walk", "--checkpoint", checkpoint_, "--walk", walk_file, "--size", "0",
                             "--out-dir", out.filePath("b")});
  QVERIFY2(second.exit_code == 0, qPrintable(second.err));
  const QStringList frames = entries(out.filePath("a"));
  QCOMPARE(frames.size(), 7);  // open walk: (3 − 1) × 3 + 1
  QCOMPARE(entries(out.filePath("b")), frames);
  for (const QString& frame : frames)
    QCOMPARE(readFileBytes(out.filePath("b/" + frame)), readFileBytes(out.filePath("a/" + frame)));
  // The file's settings can be overridden on the command line.
  CliResult longer = runCli({"walk", "--checkpoint", checkpoint_, "--walk", walk_file, "--frames-per-key", "5",
                             "--loop", "--size", "0", "--out-dir", out.filePath("c")});
  QVERIFY2(longer.exit_code == 0, qPrintable(longer.err));
  QCOMPARE(entries(out.filePath("c")).size(), 15);
}

void TestWalkCli::gridWalk() {
  QTemporaryDir out;
  const CliResult result = runCli({"walk", "--checkpoint", checkpoint_, "--grid", "2x3", "--keys", "2",
                                   "--frames-per-key", "3", "--size", "0", "--out", out.filePath("grid.mp4")});
  QVERIFY2(result.exit_code == 0, qPrintable(result.err));
  const DecodedVideo video = decodeVideo(out.filePath("grid.mp4"));
  QCOMPARE(static_cast<int>(video.frames.size()), 4);
  // 3 columns and 2 rows of 64 px tiles, 2 px apart (even sizes for H.264).
  QVERIFY2(video.width > 3 * 64 && video.width <= 3 * 64 + 8, qPrintable(QString::number(video.width)));
  QVERIFY2(video.height > 2 * 64 && video.height <= 2 * 64 + 8, qPrintable(QString::number(video.height)));
}

void TestWalkCli::errors_data() {
  QTest::addColumn<QStringList>("args");  // "%C" = the checkpoint, "%D" = a fresh folder
  QTest::addColumn<int>("exit_code");
  QTest::addColumn<QString>("message");
  const QStringList walk{"walk", "--checkpoint", "%C"};
  QTest::newRow("no checkpoint") << QStringList{"walk", "--seeds", "1,2", "--out", "%D/w.gif"} << 2 << "missing --checkpoint FILE";
  QTest::newRow("no keyframes") << walk + QStringList{"--out", "%D/w.gif"} << 2 << "give exactly one of --seeds, --walk, --grid and --direction";
  QTest::newRow("seeds and walk") << walk + QStringList{"--seeds", "1,2", "--walk", "%D/w.json", "--out", "%D/w.gif"} << 2 << "give exactly one of";
  QTest::newRow("no output") << walk + QStringList{"--seeds", "1,2"} << 2 << "give one of --out FILE and --out-dir DIR";
  QTest::newRow("one seed") << walk + QStringList{"--seeds", "4", "--out", "%D/w.gif"} << 2 << "a walk needs at least 2 seeds";
  QTest::newRow("bad seed") << walk + QStringList{"--seeds", "1,x", "--out", "%D/w.gif"} << 2 << "\"x\" is not a seed";
  QTest::newRow("bad extension") << walk + QStringList{"--seeds", "1,2", "--out", "%D/w.avi"} << 2 << "unknown video extension \".avi\"";
  QTest::newRow("fps 0") << walk + QStringList{"--seeds", "1,2", "--fps", "0", "--out", "%D/w.mp4"} << 2 << "option '--fps': '0' is not allowed";
  QTest::newRow("gif too fast") << walk + QStringList{"--seeds", "1,2", "--fps", "60", "--out", "%D/w.gif"} << 2 << "at most 50 frames per second";
  QTest::newRow("bad mode") << walk + QStringList{"--seeds", "1,2", "--mode", "cubic", "--out", "%D/w.gif"} << 2 << "option '--mode'";
  QTest::newRow("bad grid") << walk + QStringList{"--grid", "0x3", "--out", "%D/w.gif"} << 2 << "option '--grid': '0x3'";
  QTest::newRow("keys without grid") << walk + QStringList{"--seeds", "1,2", "--keys", "3", "--out", "%D/w.gif"} << 2 << "--keys goes with --grid";
  QTest::newRow("seed without grid or direction") << walk + QStringList{"--seeds", "1,2", "--seed", "3", "--out", "%D/w.gif"} << 2
                                                  << "--seed goes with --grid or --direction";
  QTest::newRow("png to --out") << walk + QStringList{"--seeds", "1,2", "--format", "png", "--out", "%D/w.png"} << 2 << "use --out-dir DIR";
  QTest::newRow("missing walk file") << walk + QStringList{"--walk", "%D/none.json", "--out", "%D/w.gif"} << 1 << "none.json";
  QTest::newRow("missing checkpoint") << QStringList{"walk", "--checkpoint", "%D/none.pt", "--seeds", "1,2", "--out", "%D/w.gif"} << 1 << "none.pt";
  QTest::newRow("missing folder") << walk + QStringList{"--seeds", "1,2", "--out", "%D/no/w.gif"} << 1 << "does not exist";
  QTest::newRow("unknown encoder") << walk + QStringList{"--seeds", "1,2", "--encoder", "x265-please", "--out", "%D/w.mp4"} << 1 << "has no \"x265-please\" encoder";
}

void TestWalkCli::errors() {
  QFETCH(QStringList, args);
  QFETCH(int, exit_code);
  QFETCH(QString, message);
  QTemporaryDir out;
  for (QString& arg : args) arg = arg.replace("%C", checkpoint_).replace("%D", out.path());
  const CliResult result = runCli(args);
  QCOMPARE(result.exit_code, exit_code);
  QVERIFY2(result.err.startsWith("streetgan walk: ") && result.err.contains(message), qPrintable(result.err));
  QCOMPARE(result.err.count('\n'), 1);  // one line
  QVERIFY2(entries(out.path()).isEmpty(), qPrintable(entries(out.path()).join(", ")));
}

void TestWalkCli::sigintCancelsAndLeavesNothing() {
  QTemporaryDir out;
  QProcess process;
  process.setProgram(STREETGAN_CLI);
  process.setArguments({"walk", "--checkpoint", checkpoint_, "--seeds", "1,2", "--frames-per-key", "100000",
                        "--batch", "16", "--size", "256", "--out", out.filePath("long.mp4")});
  process.start();
  QVERIFY(process.waitForStarted());
  QByteArray err;
  QElapsedTimer timer;
  timer.start();
  while (!err.contains("rendered 32/") && timer.elapsed() < 60000) {
    process.waitForReadyRead(200);
    err += process.readAllStandardError();
  }
  QVERIFY2(err.contains("rendered 32/"), err.constData());
  QVERIFY(!entries(out.path()).isEmpty());  // the temporary file is being written
  ::kill(static_cast<pid_t>(process.processId()), SIGINT);
  QVERIFY(process.waitForFinished(60000));
  err += process.readAllStandardError();
  QCOMPARE(process.exitCode(), 1);
  QVERIFY2(err.contains("streetgan walk: export cancelled; nothing was written to " + out.filePath("long.mp4").toUtf8()),
           err.constData());
  QVERIFY2(entries(out.path()).isEmpty(), qPrintable(entries(out.path()).join(", ")));
}

STREETGAN_TEST_GUILESS_MAIN(TestWalkCli)
#include "tst_walk_cli.moc"
