// The original tool's checkpoints and PyTorch, both ways: `streetgan import` of checkpoints saved
// by a reference DCGAN in Debian's python3-torch (full, slim and DDP-prefixed, 64 and 128 px),
// compared image for image with PyTorch's own output; the optimizer moments carried over and a
// resumed run; the files import must refuse; the run folder it makes (a fresh staging folder,
// nothing left on a failure, a cancellation or SIGTERM, trailing separators on --run-dir); the
// imported losses written compactly; and `streetgan export`, loaded back by PyTorch.
#include "core/runs/run_history.h"
#include "core/train/checkpoint.h"
#include "core/interop/checkpoint_import.h"
#include "core/train/dcgan_step.h"
#include "core/util/torch_compat.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <sys/resource.h>

#include <cmath>
#include <csignal>

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

// A slim checkpoint of the reference DCGAN (nz 12, ngf 6, 64 px) with `epoch` and `losses` pairs
// of known values: loss_g[i] = 1 + (i mod 997) / 1000, loss_d[i] = 0.5 + (i mod 991) / 3000.
const char kMakeCheckpoint[] = R"(
import sys, torch
sys.path.insert(0, sys.argv[1])
import reference_dcgan as r
torch.manual_seed(1)
out, epoch, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
checkpoint = {'epoch': epoch, 'G_state_dict': r.generator(12, 6, 3, 64).state_dict()}
if n > 0:
    checkpoint['losses'] = {'_G': [1.0 + (i % 997) / 1000.0 for i in range(n)],
                            '_D': [0.5 + (i % 991) / 3000.0 for i in range(n)]}
torch.save(checkpoint, out)
)";

// Runs `code` with Debian's python3 (torch is a test dependency) and `args` as sys.argv[1:];
// empty when it succeeded, else what it printed.
QString runPythonScript(const QString& code, const QStringList& args) {
  QProcess python;
  python.setProcessChannelMode(QProcess::MergedChannels);
  python.start("/usr/bin/python3", QStringList{"-c", code} + args);
  if (!python.waitForFinished(120000)) return "python3 did not finish in 120 s";
  if (python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0)
    return "python3 failed: " + QString::fromLocal8Bit(python.readAll());
  return {};
}

double expectedLossG(int i) { return 1.0 + (i % 997) / 1000.0; }
double expectedLossD(int i) { return 0.5 + (i % 991) / 3000.0; }

bool makeCheckpoint(const QString& out, qint64 epoch, int losses, QString* output) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start("/usr/bin/python3", {"-c", kMakeCheckpoint, STREETGAN_SOURCE_DIR "/tests/cli", out,
                                     QString::number(epoch), QString::number(losses)});
  const bool finished = process.waitForFinished(300000);
  *output = QString::fromLocal8Bit(process.readAll());
  return finished && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
}

// The loss pairs of an imported run in step order: the `imported_losses` events' arrays, then the
// `step` event of the last pair (docs/events.md). `error` says where the log breaks that form.
struct ImportedLosses {
  QVector<double> loss_d, loss_g;
  QVector<qint64> images_seen;
  QString error;
};

ImportedLosses importedLosses(const QVector<QJsonObject>& events) {
  ImportedLosses out;
  for (const QJsonObject& e : events) {
    const QString type = e["type"].toString();
    if (type == "imported_losses") {
      const QJsonArray d = e["loss_d"].toArray(), g = e["loss_g"].toArray();
      const qint64 first = e["first_step"].toInteger();
      if (first != out.loss_g.size() + 1 || d.size() != g.size() || d.size() != e["steps"].toInt() || d.isEmpty()) {
        out.error = "imported_losses event out of order or of the wrong size: " +
                    QString::fromUtf8(QJsonDocument(e).toJson(QJsonDocument::Compact).left(200));
        return out;
      }
      for (int k = 0; k < d.size(); ++k) {
        out.loss_d << d[k].toDouble();
        out.loss_g << g[k].toDouble();
        out.images_seen << (first + k) * e["images_per_step"].toInteger();
      }
    } else if (type == "step") {
      if (e["step"].toInteger() != out.loss_g.size() + 1 || !e["imported"].toBool()) {
        out.error = "step event out of order: " + QString::fromUtf8(QJsonDocument(e).toJson(QJsonDocument::Compact));
        return out;
      }
      out.loss_d << e["loss_d"].toDouble();
      out.loss_g << e["loss_g"].toDouble();
      out.images_seen << e["images_seen"].toInteger();
    }
  }
  return out;
}

