// `streetgan metrics` through the real program: a checkpoint scored and saved into its run, a
// run's every checkpoint, a folder of images as the samples, a TorchScript feature network made
// with python3-torch, and the errors a researcher can run into (a features file that is missing,
// not TorchScript, of the wrong output shape or NaN; too few images; no usable image), each one
// plain line with nothing written.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::test;

namespace {

// A TorchScript network from python3-torch: `body` is the forward's return expression of x.
bool writeNetwork(const QString& path, const QString& body) {
  const QString code = QString(
                           "import sys, torch\n"
                           "class Net(torch.nn.Module):\n"
                           "    def __init__(self):\n"
                           "        super().__init__()\n"
                           "        torch.manual_seed(0)\n"
                           "        self.conv = torch.nn.Conv2d(3, 8, 4, 4)\n"
                           "    def forward(self, x):\n"
                           "        y = torch.nn.functional.adaptive_avg_pool2d(torch.relu(self.conv(x)), 2)\n"
                           "        return %1\n"
                           "torch.jit.script(Net()).save(sys.argv[1])\n")
                           .arg(body);
  // torch.jit.script reads the class's source, so the script is a file.
  const QString script = path + ".py";
  QFile file(script);
  if (!file.open(QIODevice::WriteOnly) || file.write(code.toUtf8()) < 0) return false;
  file.close();
  QProcess python;
  python.start("/usr/bin/python3", {script, path});
  return python.waitForFinished(120000) && python.exitCode() == 0;
}

// `count` 64x64 images of smooth random colour fields into `folder`.
void writeMetricsImages(const QString& folder, int count, int seed) {
  QDir().mkpath(folder);
  std::srand(static_cast<unsigned>(seed));
  for (int i = 0; i < count; ++i) {
    QImage image(64, 64, QImage::Format_RGB888);
    const int r = std::rand() % 256, g = std::rand() % 256, b = std::rand() % 256;
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) image.setPixel(x, y, qRgb((r + 2 * x) % 256, (g + 3 * y) % 256, (b + x * y / 8) % 256));
    image.save(folder + QString("/%1.png").arg(i, 3, 10, QChar('0')));
  }
}

}  // namespace

class TestMetricsCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void checkpointSavedIntoItsRun();
  void everyCheckpointOfARun();
  void folderOfSamplesWithANetwork();
  void errors_data();
  void errors();
  void folderErrors();
  void trainingImagesFromACache();
  void trainingEmitsMetricsAndAlarms();
  void nearestTrainingImages();
  void copiesOfOnePhotographAreSaid();
  void nearestErrors_data();
  void nearestErrors();

private:
  QTemporaryDir dir_;
  QString data_, run_, checkpoint_, samples_;
};

void TestMetricsCli::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = makeTinyDataset(dir_.path());
  run_ = dir_.path() + "/run";
  const auto trained = runCli(tinyTrainArgs(data_, run_, 2));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  QDirIterator it(run_ + "/checkpoints", {"*.pt"});
  QStringList checkpoints;
  while (it.hasNext()) checkpoints << it.next();
  checkpoints.sort();
  QVERIFY(!checkpoints.isEmpty());
  checkpoint_ = checkpoints.last();
  samples_ = dir_.path() + "/samples";
  writeMetricsImages(samples_, 40, 1);
}

