#include "core/data/image_dataset.h"
#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QtTest>

#include <csignal>
#include <sys/stat.h>

#include <cmath>

using namespace streetgan::test;

class TestCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void badArguments_data();
  void badArguments();
  void helpAndVersion_data();
  void helpAndVersion();
  void infoJson();
  void demoDataLayout();
  void demoDataIsDeterministic();
  void demoDataStoppedLeavesNothing();
  void sampleFromCheckpoint();
  void trainingOutlivesItsStdoutReader();
  void systemEventsDescribeTheMachine();
  void tensorboardFiles();
  void tensorboardReadsSamplesOnlyInsideTheRun();
  void tensorboardBoundsWhatItWrites();
  void cudaAbsenceIsExplained();
  void cudaGraphsRefusedPlainly();
  void frontLoadsNoLibTorch();
  void frontFindsItsEngine();

private:
  QTemporaryDir dir_;
  QString data_;
};

void TestCli::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = makeTinyDataset(dir_.path());
}

void TestCli::badArguments_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("message");
  const QString d = "@DATA@";
  QTest::newRow("no command") << QStringList{} << 2 << "Usage: streetgan <command>";
  QTest::newRow("unknown command") << QStringList{"fly"} << 2
      << "streetgan: unknown command 'fly' (see streetgan --help)";
  QTest::newRow("unknown option") << QStringList{"train", "--dataroot", d, "--speed", "9"} << 2
      << "streetgan train: unknown option '--speed' (see streetgan train --help)";
  QTest::newRow("missing value") << QStringList{"train", "--dataroot"} << 2
      << "streetgan train: option '--dataroot' needs a value (--dataroot DIR)";
  QTest::newRow("missing dataroot") << QStringList{"train"} << 2
      << "streetgan train: missing --dataroot DIR (the folder of training images)";
  QTest::newRow("dataroot missing folder") << QStringList{"train", "--dataroot", "/nonexistent/x", "--run-dir", "@RUN@"} << 2
      << "streetgan train: /nonexistent/x: the data folder does not exist or is not a folder";
  QTest::newRow("dataroot without images") << QStringList{"train", "--dataroot", "@EMPTY@", "--run-dir", "@RUN@"} << 2
      << "no images found";
  QTest::newRow("bad epochs") << QStringList{"train", "--dataroot", d, "--epochs", "zero"} << 2
      << "streetgan train: option '--epochs': 'zero' is not allowed; allowed: an integer from 1 to 1000000";
  QTest::newRow("bad img_size") << QStringList{"train", "--dataroot", d, "-t", R"({"img_size":96})"} << 2
      << "streetgan train: -t: config key \"img_size\": 96 is not allowed; allowed: 64 or 128";
  QTest::newRow("bad lr") << QStringList{"train", "--dataroot", d, "-t", R"({"lr":-1})"} << 2
      << "streetgan train: -t: config key \"lr\": -1 is not allowed; allowed: a positive number below 10";
  QTest::newRow("bad json") << QStringList{"train", "--dataroot", d, "-t", "{lr:1}"} << 2
      << "streetgan train: -t: not valid JSON";
  QTest::newRow("checkpoint key in -t") << QStringList{"train", "--dataroot", d, "-t", R"({"name":"x"})"} << 2
      << "streetgan train: -t: config key \"name\" is not allowed here";
  QTest::newRow("bad preset") << QStringList{"train", "--dataroot", d, "--preset", "big"} << 2
      << "streetgan train: option '--preset': unknown preset \"big\"; allowed: naive-64, safe-64, safe-128, demo, modern-64, modern-128";
  QTest::newRow("missing config file") << QStringList{"train", "--dataroot", d, "--config", "/nonexistent.json"} << 2
      << "streetgan train: /nonexistent.json: cannot open the config file";
  QTest::newRow("cuda without cuda") << QStringList{"train", "--dataroot", d, "--device", "cuda:3", "--run-dir", "@RUN@"} << 2
      << "device \"cuda:3\" is not available";
  QTest::newRow("bad device") << QStringList{"train", "--dataroot", d, "--device", "tpu"} << 2
      << "config key \"device\": \"tpu\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu";
  QTest::newRow("fp16 on cpu") << QStringList{"train", "--dataroot", d, "--device", "cpu", "--precision", "fp16", "--run-dir", "@RUN@"} << 2
      << "precision \"fp16\" needs a CUDA device";
  QTest::newRow("events to file") << QStringList{"train", "--dataroot", d, "--events", "x.jsonl"} << 2
      << "option '--events': only '-' (stdout) is allowed";
  QTest::newRow("resume with config") << QStringList{"train", "--resume", "--run-dir", "@RUN@", "--config", "x.json"} << 2
      << "option '--config' cannot be used with --resume";
  // With no run to read, a recipe key is not said to change: there is nothing to resume.
  QTest::newRow("resume a recipe key, no run") << QStringList{"train", "--resume", "--run-dir", "@RUN@", "-t", R"({"d_norm":"spectral"})"} << 2
      << "no checkpoint to resume from";
  QTest::newRow("resume the seed, no run") << QStringList{"train", "--resume", "--run-dir", "@RUN@", "-t", R"({"seed":3})"} << 2
      << "streetgan train: -t: config key \"seed\" cannot change when a run resumes: its checkpoints hold what it "
         "trained with it (its settings); to train with another seed, start a new run (another --run-dir). A resume "
         "may change: ";
  QTest::newRow("resume nothing") << QStringList{"train", "--resume", "--run-dir", "@RUN@", "--dataroot", d} << 2
      << "no checkpoint to resume from";
  QTest::newRow("resume with a data filter") << QStringList{"train", "--resume", "--run-dir", "@RUN@", "--cities", "a"} << 2
      << "streetgan train: option '--cities' cannot be used with --resume: a resumed run keeps its stored config (only "
         "--epochs, --device, --precision, --threads, --dataroot, --workers, --cache, --cuda-graphs and -t with lr, "
         "lr_d, lr_g, r1_gamma, r2_gamma, augment.* may change)";
  QTest::newRow("resume with too many workers") << QStringList{"train", "--resume", "--run-dir", "@RUN@", "--workers", "2000"} << 2
      << "streetgan train: option '--workers': '2000' is not allowed; allowed: an integer from 0 to 1024";
  QTest::newRow("too many workers") << QStringList{"train", "--dataroot", d, "--workers", "2000"} << 2
      << "streetgan train: option '--workers': '2000' is not allowed; allowed: an integer from 0 to 1024";
  QTest::newRow("sample missing checkpoint") << QStringList{"sample", "--checkpoint", "/nonexistent.pt", "--out", "@RUN@/x.png"} << 1
      << "streetgan sample: /nonexistent.pt: the checkpoint does not exist";
  QTest::newRow("sample no out") << QStringList{"sample", "--checkpoint", "x.pt"} << 2
      << "streetgan sample: missing --out FILE.png";
  QTest::newRow("demo-data bad cities") << QStringList{"demo-data", "--out", "@RUN@", "--cities", "9"} << 2
      << "streetgan demo-data: option '--cities': '9' is not allowed; allowed: an integer from 1 to 8";
  QTest::newRow("demo-data into existing") << QStringList{"demo-data", "--out", d} << 1
      << "already holds a train_val folder";
  QTest::newRow("bench unknown") << QStringList{"bench", "infer"} << 2
      << "streetgan bench: unknown benchmark 'infer'; allowed: train";
  QTest::newRow("info bad preset") << QStringList{"info", "--preset", "x"} << 2
      << "streetgan info: option '--preset': unknown preset \"x\"";
}

