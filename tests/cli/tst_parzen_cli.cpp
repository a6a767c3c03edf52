// `streetgan parzen` and Parzen evaluation during training, through the real program: a folder
// of images scored as samples must give exactly what the core estimator gives for the same
// pixels; a checkpoint scored on the held-out split; parzen events from a training run; the
// errors a researcher can run into.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include "core/eval/parzen_estimator.h"
#include "core/eval/parzen_inputs.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

using namespace streetgan;
using namespace streetgan::test;

namespace {

// `count` 16x16 images of smooth random colour fields into `folder`.
QStringList writeParzenImages(const QString& folder, int count, int seed) {
  QDir().mkpath(folder);
  QStringList paths;
  std::srand(static_cast<unsigned>(seed));
  for (int i = 0; i < count; ++i) {
    QImage image(16, 16, QImage::Format_RGB888);
    const int r = std::rand() % 256, g = std::rand() % 256, b = std::rand() % 256;
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) image.setPixel(x, y, qRgb((r + 8 * x) % 256, (g + 8 * y) % 256, (b + x * y) % 256));
    paths << folder + QString("/%1.png").arg(i, 3, 10, QChar('0'));
    image.save(paths.last());
  }
  return paths;
}

std::vector<std::string> toStd(const QStringList& list) {
  std::vector<std::string> out;
  for (const auto& s : list) out.push_back(s.toStdString());
  return out;
}

}  // namespace

class TestParzenCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void foldersMatchTheEstimator();
  void checkpointOnTheHeldOutSplit();
  void trainingEmitsParzenEvents();
  void curveOverTheCheckpointsOfARun();
  void errors_data();
  void errors();

private:
  QTemporaryDir dir_;
  QString data_, samples_, valid_, test_;
  QStringList sample_paths_, valid_paths_, test_paths_;
};

void TestParzenCli::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = makeTinyDataset(dir_.path());
  samples_ = dir_.path() + "/samples", valid_ = dir_.path() + "/valid", test_ = dir_.path() + "/test";
  sample_paths_ = writeParzenImages(samples_, 30, 1);
  valid_paths_ = writeParzenImages(valid_, 7, 2);
  test_paths_ = writeParzenImages(test_, 9, 3);
}