bool writeInteropText(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QStringList entriesOf(const QString& folder) {
  return QDir(folder).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
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
  void importWritesLossesCompactly();
  void importRefusesTooManyLosses();
  void importNeverAdoptsAStagingFolder();
  void importTrailingSeparators_data();
  void importTrailingSeparators();
  void cancelledImportLeavesNothing();
  void signalledImportLeavesNothing_data();
  void signalledImportLeavesNothing();
  void badCheckpointsAreRefused_data();
  void badCheckpointsAreRefused();
  void netsAreCheckedBeforeTheyAreBuilt();
  void importRefusesTooManyImageGrids();
  void exportLoadsInPyTorch_data();
  void exportLoadsInPyTorch();
  void exportRefusals();

private:
  QString reference(int size) const { return dir_.path() + "/ref" + QString::number(size); }
  /// A slim checkpoint with epoch 4 and kManyLosses loss pairs (made once).
  QString manyLosses();
  static constexpr int kManyLosses = 300000;
  QTemporaryDir dir_;
  QString dataroot_;
  QString many_losses_;
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

  // The old losses as imported_losses events and one last step event, the old grids as samples.
  const auto events = readEvents(run);
  QCOMPARE(eventsOfType(events, "run_started").size(), 1);
  QVERIFY(eventsOfType(events, "run_started").front()["imported_from"].toString().endsWith(kind + ".pt"));
  const ImportedLosses imported = importedLosses(events);
  QVERIFY2(imported.error.isEmpty(), qPrintable(imported.error));
  const QJsonArray losses_g = expected["losses"].toObject()["_G"].toArray();
  const QJsonArray losses_d = expected["losses"].toObject()["_D"].toArray();
  QCOMPARE(imported.loss_g.size(), full ? losses_g.size() : 0);
  for (int i = 0; i < imported.loss_g.size(); ++i) {
    QCOMPARE(imported.loss_g[i], losses_g[i].toDouble());
    QCOMPARE(imported.loss_d[i], losses_d[i].toDouble());
    QCOMPARE(imported.images_seen[i], qint64(i + 1) * 4);
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

QString TestInterop::manyLosses() {
  if (many_losses_.isEmpty()) {
    const QString path = dir_.path() + "/many-losses.pt";
    QString output;
    if (!makeCheckpoint(path, 4, kManyLosses, &output)) {
      qWarning("the checkpoint of many losses could not be made:\n%s", qPrintable(output));
      return QString();
    }
    many_losses_ = path;
  }
  return many_losses_;
}

// One event per loss pair made a few MB of checkpoint hundreds of MB of events.jsonl: the pairs
// come as imported_losses events of up to 4096 pairs, the last as a step event, and every value
// arrives (in the log, and as points of the compare view's history).
void TestInterop::importWritesLossesCompactly() {
  const QString file = manyLosses();
  QVERIFY(!file.isEmpty());
  const QString run = dir_.path() + "/runs/many-losses";
  QVERIFY(QDir().mkpath(dir_.path() + "/runs"));
  const CliResult r = runCli({"import", file, "--run-dir", run, "--batch-size", "16"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.out.contains(QString("%1 logged steps").arg(kManyLosses)), qPrintable(r.out));
  const auto events = readEvents(run);
  const int chunks = (kManyLosses - 1 + 4095) / 4096;
  QVERIFY2(events.size() <= chunks + 10, qPrintable(QString("%1 events for %2 loss pairs").arg(events.size()).arg(kManyLosses)));
  QCOMPARE(eventsOfType(events, "imported_losses").size(), chunks);
  QCOMPARE(eventsOfType(events, "step").size(), 1);
  const qint64 bytes = QFileInfo(run + "/events.jsonl").size();
  QVERIFY2(bytes < qint64(kManyLosses) * 2 * 24, qPrintable(QString("events.jsonl: %1 bytes").arg(bytes)));

  const ImportedLosses imported = importedLosses(events);
  QVERIFY2(imported.error.isEmpty(), qPrintable(imported.error));
  QCOMPARE(imported.loss_g.size(), kManyLosses);
  for (int i = 0; i < kManyLosses; ++i) {
    if (imported.loss_g[i] != expectedLossG(i) || imported.loss_d[i] != expectedLossD(i) ||
        imported.images_seen[i] != qint64(i + 1) * 16)
      QFAIL(qPrintable(QString("pair %1: loss_g %2, loss_d %3, images seen %4").arg(i).arg(imported.loss_g[i], 0, 'g', 17)
                           .arg(imported.loss_d[i], 0, 'g', 17).arg(imported.images_seen[i])));
  }
  const QJsonObject last = eventsOfType(events, "step").front();
  QCOMPARE(last["epoch"].toInt(), 5);
  QCOMPARE(last["iteration"].toInt(), last["iterations"].toInt());

  // The compare view's reader: one point per pair, images seen and epochs rising to the end.
  RunHistoryReader reader;
  reader.feed(readFileBytes(run + "/events.jsonl").toStdString());
  const RunHistory& history = reader.history();
  QCOMPARE(history.malformed_lines, std::int64_t{0});
  QCOMPARE(history.steps.size(), std::size_t{kManyLosses});
  QCOMPARE(history.steps.front().loss_g, expectedLossG(0));
  QCOMPARE(history.steps.front().images_seen, 16.0);
  QCOMPARE(history.steps[kManyLosses / 2 - 1].epoch, 2.5);
  QCOMPARE(history.steps.back().loss_d, expectedLossD(kManyLosses - 1));
  QCOMPARE(history.steps.back().images_seen, 16.0 * kManyLosses);
  QCOMPARE(history.steps.back().epoch, 5.0);
  for (std::size_t i = 1; i < history.steps.size(); ++i)
    if (!(history.steps[i].images_seen > history.steps[i - 1].images_seen && history.steps[i].epoch > history.steps[i - 1].epoch))
      QFAIL(qPrintable(QString("point %1 does not follow point %2").arg(i).arg(i - 1)));
}

void TestInterop::importRefusesTooManyLosses() {
  const QString file = manyLosses();
  QVERIFY(!file.isEmpty());
  const QString parent = dir_.path() + "/too-many-losses";
  QVERIFY(QDir().mkpath(parent));
  CheckpointImportOptions options;
  options.checkpoint = file.toStdString();
  options.run_dir = (parent + "/run").toStdString();
  options.max_losses = kManyLosses - 1;
  const auto report = importReferenceCheckpoint(options);
  QVERIFY(!report.ok());
  const QString error = QString::fromStdString(report.error());
  QVERIFY2(error == file + QString(": losses[\"_G\"] holds %1 values; at most %2 can be imported").arg(kManyLosses).arg(kManyLosses - 1),
           qPrintable(error));
  QCOMPARE(entriesOf(parent), QStringList{});
  // The cap cannot be raised past kMaxImportedLosses.
  QVERIFY(kMaxImportedLosses >= kManyLosses);
  options.max_losses = kMaxImportedLosses + 1;
  QVERIFY2(importReferenceCheckpoint(options).ok(), "refused under the cap");
}

// A killed import left <run>.importing-<pid> behind, and the next import of the same pid (pid 1
// in a container) wrote into it: two run_started events, and a stale checkpoint --resume would
// have picked. Folders of that name are planted for the pids the next processes are likely to
// get; the import must make a fresh one of its own and leave them as they were.
void TestInterop::importNeverAdoptsAStagingFolder() {
  const QString parent = dir_.path() + "/planted";
  QVERIFY(QDir().mkpath(parent));
  const QString run = parent + "/run";
  bool ok = false;
  qint64 last_pid = QString::fromLatin1(readFileBytes("/proc/sys/kernel/ns_last_pid")).trimmed().toLongLong(&ok);
  if (!ok) last_pid = QCoreApplication::applicationPid();
  QStringList planted;
  for (qint64 pid = last_pid + 1; pid <= last_pid + 200; ++pid) planted << run + ".importing-" + QString::number(pid);
  planted << run + ".importing-XXXXXX" << run + ".importing-";
  const QByteArray stale_events = R"({"v":1,"type":"run_started","time":1,"epoch":0,"step":0,"images_seen":0})" "\n";
  for (const QString& folder : planted) {
    QVERIFY(QDir().mkpath(folder + "/checkpoints"));
    QVERIFY(writeInteropText(folder + "/events.jsonl", stale_events));
    QVERIFY(writeInteropText(folder + "/checkpoints/step-99.pt", "stale"));
  }

  const CliResult r = runCli({"import", reference(64) + "/full.pt", "--run-dir", run});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const auto events = readEvents(run);
  QCOMPARE(eventsOfType(events, "run_started").size(), 1);
  QVERIFY2(!QFileInfo::exists(run + "/checkpoints/step-99.pt"), "a planted folder's checkpoint is in the run");
  QVERIFY(!onlyCheckpoint(run).isEmpty());
  for (const QString& folder : planted) {
    QVERIFY2(readFileBytes(folder + "/events.jsonl") == stale_events, qPrintable(folder + " was written to"));
    QVERIFY2(QFileInfo::exists(folder + "/checkpoints/step-99.pt"), qPrintable(folder + " lost its file"));
  }
  // The run and the planted folders; the import's own staging folder is gone.
  QCOMPARE(entriesOf(parent).size(), planted.size() + 1);
}

// "runs/x/" named the staging folder runs/x/.importing-… (inside the run) or refused the parent.
void TestInterop::importTrailingSeparators_data() {
  QTest::addColumn<QString>("given");
  QTest::addColumn<bool>("exists");
  QTest::newRow("x/") << "x/" << false;
  QTest::newRow("x//") << "x//" << false;
  QTest::newRow("x/.") << "x/." << false;
  QTest::newRow("x/ (an empty folder)") << "x/" << true;
  QTest::newRow("x// (an empty folder)") << "x//" << true;
}

void TestInterop::importTrailingSeparators() {
  QFETCH(QString, given);
  QFETCH(bool, exists);
  QTemporaryDir parent_dir(dir_.path() + "/separators-XXXXXX");
  QVERIFY(parent_dir.isValid());
  const QString parent = QDir(parent_dir.path()).absolutePath();
  const QString run = parent + "/x";
  if (exists) QVERIFY(QDir().mkpath(run));
  const CliResult r = runCli({"import", reference(64) + "/full.pt", "--run-dir", parent + "/" + given});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.out.contains(" into " + run + "\n"), qPrintable(r.out));
  QCOMPARE(entriesOf(parent), QStringList{"x"});
  QCOMPARE(readJson(run + "/config.json")["name"].toString(), QString("x"));
  QCOMPARE(readJson(run + "/config.json")["root"].toString(), parent);
  QCOMPARE(eventsOfType(readEvents(run), "run_started").size(), 1);
  QVERIFY(!onlyCheckpoint(run).isEmpty());
  QVERIFY2(entriesOf(run).filter(".importing-").isEmpty(), qPrintable(entriesOf(run).join(", ")));
}

// Cancelled at each point where the import asks (before the staging folder, after the nets, at
// each chunk of losses and each grid, before the checkpoint, before the rename): an error, and
// nothing left beside the run; asked once more than it asks, it imports.
void TestInterop::cancelledImportLeavesNothing() {
  const QString parent = dir_.path() + "/cancelled";
  QVERIFY(QDir().mkpath(parent));
  int cancellations = 0;
  bool imported = false;
  for (int at = 1; at <= 50 && !imported; ++at) {
    int asked = 0;
    CheckpointImportOptions options;
    options.checkpoint = (reference(64) + "/full.pt").toStdString();
    options.run_dir = (parent + "/run").toStdString();
    options.cancelled = [&asked, at] { return ++asked == at; };
    const auto report = importReferenceCheckpoint(options);
    const QStringList left = entriesOf(parent);
    if (report.ok()) {
      QCOMPARE(left, QStringList{"run"});
      imported = true;
      continue;
    }
    QVERIFY2(QString::fromStdString(report.error()) == parent + "/run: import cancelled; nothing was written",
             report.error().c_str());
    QVERIFY2(left.isEmpty(), qPrintable(QString("cancelled at %1: left %2").arg(at).arg(left.join(", "))));
    ++cancellations;
  }
  QVERIFY(imported);
  QVERIFY2(cancellations >= 5, qPrintable(QString::number(cancellations)));
}

// SIGTERM while the staging folder exists: the import stops at its next step, removes the folder
// and says so (exit 1), or, when the signal came after its last step, finishes (exit 0). Before,
// the signal killed it and the folder stayed. The signal goes when the folder is first seen; an
// import that ends before that is not a failure, only nothing to test.
void TestInterop::signalledImportLeavesNothing_data() {
  QTest::addColumn<int>("signal_number");
  QTest::newRow("SIGTERM") << int(SIGTERM);
  // A closed terminal: SIGHUP killed the import and left its staging folder.
  QTest::newRow("SIGHUP") << int(SIGHUP);
}

void TestInterop::signalledImportLeavesNothing() {
  QFETCH(int, signal_number);
  const QString file = manyLosses();
  QVERIFY(!file.isEmpty());
  const QString parent = dir_.path() + "/signalled-" + QString::number(signal_number);
  QVERIFY(QDir().mkpath(parent));
  const QString run = parent + "/run";
  QProcess process;
  process.start(STREETGAN_CLI, {"import", file, "--run-dir", run});
  QVERIFY(process.waitForStarted(30000));
  bool signalled = false;
  QElapsedTimer guard;  // a hang guard, not a speed limit
  guard.start();
  while (!process.waitForFinished(1) && guard.elapsed() < 300000) {
    if (!QDir(parent).entryList({"run.importing-*"}, QDir::AllEntries | QDir::Hidden).isEmpty()) {
      QVERIFY(::kill(static_cast<pid_t>(process.processId()), signal_number) == 0);
      signalled = true;
      break;
    }
  }
  if (!process.waitForFinished(300000)) {
    process.kill();
    process.waitForFinished();
    QFAIL("the import did not end");
  }
  const QString err = QString::fromUtf8(process.readAllStandardError()).trimmed();
  QVERIFY2(process.exitStatus() == QProcess::NormalExit, qPrintable("killed by the signal; stderr: " + err));
  QVERIFY2(entriesOf(parent).filter(".importing-").isEmpty(), qPrintable("left behind: " + entriesOf(parent).join(", ")));
  if (!signalled) QSKIP("the import finished before its staging folder was seen: nothing was signalled");
  if (process.exitCode() == 0) {
    QCOMPARE(eventsOfType(readEvents(run), "run_finished").size(), 1);
  } else {
    QCOMPARE(process.exitCode(), 1);
    QCOMPARE(err, "streetgan import: " + run + ": import cancelled; nothing was written");
    QCOMPARE(entriesOf(parent), QStringList{});
  }
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
  QTest::newRow("a folder") << "folder.pt" << "not a regular file (a folder, FIFO or device)";
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
    QVERIFY(QDir().mkpath(ref + "/folder.pt"));
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

// A 400 KB file whose last convolution claims ngf 2048: the generator built to compare shapes
// would hold about 10 GB (16384 × 8192 × 4 × 4 floats in its second layer alone). The shapes are
// checked against the file's own tensors first, so the import fails at once with the shape that
// does not fit, here under a 4 GB address-space limit (before, the build ran out of memory).
void TestInterop::netsAreCheckedBeforeTheyAreBuilt() {
  const QString path = dir_.path() + "/huge-ngf.pt";
  const QString failed = runPythonScript(
                                  "import sys, torch\n"
                                  "g = {f'main.{i}.weight': torch.zeros(1, 1, 4, 4) for i in (0, 3, 6, 9)}\n"
                                  "g['main.12.weight'] = torch.zeros(2048, 3, 4, 4)\n"
                                  "torch.save({'epoch': 0, 'G_state_dict': g}, sys.argv[1])\n",
                                  {path});
  QVERIFY2(failed.isEmpty(), qPrintable(failed));
  QProcess import;
  import.setChildProcessModifier([] {
    const rlimit limit{4ull << 30, 4ull << 30};
    ::setrlimit(RLIMIT_AS, &limit);
  });
  import.start(STREETGAN_CLI, {"import", path, "--run-dir", dir_.path() + "/huge-ngf"});
  QVERIFY(import.waitForFinished(120000));
  const QString err = QString::fromUtf8(import.readAllStandardError());
  QCOMPARE(import.exitCode(), 1);
  QVERIFY2(err.contains("G_state_dict does not fit a DCGAN generator (nz 1, ngf 2048, nc 3, 64 px): "
                        "main.0.weight is [1, 1, 4, 4], not [1, 16384, 4, 4]"),
           qPrintable(err));
  QVERIFY(!QFileInfo::exists(dir_.path() + "/huge-ngf"));
}

// img_list of 10,001 one-pixel views of one storage: a 2 MB file that made 10,001 PNG files in the
// run (a larger one, hundreds of thousands). The count of grids is bounded.
void TestInterop::importRefusesTooManyImageGrids() {
  const QString path = dir_.path() + "/many-grids.pt";
  const QString failed = runPythonScript(
                                  "import sys, torch\n"
                                  "sys.path.insert(0, sys.argv[2])\n"
                                  "import reference_dcgan as r\n"
                                  "t = torch.zeros(3, 1, 1)\n"
                                  "torch.save({'epoch': 1, 'G_state_dict': r.generator(12, 6, 3, 64).state_dict(),\n"
                                  "            'img_list': [t] * 10001}, sys.argv[1])\n",
                                  {path, STREETGAN_SOURCE_DIR "/tests/cli"});
  QVERIFY2(failed.isEmpty(), qPrintable(failed));
  const QString parent = dir_.path() + "/many-grids";
  QVERIFY(QDir().mkpath(parent));
  const CliResult r = runCli({"import", path, "--run-dir", parent + "/run"});
  QCOMPARE(r.exit_code, 1);
  QVERIFY2(r.err.contains("img_list holds 10001 image grids; at most 10000 can be imported"), qPrintable(r.err));
  QCOMPARE(entriesOf(parent), QStringList{});
}

STREETGAN_TEST_GUILESS_MAIN(TestInterop)
#include "tst_interop.moc"