void TestCli::badArguments() {
  QFETCH(QStringList, args);
  QFETCH(int, code);
  QFETCH(QString, message);
  QTemporaryDir run;
  QTemporaryDir empty;
  for (QString& a : args)
    a.replace("@DATA@", data_).replace("@RUN@", run.path() + "/run").replace("@EMPTY@", empty.path());
  const auto r = runCli(args, 120000);
  QCOMPARE(r.exit_code, code);
  QVERIFY2(r.err.contains(message), qPrintable("stderr was: " + r.err));
  if (code == 2 && !args.contains("--resume"))  // nothing started: no run was written
    QVERIFY(!QFile::exists(run.path() + "/run/events.jsonl"));
  if (!r.err.startsWith("Usage"))  // errors are one line
    QCOMPARE(r.err.trimmed().count('\n'), 0);
}

void TestCli::helpAndVersion_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("expected");
  QTest::newRow("version") << QStringList{"--version"} << "streetgan 0.";
  QTest::newRow("help") << QStringList{"--help"} << "Commands:";
  for (const char* command : {"train", "sample", "info", "demo-data", "tensorboard", "import", "export"})
    QTest::newRow(command) << QStringList{command, "--help"} << QString("Usage: streetgan ") + command;
  QTest::newRow("bench train") << QStringList{"bench", "train", "--help"} << "Usage: streetgan bench train";
}

void TestCli::helpAndVersion() {
  QFETCH(QStringList, args);
  QFETCH(QString, expected);
  const auto r = runCli(args);
  QCOMPARE(r.exit_code, 0);
  QVERIFY2(r.out.contains(expected), qPrintable(r.out));
}

void TestCli::infoJson() {
  const auto r = runCli({"info", "--preset", "safe-128", "--json"});
  QCOMPARE(r.exit_code, 0);
  const auto info = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QVERIFY(info.value("params_g").toDouble() > 0);
  QVERIFY(info.value("params_d").toDouble() > 0);
  QVERIFY(info.value("devices").toArray().contains("cpu"));
  QCOMPARE(info.value("img_size").toInt(), 128);
  QCOMPARE(info.value("presets").toArray().size(), 6);
  for (const auto& preset : info.value("presets").toArray())  // each preset says its batch
    if (preset.toObject().value("preset").toString().startsWith("modern"))
      QCOMPARE(preset.toObject().value("batch_size").toInt(), 32);
  const auto naive = runCli({"info", "--json"});
  const auto n = QJsonDocument::fromJson(naive.out.toUtf8()).object();
  QCOMPARE(qint64(n.value("params_g").toDouble()), qint64(3576704));
  QCOMPARE(qint64(n.value("params_d").toDouble()), qint64(2765568));
}

