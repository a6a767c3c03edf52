// The original tool's checkpoints and PyTorch, both ways: `streetgan import` of checkpoints saved
// by a reference DCGAN in Debian's python3-torch (full, slim and DDP-prefixed, 64 and 128 px),
// compared image for image with PyTorch's own output; the optimizer moments carried over and a
// resumed run; the files import must refuse; and `streetgan export`, loaded back by PyTorch.
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "core/util/torch_compat.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <cmath>

using namespace streetgan;
using namespace streetgan::test;

namespace {

const QString kScript = QStringLiteral(STREETGAN_SOURCE_DIR "/tests/cli/reference_dcgan.py");

bool runPython(const QStringList& args, QString* output) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start("/usr/bin/python3", QStringList{kScript} + args);
  const bool finished = process.waitForFinished(300000);
  *output = QString::fromLocal8Bit(process.readAll());
  return finished && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
}

QJsonObject readJson(const QString& path) { return QJsonDocument::fromJson(readFileBytes(path)).object(); }

QVector<float> readFloats(const QString& path) {
  const QByteArray bytes = readFileBytes(path);
  QVector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.constData(), values.size() * 4);
  return values;
}

// The largest difference, in 8-bit levels, between the images of a `streetgan sample` grid
// (`columns` per row, 2-pixel border) and PyTorch's outputs (n, nc, size, size) in [-1, 1].
int worstLevelDifference(const QString& png, const QVector<float>& expected, int n, int nc, int size, int columns) {
  QImage grid(png);
  if (grid.isNull() || expected.size() != n * nc * size * size) return 1000;
  // Images of nearly one grey would match anything near that grey. A spread of at least 0.05
  // (about 6 of 255 levels) makes a misplaced tensor show as differences far above 1 level.
  double sum = 0, sum_sq = 0;
  for (float v : expected) {
    sum += v;
    sum_sq += double(v) * v;
  }
  const double spread = std::sqrt(std::max(0.0, sum_sq / expected.size() - (sum / expected.size()) * (sum / expected.size())));
  if (spread < 0.05) {
    qWarning("PyTorch's images hardly vary (standard deviation %.4f): nothing to compare", spread);
    return 1000;
  }
  grid = grid.convertToFormat(QImage::Format_RGB888);
  int worst = 0;
  for (int i = 0; i < n; ++i) {
    const int x0 = 2 + (i % columns) * (size + 2), y0 = 2 + (i / columns) * (size + 2);
    for (int c = 0; c < nc; ++c)
      for (int y = 0; y < size; ++y)
        for (int x = 0; x < size; ++x) {
          const float v = expected[((i * nc + c) * size + y) * size + x];
          const int want = static_cast<int>(std::lround(std::clamp((v + 1.0f) * 127.5f, 0.0f, 255.0f)));
          const QRgb pixel = grid.pixel(x0 + x, y0 + y);
          const int got = nc == 1 ? qRed(pixel) : (c == 0 ? qRed(pixel) : c == 1 ? qGreen(pixel) : qBlue(pixel));
          worst = std::max(worst, std::abs(got - want));
        }
  }
  return worst;
}

QString onlyCheckpoint(const QString& run_dir) {
  const QStringList files = QDir(run_dir + "/checkpoints").entryList({"*.pt"}, QDir::Files);
  return files.size() == 1 ? run_dir + "/checkpoints/" + files.front() : QString();
}

}  // namespace

class TestInterop : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void importMatchesPyTorch_data();
  void importMatchesPyTorch();
  void importedRunResumes();
  void badCheckpointsAreRefused_data();
  void badCheckpointsAreRefused();
  void exportLoadsInPyTorch_data();
  void exportLoadsInPyTorch();
  void exportRefusals();

private:
  QString reference(int size) const { return dir_.path() + "/ref" + QString::number(size); }
  QTemporaryDir dir_;
  QString dataroot_;
};

void TestInterop::initTestCase() {
  QVERIFY(dir_.isValid());
  for (int size : {64, 128}) {
    QString output;
    QVERIFY2(runPython({"make", "--out", reference(size), "--img-size", QString::number(size)}, &output),
             qPrintable("the PyTorch reference failed (python3-torch is a test dependency):\n" + output));
  }
  dataroot_ = makeTinyDataset(dir_.path() + "/tiny");
  QVERIFY(!dataroot_.isEmpty());
}