void TestParzenCli::foldersMatchTheEstimator() {
  const auto r = runCli({"parzen", "--samples", samples_, "--valid", valid_, "--test", test_, "--img-size", "16",
                         "--sigmas", "0.05,0.1,0.2,0.4", "--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(out.value("n_test").toInt(), 9);
  QCOMPARE(out.value("n_valid").toInt(), 7);
  QCOMPARE(out.value("n_samples").toInt(), 30);
  QCOMPARE(out.value("dimensions").toInt(), 3 * 16 * 16);
  QCOMPARE(out.value("curve").toArray().size(), 4);

  // The same pixels through the core: x = pixel/127.5 − 1, channel-first.
  auto mu = loadImageRows(toStd(sample_paths_), 16, 3, 4.0);
  auto valid = loadImageRows(toStd(valid_paths_), 16, 3, 4.0);
  auto test = loadImageRows(toStd(test_paths_), 16, 3, 4.0);
  QVERIFY(mu && valid && test);
  const QImage first(sample_paths_.first());
  QCOMPARE(mu->rows[0][0].item<float>(), float(qRed(first.pixel(0, 0)) / 127.5 - 1));
  QCOMPARE(mu->rows[0][256].item<float>(), float(qGreen(first.pixel(0, 0)) / 127.5 - 1));
  ParzenOptions options;
  options.sigmas = {0.05, 0.1, 0.2, 0.4};
  auto expected = ParzenEstimator::evaluate(mu->rows, valid->rows, test->rows, options);
  QVERIFY(expected);
  QCOMPARE(out.value("sigma").toDouble(), expected->sigma);
  QVERIFY(qAbs(out.value("mean_ll").toDouble() - expected->mean_ll) <= 1e-9 * qAbs(expected->mean_ll));
  QVERIFY(qAbs(out.value("stderr").toDouble() - expected->stderr_ll) <= 1e-9 * qAbs(expected->stderr_ll) + 1e-12);

  const auto text = runCli({"parzen", "--samples", samples_, "--valid", valid_, "--test", test_, "--img-size", "16"});
  QVERIFY2(text.exit_code == 0, qPrintable(text.err));
  QVERIFY2(text.out.contains("<- chosen") && text.out.contains("Parzen log-likelihood (test):"), qPrintable(text.out));
}

void TestParzenCli::checkpointOnTheHeldOutSplit() {
  const QString run = dir_.path() + "/run";
  QVERIFY2(runCli(tinyTrainArgs(data_, run, 1)).exit_code == 0, "training failed");
  QDirIterator it(run + "/checkpoints", {"*.pt"});
  QVERIFY(it.hasNext());
  const QString checkpoint = it.next();
  const auto r = runCli({"parzen", "--checkpoint", checkpoint, "--dataroot", data_, "--holdout-fraction", "0.5",
                         "--holdout-seed", "2", "--n-samples", "50", "--n-valid", "4", "--n-test", "6",
                         "--batch", "16", "--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  QCOMPARE(out.value("n_samples").toInt(), 50);
  QCOMPARE(out.value("n_valid").toInt(), 4);
  QCOMPARE(out.value("n_test").toInt(), 6);
  QCOMPARE(out.value("dimensions").toInt(), 3 * 64 * 64);
  QVERIFY(std::isfinite(out.value("mean_ll").toDouble()));
  QVERIFY(out.value("seconds").toObject().contains("estimator"));
  // The same samples whatever the generator batch size.
  const auto again = runCli({"parzen", "--checkpoint", checkpoint, "--dataroot", data_, "--holdout-fraction", "0.5",
                             "--holdout-seed", "2", "--n-samples", "50", "--n-valid", "4", "--n-test", "6",
                             "--batch", "7", "--json"});
  QVERIFY2(again.exit_code == 0, qPrintable(again.err));
  QCOMPARE(QJsonDocument::fromJson(again.out.toUtf8()).object().value("mean_ll").toDouble(), out.value("mean_ll").toDouble());
}

void TestParzenCli::trainingEmitsParzenEvents() {
  const QString config = dir_.path() + "/parzen.json";
  QFile file(config);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(R"({"parzen": {"every_epochs": 1, "n_samples": 40, "n_valid": 4, "n_test": 4, "sigmas": [0.2, 0.5, 1.0]},
                 "data": {"holdout_fraction": 0.5, "holdout_seed": 2}})");
  file.close();
  const QString run = dir_.path() + "/run-parzen";
  const auto r = runCli(tinyTrainArgs(data_, run, 2) << "--config" << config);
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const auto events = readEvents(run);
  const auto parzen = eventsOfType(events, "parzen");
  QCOMPARE(parzen.size(), 2);
  for (int i = 0; i < 2; ++i) {
    QCOMPARE(parzen[i].value("epoch").toInt(), i + 1);
    QCOMPARE(parzen[i].value("curve").toArray().size(), 3);
    QCOMPARE(parzen[i].value("n_samples").toInt(), 40);
    QVERIFY(std::isfinite(parzen[i].value("mean_ll").toDouble()));
  }
  const auto started = eventsOfType(events, "run_started").first();
  QVERIFY(started.value("dataset").toObject().value("held_out").toInt() > 0);
}

void TestParzenCli::curveOverTheCheckpointsOfARun() {
  // The run of trainingEmitsParzenEvents: 2 checkpoints; data folder and held-out split from its config.
  const QString run = dir_.path() + "/run-parzen";
  const auto r = runCli({"parzen", "--run", run, "--n-samples", "30", "--n-valid", "4", "--n-test", "4", "--json"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
  const QJsonArray checkpoints = out.value("checkpoints").toArray();
  QCOMPARE(checkpoints.size(), 2);
  QCOMPARE(checkpoints[0].toObject().value("epoch").toInt(), 1);
  QCOMPARE(checkpoints[1].toObject().value("epoch").toInt(), 2);
  QCOMPARE(out.value("curve").toArray().size(), 10);  // σ chosen on the latest, default grid
  const auto given = runCli({"parzen", "--run", run, "--sigma", "0.5", "--n-samples", "30", "--n-valid", "4",
                             "--n-test", "4", "--json"});
  QVERIFY2(given.exit_code == 0, qPrintable(given.err));
  QCOMPARE(QJsonDocument::fromJson(given.out.toUtf8()).object().value("sigma").toDouble(), 0.5);
}

void TestParzenCli::errors_data() {
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("message");
  QTest::newRow("no source") << QStringList{"--dataroot", "x"} << 2 << "give one of --checkpoint FILE, --samples DIR or --run DIR";
  QTest::newRow("sigma without run") << QStringList{"--samples", "S", "--valid", "V", "--test", "T", "--sigma", "0.2"} << 2
                                     << "--sigma goes with --run";
  QTest::newRow("valid without test") << QStringList{"--samples", "S", "--valid", "V"} << 2 << "--valid and --test go together";
  QTest::newRow("no held-out split") << QStringList{"--samples", "S", "--dataroot", "D"} << 2 << "no held-out split";
  QTest::newRow("bad sigma") << QStringList{"--samples", "S", "--valid", "V", "--test", "T", "--sigmas", "0.1,-2"} << 2
                             << "option '--sigmas': \"-2\" is not a positive number";
  QTest::newRow("missing checkpoint") << QStringList{"--checkpoint", "/nonexistent.pt", "--valid", "V", "--test", "T"} << 1
                                      << "/nonexistent.pt";
  QTest::newRow("empty test folder") << QStringList{"--samples", "S", "--valid", "V", "--test", "E"} << 1
                                     << "option '--test':";
}

void TestParzenCli::errors() {
  QFETCH(QStringList, args);
  QFETCH(int, code);
  QFETCH(QString, message);
  QDir().mkpath(dir_.path() + "/empty");
  for (QString& a : args) {
    if (a == "S") a = samples_;
    else if (a == "V") a = valid_;
    else if (a == "T") a = test_;
    else if (a == "D") a = data_;
    else if (a == "E") a = dir_.path() + "/empty";
  }
  const auto r = runCli(QStringList{"parzen"} + args);
  QCOMPARE(r.exit_code, code);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QCOMPARE(r.err.trimmed().count('\n'), 0);
}

STREETGAN_TEST_GUILESS_MAIN(TestParzenCli)
#include "tst_parzen_cli.moc"