void TestCli::demoDataLayout() {
  const QString city = data_ + "/train_val/alderbrook";
  for (const char* part : {"database", "query"}) {
    const QString folder = city + "/" + part;
    QVERIFY2(QDir(folder + "/images").exists(), qPrintable(folder));
    QFile seq(folder + "/seq_info.csv");
    QVERIFY(seq.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(seq.readAll()).trimmed().split('\n');
    QCOMPARE(lines.first(), QString(",key,sequence_key,frame_number"));
    const QStringList images = QDir(folder + "/images").entryList({"*.jpg"}, QDir::Files);
    QCOMPARE(lines.size() - 1, images.size());
    // Frames of one sequence are numbered 0..n-1 and each key has its image.
    for (int i = 1; i < lines.size(); ++i) {
      const QStringList cols = lines[i].split(',');
      QCOMPARE(cols.size(), 4);
      QVERIFY(images.contains(cols[1] + ".jpg"));
      QCOMPARE(cols[3].toInt(), (i - 1) % 8);
    }
    for (const char* csv : {"postprocessed.csv", "raw.csv"}) QVERIFY(QFile::exists(folder + "/" + csv));
  }
  // 640x480 JPEGs.
  QDirIterator it(city + "/database/images", {"*.jpg"});
  QVERIFY(it.hasNext());
  QImage first(it.next());
  QCOMPARE(first.size(), QSize(640, 480));
  QDirIterator all(data_, {"*.jpg"}, QDir::Files, QDirIterator::Subdirectories);
  int count = 0;
  for (; all.hasNext(); all.next()) ++count;
  QCOMPARE(count, 32);
}

// SIGTERM while demo-data renders: it stops after the image in hand, says so, and removes what it
// wrote (before, it died of the signal and left a train_val/ that a second run refused).
void TestCli::demoDataStoppedLeavesNothing() {
  QTemporaryDir dir;
  const QString out = dir.filePath("demo");
  QProcess process;
  process.start(STREETGAN_CLI, {"demo-data", "--out", out, "--cities", "2", "--sequences", "10", "--frames", "50",
                                "--progress"});
  QVERIFY(process.waitForStarted());
  QByteArray err;
  while (!err.contains("progress/1") && process.state() == QProcess::Running) {
    process.waitForReadyRead(1000);
    err += process.readAllStandardError();
  }
  QVERIFY2(process.state() == QProcess::Running, err.constData());
  ::kill(static_cast<pid_t>(process.processId()), SIGTERM);
  QVERIFY(process.waitForFinished(120000));
  err += process.readAllStandardError();
  QCOMPARE(process.exitStatus(), QProcess::NormalExit);
  QCOMPARE(process.exitCode(), 1);
  const QString last = QString::fromUtf8(err).trimmed().split('\n').last();
  QVERIFY2(last.startsWith("streetgan demo-data: stopped after ") &&
               last.endsWith(" of 1000 images (the images written so far were removed)"),
           qPrintable(last));
  QVERIFY(!QFileInfo::exists(out));
}

void TestCli::demoDataIsDeterministic() {
  auto digest = [](const QString& root) {
    QStringList files;
    QDirIterator it(root, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) files << it.next();
    files.sort();
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const QString& f : files) {
      QFile file(f);
      file.open(QIODevice::ReadOnly);
      hash.addData(QDir(root).relativeFilePath(f).toUtf8());
      hash.addData(file.readAll());
    }
    return hash.result().toHex();
  };
  QTemporaryDir a, b, c;
  const QStringList args{"--cities", "2", "--sequences", "2", "--frames", "3", "--seed"};
  QCOMPARE(runCli(QStringList{"demo-data", "--out", a.path()} + args + QStringList{"9"}).exit_code, 0);
  QCOMPARE(runCli(QStringList{"demo-data", "--out", b.path()} + args + QStringList{"9"}).exit_code, 0);
  QCOMPARE(runCli(QStringList{"demo-data", "--out", c.path()} + args + QStringList{"10"}).exit_code, 0);
  QCOMPARE(digest(a.path()), digest(b.path()));
  QVERIFY(digest(a.path()) != digest(c.path()));
  // Consecutive frames differ (the camera moves), and are similar (same street).
  QFile seq(a.path() + "/train_val/alderbrook/database/seq_info.csv");
  QVERIFY(seq.open(QIODevice::ReadOnly));
  const QStringList rows = QString::fromUtf8(seq.readAll()).trimmed().split('\n');
  const QString images = a.path() + "/train_val/alderbrook/database/images/";
  const QImage f0(images + rows[1].split(',')[1] + ".jpg"), f1(images + rows[2].split(',')[1] + ".jpg");
  QVERIFY(f0 != f1);
}