void TestMetricsCli::checkpointSavedIntoItsRun() {
  const auto r = runCli({"metrics", "--checkpoint", checkpoint_, "--dataroot", data_, "--n", "48", "--n-train", "32",
                         "--bins", "4", "--batch", "16", "--save", "--json", "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(out.value("n_samples").toInt(), 48);
  QCOMPARE(out.value("n_train").toInt(), 32);
  QCOMPARE(out.value("image_size").toInt(), 64);
  QCOMPARE(out.value("feature_space").toString(), QString("pixels32-pca31"));
  const QJsonObject metrics = out.value("metrics").toObject();
  for (const char* name : {"swd_e3", "swd_e3_16", "swd_e3_64", "msssim_samples", "msssim_train", "ndb", "jsd", "fid",
                           "kid", "precision", "recall", "density", "coverage", "copy_rate", "nn_ratio_median"})
    QVERIFY2(metrics.value(name).isDouble(), name);
  QCOMPARE(out.value("checkpoint").toString(), QFileInfo(checkpoint_).fileName());
  const QString saved = run_ + "/evaluations/metrics-" + QFileInfo(checkpoint_).completeBaseName() + ".json";
  QVERIFY2(QFile::exists(saved), qPrintable(saved));
  const QJsonObject file = QJsonDocument::fromJson(readFileBytes(saved)).object();
  QCOMPARE(file.value("v").toInt(), 1);
  QCOMPARE(file.value("metrics").toObject().value("fid").toDouble(), metrics.value("fid").toDouble());
  // The same figures for the same seed (the samples, the draws and the projections are seeded).
  const auto again = runCli({"metrics", "--checkpoint", checkpoint_, "--dataroot", data_, "--n", "48", "--n-train",
                             "32", "--bins", "4", "--batch", "7", "--json", "--only", "fid,swd", "--threads",
                             testThreadsText()});
  QVERIFY2(again.exit_code == 0, qPrintable(again.err));
  const QJsonObject second = QJsonDocument::fromJson(again.out.toUtf8()).object().value("metrics").toObject();
  QCOMPARE(second.keys().contains("kid"), false);
  QVERIFY(qAbs(second.value("fid").toDouble() - metrics.value("fid").toDouble()) <= 1e-9 * metrics.value("fid").toDouble());
  // The same samples up to the convolutions' rounding at another batch size (LibTorch 2.x).
  QVERIFY(qAbs(second.value("swd_e3").toDouble() - metrics.value("swd_e3").toDouble()) <=
          1e-6 * metrics.value("swd_e3").toDouble());
  // A person reads a table, with the MS-SSIM remark.
  const auto text = runCli({"metrics", "--checkpoint", checkpoint_, "--dataroot", data_, "--n", "48", "--n-train", "32",
                            "--bins", "4", "--threads", testThreadsText()});
  QVERIFY2(text.exit_code == 0, qPrintable(text.err));
  QVERIFY2(text.out.contains("fid") && text.out.contains("note: MS-SSIM on 3 scales at 64 px"), qPrintable(text.out));
}

void TestMetricsCli::everyCheckpointOfARun() {
  const auto r = runCli({"metrics", "--run", run_, "--every-checkpoint", "--dataroot", data_, "--n", "40", "--n-train",
                         "32", "--only", "fid,kid,memorisation", "--json", "--progress", "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonArray all = QJsonDocument::fromJson(r.out.toUtf8()).array();
  QCOMPARE(all.size(), QDir(run_ + "/checkpoints").entryList({"*.pt"}).size());
  QVERIFY(all.size() >= 2);
  QVERIFY(all.first().toObject().value("step").toInt() < all.last().toObject().value("step").toInt());
  QVERIFY2(r.err.contains("progress/1 {") && r.err.contains("\"task\":\"metrics\""), qPrintable(r.err));
}

void TestMetricsCli::folderOfSamplesWithANetwork() {
  const QString network = dir_.path() + "/features.pt";
  QVERIFY(writeNetwork(network, "y.flatten(1)"));
  const auto r = runCli({"metrics", "--samples", samples_, "--dataroot", data_, "--n-train", "32", "--only",
                         "fid,kid,prdc", "--features", network, "--features-size", "32", "--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(out.value("n_samples").toInt(), 40);
  QVERIFY2(out.value("feature_space").toString().startsWith("torchscript:"), qPrintable(out.value("feature_space").toString()));
  QVERIFY(out.value("feature_space").toString().endsWith("@32px"));
  QCOMPARE(out.value("features_sha256").toString().size(), 64);
  QCOMPARE(out.value("features_input_size").toInt(), 32);
  QVERIFY(out.value("metrics").toObject().value("fid").isDouble());
}

// 40 copies of one training photograph: the verdicts training raises (collapse, memorisation) are
// in the result, in the text and in the JSON's "alarms".
void TestMetricsCli::copiesOfOnePhotographAreSaid() {
  QDirIterator photos(data_, {"*.jpg"}, QDir::Files, QDirIterator::Subdirectories);
  QVERIFY(photos.hasNext());
  const QString photo = photos.next(), copies = dir_.path() + "/copies";
  QVERIFY(QDir().mkpath(copies));
  for (int i = 0; i < 40; ++i) QVERIFY(QFile::copy(photo, copies + QString("/%1.jpg").arg(i)));
  const QStringList args{"metrics", "--samples", copies, "--dataroot", data_, "--n-train", "32", "--only", "msssim,memorisation"};
  auto r = runCli(args + QStringList{"--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonArray alarms = QJsonDocument::fromJson(r.out.toUtf8()).object().value("alarms").toArray();
  QStringList kinds;
  for (const auto& alarm : alarms) kinds << alarm.toObject().value("kind").toString();
  QVERIFY2(kinds.contains("collapse") && kinds.contains("memorisation"), qPrintable(kinds.join(",")));
  r = runCli(args);
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.out.contains("alarm (collapse): mode collapse: the samples are more alike than the training images (MS-SSIM "
                          "1.000 between samples"),
           qPrintable(r.out));
  QVERIFY2(r.out.contains("alarm (memorisation): memorisation: 100.0% of the samples"), qPrintable(r.out));
  // Other street scenes (the demo renderer's, another seed) raise nothing.
  const QString others = dir_.path() + "/other-scenes";
  r = runCli({"demo-data", "--out", others, "--cities", "2", "--sequences", "5", "--frames", "4", "--seed", "9"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  r = runCli({"metrics", "--samples", others, "--dataroot", data_, "--n-train", "32", "--only", "msssim,memorisation",
              "--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object().value("alarms").toArray().size(), 0);
}

void TestMetricsCli::errors_data() {
  QTest::addColumn<QString>("network_body");  // a features network to write first, or empty
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("exit_code");
  QTest::addColumn<QString>("message");
  const QString missing = dir_.path() + "/nothing.pt";
  QTest::newRow("missing features file") << QString() << QStringList{"--features", missing} << 1
                                         << QString(missing + ": no such features file");
  QTest::newRow("features that are not TorchScript") << QString("GARBAGE") << QStringList{} << 1
                                                     << QString("not a TorchScript network that LibTorch can load");
  QTest::newRow("features of the wrong shape") << QString("y.flatten(1).sum(1)") << QStringList{} << 1
                                               << QString("it must return (batch, features)");
  QTest::newRow("NaN features") << QString("y.flatten(1) * float('nan')") << QStringList{} << 1
                                << QString("the network returns NaN or Inf features");
  QTest::newRow("more bins than training images") << QString() << QStringList{"--bins", "100"} << 1
                                                  << QString("NDB/JSD needs at least 100 training images for 100 bins, got 32");
  QTest::newRow("unknown metric") << QString() << QStringList{"--only", "fid,is"} << 2
                                  << QString("option '--only': \"is\" is not a metric");
}

void TestMetricsCli::errors() {
  QFETCH(QString, network_body);
  QFETCH(QStringList, args);
  QFETCH(int, exit_code);
  QFETCH(QString, message);
  const QString network = dir_.path() + "/bad-" + QString::number(qHash(network_body)) + ".pt";
  QStringList full = {"metrics", "--checkpoint", checkpoint_, "--dataroot", data_, "--n", "24", "--n-train", "32", "--save"};
  if (!args.contains("--bins")) full << "--bins" << "4";
  if (!args.contains("--only")) full << "--only" << "fid,ndb";
  if (network_body == "GARBAGE") {
    QFile file(network);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a zip archive\n");
    file.close();
    full << "--features" << network << "--features-size" << "32";
  } else if (!network_body.isEmpty()) {
    QVERIFY(writeNetwork(network, network_body));
    full << "--features" << network << "--features-size" << "32";
  }
  full << args;
  QDir(run_ + "/evaluations").removeRecursively();
  const auto r = runCli(full);
  QCOMPARE(r.exit_code, exit_code);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QCOMPARE(r.err.trimmed().count('\n'), 0);
  QVERIFY2(!QDir(run_ + "/evaluations").exists() || QDir(run_ + "/evaluations").isEmpty(), "a result was written");
}

void TestMetricsCli::folderErrors() {
  const QString empty = dir_.path() + "/no-images";
  QDir().mkpath(empty);
  QFile note(empty + "/README.txt");
  QVERIFY(note.open(QIODevice::WriteOnly));
  note.write("not an image\n");
  note.close();
  const auto none = runCli({"metrics", "--samples", empty, "--dataroot", data_});
  QCOMPARE(none.exit_code, 1);
  QVERIFY2(none.err.startsWith("streetgan metrics: --samples: "), qPrintable(none.err));
  QCOMPARE(none.err.trimmed().count('\n'), 0);
  const auto no_data = runCli({"metrics", "--samples", samples_});
  QCOMPARE(no_data.exit_code, 2);
  QVERIFY2(no_data.err.contains("--samples needs --dataroot DIR or --cache FILE"), qPrintable(no_data.err));
  const auto two = runCli({"metrics", "--samples", samples_, "--checkpoint", checkpoint_, "--dataroot", data_});
  QCOMPARE(two.exit_code, 2);
  QVERIFY2(two.err.contains("give one of --checkpoint FILE, --run DIR or --samples DIR"), qPrintable(two.err));
}

void TestMetricsCli::trainingImagesFromACache() {
  // A cache of full decodes holds the pixels --dataroot decodes: the same training images, so the
  // figures that do not depend on their order agree.
  const QString cache = dir_.path() + "/full.sgcache";
  const auto built = runCli({"cache", "build", "--dataroot", data_, "--out", cache, "--full-decode", "--progress"});
  QVERIFY2(built.exit_code == 0, qPrintable(built.err));
  const QStringList common = {"metrics", "--checkpoint", checkpoint_, "--n", "48", "--n-train", "32", "--only",
                              "fid,memorisation", "--json", "--threads", testThreadsText()};
  const auto from_folder = runCli(common + QStringList{"--dataroot", data_});
  QVERIFY2(from_folder.exit_code == 0, qPrintable(from_folder.err));
  const auto from_cache = runCli(common + QStringList{"--cache", cache});
  QVERIFY2(from_cache.exit_code == 0, qPrintable(from_cache.err));
  const QJsonObject a = QJsonDocument::fromJson(from_folder.out.toUtf8()).object().value("metrics").toObject();
  const QJsonObject b = QJsonDocument::fromJson(from_cache.out.toUtf8()).object().value("metrics").toObject();
  QCOMPARE(QJsonDocument::fromJson(from_cache.out.toUtf8()).object().value("n_train").toInt(), 32);
  QVERIFY(qAbs(a.value("fid").toDouble() - b.value("fid").toDouble()) <= 1e-6 * a.value("fid").toDouble());
  QCOMPARE(b.value("copy_rate").toDouble(), a.value("copy_rate").toDouble());
  QVERIFY(qAbs(a.value("nn_ratio_median").toDouble() - b.value("nn_ratio_median").toDouble()) <=
          1e-6 * a.value("nn_ratio_median").toDouble());
  // A training cache (DCT-reduced decodes) serves too.
  const QString reduced = dir_.path() + "/reduced.sgcache";
  QVERIFY(runCli({"cache", "build", "--dataroot", data_, "--out", reduced, "--progress"}).exit_code == 0);
  const auto from_reduced = runCli(common + QStringList{"--cache", reduced});
  QVERIFY2(from_reduced.exit_code == 0, qPrintable(from_reduced.err));
  QVERIFY(QJsonDocument::fromJson(from_reduced.out.toUtf8()).object().value("metrics").toObject().value("fid").isDouble());
  // ...but not a folder of samples, compared at the image size (crop_scale 1): its pixels are
  // decoded at 1/4 size, and scaled up they would be other images.
  const auto too_small = runCli({"metrics", "--samples", samples_, "--cache", reduced, "--n-train", "32", "--only",
                                 "memorisation", "--json"});
  QCOMPARE(too_small.exit_code, 1);
  QVERIFY2(too_small.err.contains("reduced.sgcache: the cache holds images decoded at 1/4 size; 64 px with crop_scale 1 "
                                  "needs at most 1/1 (rebuild it with streetgan cache build --full-decode"),
           qPrintable(too_small.err));
  const auto full_serves = runCli({"metrics", "--samples", samples_, "--cache", cache, "--n-train", "32", "--only",
                                   "memorisation", "--json"});
  QVERIFY2(full_serves.exit_code == 0, qPrintable(full_serves.err));
  // A damaged record is left out, and the result says so (not only stderr).
  const QString damaged = dir_.path() + "/damaged.sgcache";
  QVERIFY(QFile::copy(cache, damaged));
  QFile flip(damaged);
  QVERIFY(flip.open(QIODevice::ReadWrite));
  QVERIFY(flip.seek(1000));
  const char byte = flip.read(1).at(0);
  QVERIFY(flip.seek(1000));
  flip.write(QByteArray(1, static_cast<char>(byte ^ 0x5a)));
  flip.close();
  const auto from_damaged = runCli(common + QStringList{"--cache", damaged});
  QVERIFY2(from_damaged.exit_code == 0, qPrintable(from_damaged.err));
  const QJsonObject left_out = QJsonDocument::fromJson(from_damaged.out.toUtf8()).object();
  QCOMPARE(left_out.value("n_train").toInt(), 31);
  const QString notes = QJsonDocument(left_out.value("notes").toArray()).toJson();
  QVERIFY2(notes.contains("1 of the training images drawn could not be read and were left out (the first: ") &&
               notes.contains("fails its checksum"),
           qPrintable(notes));
  QVERIFY2(from_damaged.err.contains("warning: skipped"), qPrintable(from_damaged.err));
  // Plain errors: a missing cache, a file that is not one, and both sources at once.
  const auto missing = runCli(common + QStringList{"--cache", dir_.path() + "/none.sgcache"});
  QCOMPARE(missing.exit_code, 1);
  QVERIFY2(missing.err.startsWith("streetgan metrics: --cache: ") && missing.err.contains("none.sgcache"),
           qPrintable(missing.err));
  QCOMPARE(missing.err.trimmed().count('\n'), 0);
  const QString junk = dir_.path() + "/junk.sgcache";
  QFile file(junk);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(QByteArray(200, 'x'));
  file.close();
  const auto not_a_cache = runCli(common + QStringList{"--cache", junk});
  QCOMPARE(not_a_cache.exit_code, 1);
  QVERIFY2(not_a_cache.err.contains("junk.sgcache"), qPrintable(not_a_cache.err));
  const auto both = runCli(common + QStringList{"--cache", cache, "--dataroot", data_});
  QCOMPARE(both.exit_code, 2);
  QVERIFY2(both.err.contains("give --dataroot DIR or --cache FILE, not both"), qPrintable(both.err));
}

void TestMetricsCli::trainingEmitsMetricsAndAlarms() {
  const QString config = dir_.path() + "/metrics.json";
  QFile file(config);
  QVERIFY(file.open(QIODevice::WriteOnly));
  // Every epoch, small sets; r_t's alarm level as low as it goes, so D's first steps raise it.
  file.write("{\"metrics\": {\"every_epochs\": 1, \"n_samples\": 40, \"n_train\": 32, "
             "\"only\": [\"swd\", \"msssim\", \"fid\", \"prdc\", \"memorisation\"], "
             "\"alarm_rt\": -0.999, \"alarm_rt_steps\": 2}}");
  file.close();
  const QString run = dir_.path() + "/run-metrics";
  QStringList args = tinyTrainArgs(data_, run, 2);
  args << "--config" << config;
  const auto trained = runCli(args);
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  // Every due point (one per epoch) is evaluated, or skipped while an evaluation still runs and
  // counted in the next event; the final generator is always scored, before run_finished.
  const auto dueSeen = [&] {
    int due = 0;
    for (const auto& event : eventsOfType(readEvents(run), "metrics")) due += 1 + event.value("skipped_due_points").toInt();
    return due;
  };
  const auto lastStep = [&] { return eventsOfType(readEvents(run), "step").last().value("step").toInt(); };
  auto metrics = eventsOfType(readEvents(run), "metrics");
  QVERIFY(!metrics.isEmpty());
  QVERIFY2(dueSeen() >= 2, qPrintable(QString::number(dueSeen())));
  QCOMPARE(metrics.last().value("step").toInt(), lastStep());
  const QJsonObject figures = metrics.last().value("metrics").toObject();
  for (const char* name : {"swd_e3", "msssim_samples", "msssim_train", "fid", "precision", "coverage", "copy_rate"})
    QVERIFY2(figures.value(name).isDouble(), name);
  QCOMPARE(figures.contains("kid"), false);
  QCOMPARE(metrics.last().value("n_samples").toInt(), 40);
  QCOMPARE(metrics.last().value("feature_space").toString(), QString("pixels32-pca31"));
  const auto events = readEvents(run);
  QVERIFY(events.last().value("type").toString() == "run_finished");
  QStringList alarms;
  for (const auto& warning : eventsOfType(events, "warning"))
    if (warning.contains("alarm")) alarms << warning.value("alarm").toString() + ": " + warning.value("message").toString();
  QVERIFY2(alarms.filter("overfitting: D is overfitting: r_t").size() == 1, qPrintable(alarms.join("\n")));
  // step events carry r_t
  const auto steps = eventsOfType(events, "step");
  QVERIFY(!steps.isEmpty() && steps.first().value("rt").isDouble());
  QVERIFY(qAbs(steps.first().value("rt").toDouble()) <= 1.0);

  // Resumed, the history stays and grows.
  // The stored config keeps the metrics keys; a resumed run takes no config options.
  const QStringList resume = {"train", "--dataroot", data_, "--run-dir", run, "--epochs", "3", "--resume",
                              "--threads", testThreadsText()};
  const auto resumed = runCli(resume);
  QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
  QVERIFY2(dueSeen() >= 3, qPrintable(QString::number(dueSeen())));
  QCOMPARE(eventsOfType(readEvents(run), "metrics").last().value("step").toInt(), lastStep());

  // A key out of range is a plain error before training.
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write("{\"metrics\": {\"alarm_copy_rate\": 0}}");
  file.close();
  QStringList bad = tinyTrainArgs(data_, dir_.path() + "/run-bad", 1);
  bad << "--config" << config;
  const auto refused = runCli(bad);
  QCOMPARE(refused.exit_code, 2);
  QVERIFY2(refused.err.contains("metrics.alarm_copy_rate") && refused.err.contains("(0, 1]"), qPrintable(refused.err));
}

// streetgan nearest: each sample's nearest training images, the same for a seed however it is asked.
void TestMetricsCli::nearestTrainingImages() {
  const auto r = runCli({"nearest", "--checkpoint", checkpoint_, "--n", "4", "--neighbours", "2", "--json", "--threads",
                         testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(out.value("compare_size").toInt(), 32);
  QVERIFY(out.value("train_total").toInt() > 2);
  QCOMPARE(out.value("train_searched").toInt(), out.value("train_total").toInt());
  QCOMPARE(out.value("train_skipped").toInt(), 0);
  const QJsonArray samples = out.value("samples").toArray();
  QCOMPARE(samples.size(), 4);
  const QString data = QFileInfo(data_).canonicalFilePath();
  for (int i = 0; i < samples.size(); ++i) {
    const QJsonObject sample = samples[i].toObject();
    QCOMPARE(sample.value("seed").toInt(), i);
    const QJsonArray nearest = sample.value("nearest").toArray();
    QCOMPARE(nearest.size(), 2);
    for (int j = 0; j < nearest.size(); ++j) {
      const QJsonObject image = nearest[j].toObject();
      QVERIFY2(QFileInfo(image.value("path").toString()).canonicalFilePath().startsWith(data + "/"),
               qPrintable(image.value("path").toString()));
      QVERIFY(image.value("distance").toDouble() > 0);
      if (j > 0) QVERIFY(image.value("distance").toDouble() >= nearest[j - 1].toObject().value("distance").toDouble());
    }
  }
  // Seed 1 again, asked by --seeds and printed as text: the same neighbours at the same distances.
  const auto again = runCli({"nearest", "--checkpoint", checkpoint_, "--seeds", "1", "--neighbours", "2", "--threads",
                             testThreadsText()});
  QVERIFY2(again.exit_code == 0, qPrintable(again.err));
  const QJsonArray seed1 = samples[1].toObject().value("nearest").toArray();
  const QString first = QDir(data_).relativeFilePath(seed1[0].toObject().value("path").toString());
  const QString expected = QString("seed 1:  %1 %2  ").arg(seed1[0].toObject().value("distance").toDouble(), 0, 'f', 2).arg(first);
  QVERIFY2(again.out.startsWith(expected), qPrintable(again.out + "\nexpected: " + expected));
  QVERIFY2(again.out.contains(QString("searched %1 of %1 training images").arg(out.value("train_total").toInt())),
           qPrintable(again.out));
}

void TestMetricsCli::nearestErrors_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("message");
  QTest::newRow("no checkpoint") << QStringList{"nearest"} << 2 << "missing --checkpoint";
  QTest::newRow("seeds with n") << QStringList{"nearest", "--checkpoint", "@CKPT@", "--seeds", "1,2", "--n", "2"} << 2
                                << "--seeds cannot be used with --seed or --n";
  QTest::newRow("no neighbours") << QStringList{"nearest", "--checkpoint", "@CKPT@", "--neighbours", "0"} << 2
                                 << "--neighbours";
  QTest::newRow("too many samples") << QStringList{"nearest", "--checkpoint", "@CKPT@", "--n", "257"} << 2 << "--n";
  QTest::newRow("an empty data folder name") << QStringList{"nearest", "--checkpoint", "@CKPT@", "--dataroot", ""} << 2
                                             << "option '--dataroot'";
  QTest::newRow("a seed past int64") << QStringList{"nearest", "--checkpoint", "@CKPT@", "--seeds", "9223372036854775808"}
                                     << 2 << "\"9223372036854775808\" is not a seed";
  QTest::newRow("a data folder that is not there")
      << QStringList{"nearest", "--checkpoint", "@CKPT@", "--dataroot", "/nonexistent/streetgan-data"} << 1
      << "/nonexistent/streetgan-data";
}

void TestMetricsCli::nearestErrors() {
  QFETCH(QStringList, args);
  QFETCH(int, code);
  QFETCH(QString, message);
  args.replaceInStrings("@CKPT@", checkpoint_);
  const auto r = runCli(args);
  QCOMPARE(r.exit_code, code);
  QVERIFY2(r.err.startsWith("streetgan nearest: ") && r.err.contains(message), qPrintable(r.err));
  QVERIFY(r.out.isEmpty());
}

STREETGAN_TEST_GUILESS_MAIN(TestMetricsCli)
#include "tst_metrics_cli.moc"