void TestInterop::importMatchesPyTorch_data() {
  QTest::addColumn<int>("size");
  QTest::addColumn<QString>("kind");
  for (int size : {64, 128})
    for (const char* kind : {"full", "slim", "ddp"})
      QTest::newRow(qPrintable(QString("%1 %2").arg(size).arg(kind))) << size << QString(kind);
}

void TestInterop::importMatchesPyTorch() {
  QFETCH(int, size);
  QFETCH(QString, kind);
  const QString ref = reference(size);
  const QJsonObject expected = readJson(ref + "/expected.json");
  QVERIFY(!expected.isEmpty());
  const QString run = dir_.path() + QString("/runs/%1-%2").arg(size).arg(kind);
  QVERIFY(QDir().mkpath(dir_.path() + "/runs"));
  CliResult r = runCli({"import", ref + "/" + kind + ".pt", "--run-dir", run, "--batch-size", "4"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
  const bool full = kind != "slim";
  QVERIFY2(r.out.contains(full ? "--resume continues with both optimizers' moments" : "--resume would start"), qPrintable(r.out));
  QCOMPARE(r.out.contains("DistributedDataParallel"), kind == "ddp");

  // The net's size, read from the shapes, and the optimizer's settings.
  const QJsonObject config = readJson(run + "/config.json");
  for (const char* key : {"nz", "ngf", "nc", "img_size"}) QCOMPARE(config[key].toInt(), expected[key].toInt());
  if (full) {
    QCOMPARE(config["ndf"].toInt(), expected["ndf"].toInt());
    QCOMPARE(config["lr"].toDouble(), expected["lr"].toDouble());
    QCOMPARE(config["beta1"].toDouble(), expected["beta1"].toDouble());
    QCOMPARE(config["beta2"].toDouble(), expected["beta2"].toDouble());
    QCOMPARE(config["weight_decay"].toDouble(), expected["weight_decay"].toDouble());
  }
  QCOMPARE(config["batch_size"].toInt(), 4);

  // The old losses as step events, the old grids as samples.
  const auto events = readEvents(run);
  QCOMPARE(eventsOfType(events, "run_started").size(), 1);
  QVERIFY(eventsOfType(events, "run_started").front()["imported_from"].toString().endsWith(kind + ".pt"));
  const auto steps = eventsOfType(events, "step");
  const QJsonArray losses_g = expected["losses"].toObject()["_G"].toArray();
  const QJsonArray losses_d = expected["losses"].toObject()["_D"].toArray();
  QCOMPARE(steps.size(), full ? losses_g.size() : 0);
  for (int i = 0; i < steps.size(); ++i) {
    QCOMPARE(steps[i]["loss_g"].toDouble(), losses_g[i].toDouble());
    QCOMPARE(steps[i]["loss_d"].toDouble(), losses_d[i].toDouble());
    QCOMPARE(steps[i]["images_seen"].toInt(), (i + 1) * 4);
  }
  const auto samples = eventsOfType(events, "samples");
  QCOMPARE(samples.size(), full ? expected["samples"].toInt() : 0);
  for (const auto& sample : samples) {
    QImage grid(run + "/" + sample["path"].toString());
    QVERIFY2(!grid.isNull(), qPrintable(sample["path"].toString()));
    QCOMPARE(grid.width(), 2 + 8 * (size + 2));  // 16 images, 8 to a row, as make_grid lays them out
  }
  QCOMPARE(eventsOfType(events, "run_finished").size(), 1);

  // G in eval mode gives PyTorch's images: the file's own fixed noise, or seed 7's latents.
  const QString checkpoint = onlyCheckpoint(run);
  QVERIFY(!checkpoint.isEmpty());
  const QString png = dir_.path() + QString("/sample-%1-%2.png").arg(size).arg(kind);
  const int n = full ? expected["fixed_count"].toInt() : 8;
  r = runCli(full ? QStringList{"sample", "--checkpoint", checkpoint, "--fixed", "--n", QString::number(n), "--columns", "8", "--out", png}
                  : QStringList{"sample", "--checkpoint", checkpoint, "--seed", "7", "--n", "8", "--columns", "8", "--out", png});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const int worst = worstLevelDifference(png, readFloats(ref + (full ? "/fixed.f32" : "/seeded.f32")), n,
                                         expected["nc"].toInt(), size, 8);
  qInfo("%d px %s: largest difference from PyTorch %d/255", size, qPrintable(kind), worst);
  QVERIFY2(worst <= 1, qPrintable(QString("differs from PyTorch by %1/255").arg(worst)));

  // Both optimizers' moments arrived, parameter by parameter.
  if (!full) return;
  auto stored = readCheckpointConfig(checkpoint.toStdString());
  QVERIFY2(stored.ok(), stored.error().c_str());
  DcganStep model(*stored, torch::kCPU, Precision::Fp32);
  auto restored = loadCheckpoint(checkpoint.toStdString(), model);
  QVERIFY2(restored.ok(), restored.error().c_str());
  QCOMPARE(restored->progress.epoch, static_cast<std::int64_t>(expected["epoch"].toInt() + 1));
  QCOMPARE(restored->progress.step, static_cast<std::int64_t>(losses_g.size()));
  const std::pair<torch::optim::Optimizer*, std::vector<torch::Tensor>> nets[] = {
      {&model.optimizerG(), model.generator()->parameters()}, {&model.optimizerD(), model.discriminator()->parameters()}};
  const QJsonArray moments[] = {expected["moments_g"].toArray(), expected["moments_d"].toArray()};
  for (int net = 0; net < 2; ++net) {
    const auto& [optimizer, params] = nets[net];
    QCOMPARE(static_cast<int>(params.size()), moments[net].size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      const QJsonArray row = moments[net][static_cast<int>(i)].toArray();
      auto found = optimizer->state().find(torch_compat::optimizerStateKey(params[i]));
      QVERIFY(found != optimizer->state().end());
      const auto& state = static_cast<const torch::optim::AdamWParamState&>(*found->second);
      QCOMPARE(static_cast<double>(state.step()), row[0].toDouble());
      const double avg = state.exp_avg().to(torch::kFloat64).sum().item<double>();
      const double avg_sq = state.exp_avg_sq().to(torch::kFloat64).sum().item<double>();
      QVERIFY2(std::abs(avg - row[1].toDouble()) <= 1e-6 * std::max(1.0, std::abs(row[1].toDouble())), qPrintable(QString::number(avg)));
      QVERIFY2(std::abs(avg_sq - row[2].toDouble()) <= 1e-6 * std::max(1e-6, std::abs(row[2].toDouble())), qPrintable(QString::number(avg_sq)));
    }
  }
}

void TestInterop::importedRunResumes() {
  const QString run = dir_.path() + "/runs/resumed";
  CliResult r = runCli({"import", reference(64) + "/full.pt", "--run-dir", run, "--batch-size", "8", "--dataroot", dataroot_});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const int epochs = readJson(reference(64) + "/expected.json")["epoch"].toInt() + 1;
  r = runCli({"train", "--resume", "--run-dir", run, "--epochs", QString::number(epochs + 1), "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const auto events = readEvents(run);
  const auto started = eventsOfType(events, "run_started");
  QCOMPARE(started.size(), 2);
  QVERIFY(started.back()["resumed_from"].toString().startsWith("checkpoints/"));
  QCOMPARE(started.back()["epoch"].toInt(), epochs);
  QCOMPARE(eventsOfType(events, "run_finished").back()["status"].toString(), QString("completed"));
  QCOMPARE(eventsOfType(events, "epoch_end").back()["epoch"].toInt(), epochs + 1);
}

void TestInterop::badCheckpointsAreRefused_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<QString>("message");
  QTest::newRow("other keys") << "other-keys.pt" << "holds the key \"weights\"";
  QTest::newRow("a whole module") << "whole-module.pt" << "refused, as loading it could run code";
  QTest::newRow("no DCGAN") << "no-dcgan.pt" << "G_state_dict has 4 convolution weights";
  QTest::newRow("legacy format") << "legacy.pt" << "PyTorch's legacy format";
  QTest::newRow("random zip") << "random.zip" << "cannot read the zip archive";
  QTest::newRow("truncated pickle") << "truncated-pickle.pt" << "truncated";
  QTest::newRow("truncated file") << "truncated.pt" << "cannot read the zip archive";
  QTest::newRow("empty file") << "empty.pt" << "too short to be a checkpoint";
  QTest::newRow("not a zip") << "expected.json" << "not a torch.save file";
  QTest::newRow("no such file") << "missing.pt" << "no such file";
}

void TestInterop::badCheckpointsAreRefused() {
  QFETCH(QString, file);
  QFETCH(QString, message);
  const QString ref = reference(64);
  if (!QFile::exists(ref + "/truncated.pt")) {
    const QByteArray whole = readFileBytes(ref + "/full.pt");
    QFile half(ref + "/truncated.pt");
    QVERIFY(half.open(QIODevice::WriteOnly));
    half.write(whole.left(whole.size() / 2));
    half.close();
    QFile empty(ref + "/empty.pt");
    QVERIFY(empty.open(QIODevice::WriteOnly));
  }
  const QString parent = dir_.path() + "/refused";
  QVERIFY(QDir().mkpath(parent));
  const CliResult r = runCli({"import", ref + "/" + file, "--run-dir", parent + "/run"});
  QCOMPARE(r.exit_code, 1);
  const QString line = r.err.trimmed();
  QVERIFY2(!line.contains('\n'), qPrintable(line));
  QVERIFY2(line.contains(file), qPrintable(line));
  QVERIFY2(line.contains(message), qPrintable(line));
  QVERIFY2(QDir(parent).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).isEmpty(), "something was written");
}

void TestInterop::exportLoadsInPyTorch_data() {
  QTest::addColumn<QString>("source");
  QTest::addColumn<bool>("train_mode");
  // A run of 4 steps still draws grey in eval mode (its running statistics have hardly moved),
  // so it is compared with batch statistics; the imported net in eval mode.
  QTest::newRow("trained here, 64 px, batch statistics") << "trained" << true;
  QTest::newRow("imported, 128 px, running statistics") << "imported" << false;
}

void TestInterop::exportLoadsInPyTorch() {
  QFETCH(QString, source);
  QFETCH(bool, train_mode);
  QString run = dir_.path() + "/export-" + source;
  CliResult r = source == "trained"
                    ? runCli(tinyTrainArgs(dataroot_, run, 1))
                    : runCli({"import", reference(128) + "/full.pt", "--run-dir", run});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QString checkpoint = onlyCheckpoint(run);
  QVERIFY(!checkpoint.isEmpty());
  const QString state = dir_.path() + "/G-" + source + ".pt";
  r = runCli({"export", "--checkpoint", checkpoint, "--out", state});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QJsonObject sidecar = readJson(dir_.path() + "/G-" + source + ".json");
  const QJsonObject config = readJson(run + "/config.json");
  for (const char* key : {"nz", "ngf", "nc", "img_size", "preset"}) QCOMPARE(sidecar[key], config[key]);
  QCOMPARE(sidecar["run"].toString(), QFileInfo(run).fileName());
  QVERIFY(sidecar["step"].toInt() >= 0);

  QString output;
  const QString floats = dir_.path() + "/export-" + source + ".f32";
  QStringList load = {"load-export", "--state", state, "--sidecar", dir_.path() + "/G-" + source + ".json",
                      "--seed", "7", "--n", "8", "--out", floats};
  if (train_mode) load << "--train-mode";
  QVERIFY2(runPython(load, &output), qPrintable(output));
  const QString png = dir_.path() + "/export-" + source + ".png";
  r = runCli(QStringList{"sample", "--checkpoint", checkpoint, "--seed", "7", "--n", "8", "--columns", "8", "--out", png} +
             (train_mode ? QStringList{"--train-mode"} : QStringList{}));
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const int worst = worstLevelDifference(png, readFloats(floats), 8, sidecar["nc"].toInt(), sidecar["img_size"].toInt(), 8);
  qInfo("%s: PyTorch with the exported state dict differs by %d/255", qPrintable(source), worst);
  QVERIFY2(worst <= 1, qPrintable(QString("differs from PyTorch by %1/255").arg(worst)));
}

void TestInterop::exportRefusals() {
  const QString out = dir_.path() + "/refused-export/G.pt";
  QVERIFY(QDir().mkpath(dir_.path() + "/refused-export"));
  CliResult r = runCli({"export", "--checkpoint", reference(64) + "/full.pt", "--out", out});
  QCOMPARE(r.exit_code, 1);
  QVERIFY2(r.err.contains("full.pt: not a StreetGAN checkpoint"), qPrintable(r.err));
  r = runCli({"export", "--checkpoint", dir_.path() + "/nothing.pt", "--out", out});
  QCOMPARE(r.exit_code, 1);
  QVERIFY2(r.err.contains("nothing.pt"), qPrintable(r.err));
  QVERIFY(QDir(dir_.path() + "/refused-export").entryList(QDir::Files).isEmpty());
  r = runCli({"export", "--checkpoint", reference(64) + "/full.pt"});
  QCOMPARE(r.exit_code, 2);
  QVERIFY2(r.err.contains("missing --out"), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestInterop)
#include "tst_interop.moc"