void TestCli::sampleFromCheckpoint() {
  QTemporaryDir run;
  const QString run_dir = run.path() + "/r";
  QCOMPARE(runCli(tinyTrainArgs(data_, run_dir, 1)).exit_code, 0);
  const QString checkpoint = run_dir + "/checkpoints/step-0000000004.pt";
  QVERIFY(QFile::exists(checkpoint));
  const QString a = run.path() + "/a.png", b = run.path() + "/b.png", c = run.path() + "/c.png";
  QCOMPARE(runCli({"sample", "--checkpoint", checkpoint, "--out", a, "--n", "16", "--seed", "3"}).exit_code, 0);
  QCOMPARE(runCli({"sample", "--checkpoint", checkpoint, "--out", b, "--n", "16", "--seed", "3"}).exit_code, 0);
  QCOMPARE(runCli({"sample", "--checkpoint", checkpoint, "--out", c, "--n", "16", "--seed", "4"}).exit_code, 0);
  const QImage ia(a), ib(b), ic(c);
  QCOMPARE(ia.size(), QSize(4 * 66 + 2, 4 * 66 + 2));  // 4x4 tiles of 64 px with 2 px borders
  QCOMPARE(ia, ib);
  QVERIFY(ia != ic);
  QFile::remove(testOutputDir() + "/sample_grid.png");
  QFile::copy(a, testOutputDir() + "/sample_grid.png");

  // --seeds: one tile per seed, and a seed's tile is the same wherever it stands.
  const QString s1 = run.path() + "/s1.png", s2 = run.path() + "/s2.png";
  QCOMPARE(runCli({"sample", "--checkpoint", checkpoint, "--out", s1, "--seeds", "3,14,15", "--columns", "3"}).exit_code, 0);
  QCOMPARE(runCli({"sample", "--checkpoint", checkpoint, "--out", s2, "--seeds", "15,3", "--columns", "2"}).exit_code, 0);
  const QImage g1(s1), g2(s2);
  QCOMPARE(g1.size(), QSize(3 * 66 + 2, 66 + 2));
  QCOMPARE(g1.copy(2, 2, 64, 64), g2.copy(68, 2, 64, 64));      // seed 3
  QCOMPARE(g1.copy(134, 2, 64, 64), g2.copy(2, 2, 64, 64));     // seed 15
  const auto bad = runCli({"sample", "--checkpoint", checkpoint, "--out", s1, "--seeds", "3,x"});
  QCOMPARE(bad.exit_code, 2);
  QVERIFY2(bad.err.contains("option '--seeds': \"x\" is not a seed"), qPrintable(bad.err));
}

void TestCli::trainingOutlivesItsStdoutReader() {
  // `--events - | head -n 1`: the reader leaves after the first event; training must go on, and
  // events.jsonl must hold the whole run.
  const QString run = dir_.filePath("pipe-closed");
  QStringList args = tinyTrainArgs(data_, run, 2) + QStringList{"--events", "-"};
  QString command = "set -o pipefail; '" STREETGAN_CLI "'";
  for (const QString& arg : args) command += " '" + arg + "'";
  command += " | head -n 1 > '" + dir_.filePath("first-line.txt") + "'";
  QProcess shell;
  shell.start("bash", {"-c", command});
  QVERIFY(shell.waitForFinished(300000));
  const QString err = QString::fromUtf8(shell.readAllStandardError());
  QVERIFY2(shell.exitCode() == 0, qPrintable(err));  // pipefail: streetgan's own exit status
  QVERIFY2(err.contains("warning: the events reader on stdout went away (Broken pipe)"), qPrintable(err));
  QFile first(dir_.filePath("first-line.txt"));
  QVERIFY(first.open(QIODevice::ReadOnly));
  QVERIFY(first.readAll().contains("\"type\":\"run_started\""));
  const auto events = readEvents(run);
  QVERIFY(!events.isEmpty());
  QCOMPARE(events.last().value("type").toString(), QString("run_finished"));
  QCOMPARE(events.last().value("status").toString(), QString("completed"));
  QCOMPARE(eventsOfType(events, "epoch_end").size(), 2);
}

void TestCli::systemEventsDescribeTheMachine() {
  const QString run = dir_.filePath("system-events");
  const auto trained = runCli(tinyTrainArgs(data_, run, 2));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  const auto events = readEvents(run);
  const auto system = eventsOfType(events, "system");
  QVERIFY(!system.isEmpty());  // at least the one just before run_finished
  QCOMPARE(events[events.size() - 2].value("type").toString(), QString("system"));
  double bytes = 0;
  for (const QJsonObject& e : system) {
    QVERIFY(e.value("cpu_percent").toDouble() >= 0);
    QVERIFY(e.value("cores").toInt() >= 1);
    QVERIFY(e.value("rss_bytes").toDouble() > 10e6);
    const double total = e.value("host_memory_total_bytes").toDouble(), available = e.value("host_memory_available_bytes").toDouble();
    QVERIFY(total > 0 && available > 0 && available <= total);
    QVERIFY(e.value("seconds").toDouble() > 0);
    QVERIFY(!e.contains("gpu"));  // on the CPU: no GPU figures
    bytes += e.value("loader_bytes_per_s").toDouble() * e.value("seconds").toDouble();
  }
  // Over the run the loader read each image file once per epoch.
  qint64 files = 0;
  const auto dataset = streetgan::ImageDataset::open(data_.toStdString());
  QVERIFY(dataset);
  for (std::size_t i = 0; i < dataset->size(); ++i) files += QFileInfo(QString::fromStdString(dataset->path(i))).size();
  QVERIFY2(std::abs(bytes - 2.0 * files) < 1e-6 * files, qPrintable(QString("%1 read, %2 in the files").arg(bytes).arg(files)));
  QVERIFY(system.last().value("step").toInt() == eventsOfType(events, "step").last().value("step").toInt());
}

namespace {

/// The records of a TFRecord file (lengths only; tst_tensorboard checks CRCs and contents), or -1
/// when the framing does not add up to the file's size.
int countRecords(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return -1;
  const QByteArray all = file.readAll();
  int at = 0, records = 0;
  while (at + 12 <= all.size()) {
    quint64 length = 0;
    for (int i = 0; i < 8; ++i) length |= quint64(static_cast<unsigned char>(all[at + i])) << (8 * i);
    at += 12 + static_cast<int>(length) + 4;
    ++records;
  }
  return at == all.size() ? records : -1;
}

QStringList eventFiles(const QString& dir) {
  QStringList files;
  for (const QString& name : QDir(dir).entryList({"events.out.tfevents.*"}, QDir::Files)) files << dir + "/" + name;
  return files;
}

}  // namespace

void TestCli::tensorboardFiles() {
  const QString run = dir_.filePath("tensorboard-run");
  const auto trained = runCli(tinyTrainArgs(data_, run, 2));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  const QStringList written = eventFiles(run + "/tensorboard");
  QCOMPARE(written.size(), 1);
  const auto events = readEvents(run);
  // file_version, START, 8 scalars per step (losses, D outputs, r_t, throughput), one image per
  // grid (Parzen and the quality metrics are off).
  const int expected = 2 + 8 * int(eventsOfType(events, "step").size()) + int(eventsOfType(events, "samples").size());
  QCOMPARE(countRecords(written.first()), expected);
  // Again from events.jsonl: refused where files are, written elsewhere with --out.
  const auto refused = runCli({"tensorboard", run});
  QCOMPARE(refused.exit_code, 2);
  QVERIFY2(refused.err.contains("already holds TensorBoard event files; give --out DIR"), qPrintable(refused.err));
  const QString out = dir_.filePath("tb-out");
  const auto again = runCli({"tensorboard", run, "--out", out});
  QVERIFY2(again.exit_code == 0, qPrintable(again.err));
  const QStringList copies = eventFiles(out + "/tensorboard-run");
  QCOMPARE(copies.size(), 1);
  QCOMPARE(countRecords(copies.first()), expected);
  const auto not_a_run = runCli({"tensorboard", data_});
  QCOMPARE(not_a_run.exit_code, 2);
  QVERIFY2(not_a_run.err.contains("is not a run directory (no events.jsonl)"), qPrintable(not_a_run.err));
  // Off in the config: no folder at all.
  const QString quiet = dir_.filePath("no-tensorboard");
  QStringList args = tinyTrainArgs(data_, quiet, 1);
  const auto c = args.indexOf("-c");
  args[c + 1] = R"({"log_frequency":3,"save_frequency":1,"keep_checkpoints":10})";
  args << "--config" << dir_.filePath("no-tb.json");
  QFile config(dir_.filePath("no-tb.json"));
  QVERIFY(config.open(QIODevice::WriteOnly));
  config.write(R"({"tensorboard": false})");
  config.close();
  const auto off = runCli(args);
  QVERIFY2(off.exit_code == 0, qPrintable(off.err));
  QVERIFY(!QFileInfo::exists(quiet + "/tensorboard"));
}

// events.jsonl may come from another host: a samples event naming a path out of the run, a
// device or a FIFO is skipped with a warning naming the run and the path. None hangs the command
// (the guard: runCli gives up after 120 s, where a FIFO's reader would wait forever) or reads
// /dev/zero until memory runs out; the grid inside the run is still written.
void TestCli::tensorboardReadsSamplesOnlyInsideTheRun() {
  const QString run = dir_.filePath("tensorboard-hostile");
  QVERIFY(QDir().mkpath(run + "/samples"));
  QImage grid(66, 66, QImage::Format_RGB888);
  grid.fill(Qt::darkGray);
  QVERIFY(grid.save(run + "/samples/good.png", "PNG"));
  QVERIFY(grid.save(dir_.filePath("outside.png"), "PNG"));
  QCOMPARE(::mkfifo(QFile::encodeName(run + "/samples/fifo.png").constData(), 0600), 0);
  QFile log(run + "/events.jsonl");
  QVERIFY(log.open(QIODevice::WriteOnly));
  log.write(R"({"v":1,"type":"run_started","time":100,"images_seen":0})" "\n"
            R"({"v":1,"type":"step","time":101,"step":1,"images_seen":8,"loss_d":1.0,"loss_g":2.0,"d_x":0.5,"d_g_z1":0.4,"d_g_z2":0.3,"images_per_s":10,"data_wait_fraction":0.1})" "\n"
            R"({"v":1,"type":"samples","time":102,"step":1,"images_seen":8,"path":"../outside.png"})" "\n"
            R"({"v":1,"type":"samples","time":103,"step":1,"images_seen":8,"path":"samples/../../../outside.png"})" "\n"
            R"({"v":1,"type":"samples","time":104,"step":1,"images_seen":8,"path":"/dev/zero"})" "\n"
            R"({"v":1,"type":"samples","time":105,"step":1,"images_seen":8,"path":"samples/fifo.png"})" "\n"
            R"({"v":1,"type":"samples","time":106,"step":1,"images_seen":8,"path":"samples/good.png"})" "\n");
  log.close();
  const QString out = dir_.filePath("tb-hostile");
  const auto r = runCli({"tensorboard", run, "--out", out}, 120000);
  QVERIFY2(r.exit_code == 0, qPrintable(QString("exit %1 (-1: killed after 120 s): %2").arg(r.exit_code).arg(r.err)));
  const QString skipped = "warning: " + run + ": sample grid skipped: ";
  const QString outside = " is not a path inside the run directory";
  for (const QString& line : {skipped + "'../outside.png'" + outside + " (it climbs out with '..')",
                              skipped + "'samples/../../../outside.png'" + outside + " (it climbs out with '..')",
                              skipped + "'/dev/zero'" + outside + " (it is absolute)",
                              skipped + "'samples/fifo.png' is not a regular file"})
    QVERIFY2(r.err.contains(line + "\n"), qPrintable("missing: " + line + "\nstderr: " + r.err));
  QCOMPARE(int(r.err.count("warning: ")), 4);
  QVERIFY2(r.out.contains("(4 sample grids skipped)"), qPrintable(r.out));
  const QStringList files = eventFiles(out + "/tensorboard-hostile");
  QCOMPARE(files.size(), 1);
  QCOMPARE(countRecords(files.first()), 2 + 7 + 1);  // file_version, START, the step's scalars, the one good grid
}

// One 300 KB grid named 40 times (an events.jsonl from elsewhere may name it a million times, and
// filled the disk), RUN/tensorboard as a link out of the run, and a disk that fills: grids past
// --max-image-mib are skipped with one warning, the link is refused, and a failed write leaves
// no partial event file.
void TestCli::tensorboardBoundsWhatItWrites() {
  const QString run = dir_.filePath("tensorboard-repeated");
  QVERIFY(QDir().mkpath(run + "/samples"));
  QImage noise(320, 320, QImage::Format_RGB888);
  quint32 state = 12345;
  for (int y = 0; y < noise.height(); ++y)
    for (int x = 0; x < noise.width(); ++x) {
      state = state * 1664525u + 1013904223u;
      noise.setPixel(x, y, state >> 8);
    }
  QVERIFY(noise.save(run + "/samples/big.png", "PNG"));
  const qint64 png = QFileInfo(run + "/samples/big.png").size();
  QVERIFY2(png > 250000, qPrintable(QString::number(png)));
  QFile log(run + "/events.jsonl");
  QVERIFY(log.open(QIODevice::WriteOnly));
  log.write(R"({"v":1,"type":"run_started","time":100,"images_seen":0})" "\n");
  for (int i = 0; i < 40; ++i)
    log.write(QByteArray(R"({"v":1,"type":"samples","time":102,"step":1,"images_seen":8,"path":"samples/big.png"})") + "\n");
  log.close();
  const QString out = dir_.filePath("tb-repeated");
  const auto r = runCli({"tensorboard", run, "--out", out, "--max-image-mib", "1"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QCOMPARE(int(r.err.count("warning: ")), 1);
  QVERIFY2(r.err.contains("'samples/big.png' and every grid after it: the grids written reach 1 MiB in all"), qPrintable(r.err));
  const QStringList files = eventFiles(out + "/tensorboard-repeated");
  QCOMPARE(files.size(), 1);
  const int written = int((1 << 20) / png);
  QCOMPARE(countRecords(files.first()), 2 + written);
  // One warning, but every grid past the budget counted as skipped (it said 1).
  QVERIFY2(r.out.contains(QString("(%1 sample grids skipped)").arg(40 - written)), qPrintable(r.out));
  QVERIFY(QFileInfo(files.first()).size() < (1 << 20) + 65536);

  // The default folder as a link out of the run.
  const QString elsewhere = dir_.filePath("tb-elsewhere");
  QVERIFY(QDir().mkpath(elsewhere));
  QVERIFY(QFile::link(elsewhere, run + "/tensorboard"));
  const auto linked = runCli({"tensorboard", run});
  QCOMPARE(linked.exit_code, 2);
  QVERIFY2(linked.err.contains(run + "/tensorboard is a symbolic link; give --out DIR"), qPrintable(linked.err));
  QVERIFY(QDir(elsewhere).isEmpty());

  // A full disk: a 256 KiB tmpfs (needs root, as in CI).
  const QString small = dir_.filePath("tb-small");
  QVERIFY(QDir().mkpath(small));
  if (QProcess::execute("mount", {"-t", "tmpfs", "-o", "size=256k", "tmpfs", small}) != 0)
    QSKIP("cannot mount a small tmpfs here (not root); the full-disk case is not exercised");
  struct Unmount {
    QString path;
    ~Unmount() { QProcess::execute("umount", {path}); }
  } unmount{small};
  const auto full = runCli({"tensorboard", run, "--out", small});
  QCOMPARE(full.exit_code, 1);
  QVERIFY2(full.err.contains("No space left on device") && full.err.count('\n') == 1, qPrintable(full.err));
  QCOMPARE(eventFiles(small + "/tensorboard-repeated"), QStringList{});
  QVERIFY2(!QFileInfo::exists(small + "/tensorboard-repeated"), "the folder made for the failed file was left");
}

// Without a GPU (this suite's default device is the CPU): --device cuda says why in one line (a
// LibTorch built without CUDA, or one with CUDA that sees no device), --nproc with --device cuda
// is refused before any rank starts, and --device auto says what it chose and why.
void TestCli::cudaAbsenceIsExplained() {
  if (QString::fromStdString(testDeviceName()).startsWith("cuda")) QSKIP("a CUDA device is in use: nothing is absent");
  const QRegularExpression reason(R"((this LibTorch was built without CUDA|no CUDA device is visible \(this LibTorch has CUDA: )"
                                  R"(check the NVIDIA driver, nvidia-smi and CUDA_VISIBLE_DEVICES\)))");
  QTemporaryDir dir;
  const auto single = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/a", "--device", "cuda"});
  QCOMPARE(single.exit_code, 2);
  QVERIFY2(single.err.startsWith("streetgan train: device \"cuda\" is not available: "), qPrintable(single.err));
  QVERIFY2(reason.match(single.err).hasMatch() && single.err.trimmed().endsWith("(available: cpu)"), qPrintable(single.err));
  QCOMPARE(single.err.trimmed().count('\n'), 0);

  const auto ranks = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/b", "--device", "cuda", "--nproc", "2"});
  QCOMPARE(ranks.exit_code, 2);
  QVERIFY2(ranks.err.startsWith("streetgan train: --nproc 2 --device cuda needs a CUDA device for each rank: "), qPrintable(ranks.err));
  QVERIFY2(reason.match(ranks.err).hasMatch(), qPrintable(ranks.err));
  QCOMPARE(ranks.err.trimmed().count('\n'), 0);
  QVERIFY(!QFileInfo::exists(dir.path() + "/b"));

  const auto one_gpu = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/c", "--device", "cuda:1", "--nproc", "2"});
  QCOMPARE(one_gpu.exit_code, 2);
  QCOMPARE(one_gpu.err.trimmed(), QString("streetgan train: --device cuda:1 would put every rank on one GPU; with --nproc use "
                                          "--device cuda (rank i trains on cuda:i)"));

  // Refused once by the launcher, not by each rank: a precision the device cannot run, and one
  // rank on cuda:0 where there is none.
  const auto fp16 = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/e", "--device", "cpu", "--precision", "fp16",
                            "--nproc", "2"});
  QCOMPARE(fp16.exit_code, 2);
  QCOMPARE(fp16.err.trimmed(), QString("streetgan train: precision \"fp16\" needs a CUDA device; on the CPU use fp32 or bf16"));
  QVERIFY(!QFileInfo::exists(dir.path() + "/e"));
  const auto one_rank = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/f", "--device", "cuda:0", "--nproc", "1"});
  QCOMPARE(one_rank.exit_code, 2);
  QVERIFY2(one_rank.err.startsWith("streetgan train: device \"cuda:0\" is not available: ") &&
               one_rank.err.trimmed().count('\n') == 0, qPrintable(one_rank.err));

  QStringList args = tinyTrainArgs(data_, dir.path() + "/d", 1);
  args[args.indexOf("--device") + 1] = "auto";
  const auto automatic = runCli(args);
  QCOMPARE(automatic.exit_code, 0);
  const QStringList lines = automatic.err.split('\n');
  QVERIFY2(lines.first().startsWith("device: cpu, fp32 (auto: "), qPrintable(automatic.err));
  QVERIFY2(reason.match(lines.first()).hasMatch(), qPrintable(lines.first()));
}

// cuda_graphs off a GPU: one line naming the key, exit 2, nothing written; --nproc refuses it
// before any rank starts; a resumed run can turn it off (and on, which is then refused here).
void TestCli::cudaGraphsRefusedPlainly() {
  if (QString::fromStdString(testDeviceName()).startsWith("cuda")) QSKIP("a CUDA device is in use: graphs are allowed");
  QTemporaryDir dir;
  const QString key = "config key \"cuda_graphs\": true ";
  const auto cpu = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/a", "--device", "cpu", "--cuda-graphs", "on"});
  QCOMPARE(cpu.exit_code, 2);
  QCOMPARE(cpu.err.trimmed(), "streetgan train: " + key + "needs a CUDA device, and this run trains on cpu, fp32; set it to false");
  QVERIFY(!QFileInfo::exists(dir.path() + "/a"));

  QFile file(dir.path() + "/graphs.json");
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(R"({"cuda_graphs": true, "device": "auto"})");
  file.close();
  const auto automatic = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/b", "--config", file.fileName()});
  QCOMPARE(automatic.exit_code, 2);
  QVERIFY2(automatic.err.startsWith("streetgan train: " + key + "needs a CUDA device, and this run trains on cpu, fp32 (auto: ") &&
               automatic.err.trimmed().endsWith("); set it to false") && automatic.err.trimmed().count('\n') == 0,
           qPrintable(automatic.err));
  QVERIFY(!QFileInfo::exists(dir.path() + "/b"));

  const auto ranks = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/c", "--nproc", "2", "--cuda-graphs", "on"});
  QCOMPARE(ranks.exit_code, 2);
  QCOMPARE(ranks.err.trimmed(), "streetgan train: " + key +
                                    "trains one process, and this job has 2 ranks (a graph does not hold the ranks' "
                                    "all-reduce); set it to false");
  QVERIFY(!QFileInfo::exists(dir.path() + "/c"));

  // One rank through the launcher: the device it would train on is named, as without --nproc.
  const auto one_rank = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/c1", "--nproc", "1", "--device", "cpu",
                                "--cuda-graphs", "on"});
  QCOMPARE(one_rank.exit_code, 2);
  QCOMPARE(one_rank.err.trimmed(), "streetgan train: " + key + "needs a CUDA device, and this run trains on cpu, fp32; set it to false");
  QVERIFY(!QFileInfo::exists(dir.path() + "/c1"));

  const auto spelling = runCli({"train", "--dataroot", data_, "--run-dir", dir.path() + "/d", "--cuda-graphs", "yes"});
  QCOMPARE(spelling.exit_code, 2);
  QCOMPARE(spelling.err.trimmed(), QString("streetgan train: option '--cuda-graphs': 'yes' is not allowed; allowed: on or off"));

  const auto bench = runCli({"bench", "train", "--device", "cpu", "--cuda-graphs", "on", "--steps", "1"});
  QCOMPARE(bench.exit_code, 2);
  QCOMPARE(bench.err.trimmed(), QString("streetgan bench train: option '--cuda-graphs on' needs a CUDA device, and this run "
                                        "trains on cpu"));

  const QString run = dir.path() + "/e";
  QCOMPARE(runCli(tinyTrainArgs(data_, run, 1)).exit_code, 0);
  const auto on = runCli({"train", "--resume", "--run-dir", run, "--epochs", "2", "--cuda-graphs", "on"});
  QCOMPARE(on.exit_code, 2);
  QVERIFY2(on.err.trimmed().endsWith("this run trains on cpu, fp32; set it to false"), qPrintable(on.err));
  const auto on_ranks = runCli({"train", "--resume", "--run-dir", run, "--epochs", "2", "--cuda-graphs", "on", "--nproc", "2"});
  QCOMPARE(on_ranks.exit_code, 2);
  QVERIFY2(on_ranks.err.trimmed().endsWith("this job has 2 ranks (a graph does not hold the ranks' all-reduce); set it to false") &&
               on_ranks.err.trimmed().count('\n') == 0,
           qPrintable(on_ranks.err));
  const auto off = runCli({"train", "--resume", "--run-dir", run, "--epochs", "2", "--cuda-graphs", "off"});
  QCOMPARE(off.exit_code, 0);
  QVERIFY2(!off.err.contains("CUDA graph"), qPrintable(off.err));
}

// streetgan itself links no LibTorch (app/cli/CMakeLists.txt): its engine does.
void TestCli::frontLoadsNoLibTorch() {
  const auto libraries = [](const QString& program) {
    QProcess ldd;
    ldd.start("ldd", {program});
    return ldd.waitForFinished(60000) && ldd.exitCode() == 0 ? QString::fromLocal8Bit(ldd.readAllStandardOutput())
                                                              : QString();
  };
  const QString front = libraries(STREETGAN_CLI), engine = libraries(STREETGAN_CLI_ENGINE);
  QVERIFY2(engine.contains("libtorch"), qPrintable(engine));
  QVERIFY2(!front.isEmpty() && !front.contains("libtorch") && !front.contains("libQt"), qPrintable(front));
}

// streetgan runs --version and the remote commands alone; every other command in its engine,
// found beside it or, installed, under ../libexec/streetgan, and run only when it and its folder
// are root's or ours and no one else may change them; without either, one line says so.
void TestCli::frontFindsItsEngine() {
  QTemporaryDir prefix;
  QVERIFY(prefix.isValid());
  QVERIFY(QDir().mkpath(prefix.filePath("bin")));
  const QString front = prefix.filePath("bin/streetgan");
  QVERIFY(QFile::copy(STREETGAN_CLI, front));

  QCOMPARE(runProgram(front, {"--version"}).out, runCli({"--version"}).out);
  const QStringList status{"remote", "status", prefix.filePath("no-run")};
  const CliResult alone = runProgram(front, status), whole = runCli(status);
  QCOMPARE(alone.exit_code, whole.exit_code);
  QCOMPARE(alone.err, whole.err);
  QCOMPARE(alone.out, whole.out);

  const CliResult missing = runProgram(front, {"info", "--json"});
  QCOMPARE(missing.exit_code, 1);
  const QString bin = prefix.filePath("bin/");
  QCOMPARE(missing.err, "streetgan: its engine is missing: neither " + bin + "streetgan-engine nor " + bin +
                            "../libexec/streetgan/streetgan-engine exists; reinstall streetgan\n");
  // What needs no engine: a command's --help, a bad option and a --checkpoint that names nothing
  // are answered by streetgan alone (the shell completion asks for --help at each TAB), exactly
  // as the engine answers them.
  const QString no_run = prefix.filePath("no-run") + "@latest";
  for (const QStringList& args :
       {QStringList{"sample", "--help"}, QStringList{"bench", "train", "--help"}, QStringList{"train", "--speed", "9"},
        QStringList{"cache", "info", "--out"}, QStringList{"walk", "--checkpoint", no_run, "--out", "w.gif"}}) {
    const CliResult answered = runProgram(front, args), engine = runProgram(STREETGAN_CLI_ENGINE, args);
    QVERIFY2(answered.exit_code == engine.exit_code && answered.exit_code != 1, qPrintable(args.join(' ') + ": " + answered.err));
    QCOMPARE(answered.out, engine.out);
    QCOMPARE(answered.err, engine.err);
  }

  QVERIFY(QDir().mkpath(prefix.filePath("libexec/streetgan")));
  const QString engine = prefix.filePath("libexec/streetgan/streetgan-engine");
  QVERIFY(QFile::link(STREETGAN_CLI_ENGINE, engine));
  // A folder anyone may write to (a copy in /tmp): the engine there is anyone's, and not run.
  QCOMPARE(::chmod(qPrintable(prefix.filePath("libexec/streetgan")), 0777), 0);
  const CliResult shared = runProgram(front, {"info", "--json"});
  QCOMPARE(shared.exit_code, 1);
  QCOMPARE(shared.err, "streetgan: refuses to start its engine " + bin + "../libexec/streetgan/streetgan-engine" +
                           ": its folder belongs to another user or others may change it\n");
  QCOMPARE(::chmod(qPrintable(prefix.filePath("libexec/streetgan")), 0755), 0);
  const CliResult installed = runProgram(front, {"info", "--json"});
  QCOMPARE(installed.exit_code, 0);
  QCOMPARE(installed.out, runCli({"info", "--json"}).out);
}

STREETGAN_TEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
