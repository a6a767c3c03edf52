// `streetgan export --format onnx` through the real program: a trained run (its moving average and
// its raw G) and the original tool's generators imported at 64 and 128 px, each checked by ONNX's
// own checker (Debian's python3-onnx) and run by ONNX Runtime (onnxruntime-node from npm) on the
// same latents as `streetgan sample --latents ... --out FILE.npy`, to 1e-4; the bad input export
// and `sample --latents` refuse with one line, writing nothing.
#include "core/formats/npy_array.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

#include <sys/stat.h>

using namespace streetgan;
using namespace streetgan::test;

namespace {

// The original tool's generator (tests/cli/reference_dcgan.py) with random weights and BatchNorm
// statistics, saved as its slim checkpoint: {'epoch', 'G_state_dict'}.
const char kMakeReference[] = R"(
import sys, torch
sys.path.insert(0, sys.argv[1])
import reference_dcgan as r
torch.manual_seed(int(sys.argv[4]))
g = r.generator(12, 6, 3, int(sys.argv[3]))
for m in g.modules():
    if isinstance(m, torch.nn.BatchNorm2d):
        m.running_mean.uniform_(-0.5, 0.5); m.running_var.uniform_(0.5, 2.0)
        m.weight.data.uniform_(0.5, 1.5); m.bias.data.uniform_(-0.2, 0.2)
torch.save({'epoch': 1, 'G_state_dict': g.state_dict()}, sys.argv[2])
)";

// ONNX's checker (full_check: shapes inferred too), then the model's metadata as JSON.
const char kCheckModel[] = R"(
import json, sys, onnx
model = onnx.load(sys.argv[1])
onnx.checker.check_model(model, full_check=True)
print(json.dumps({p.key: p.value for p in model.metadata_props}))
)";

QJsonObject jsonLine(const QString& text) { return QJsonDocument::fromJson(text.trimmed().toUtf8()).object(); }

bool writeLatents(const QString& path, int count, int nz, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(static_cast<std::size_t>(count) * nz);
  for (float& v : values) v = normal(random);
  QFile file(path);
  const std::string bytes = NpyArray::toBytes({count, nz}, values.data(), values.size());
  return file.open(QIODevice::WriteOnly) && file.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
}

}  // namespace

class TestOnnxExport : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void runtimeGivesSampleImages_data();
  void runtimeGivesSampleImages();
  void badExportRefused_data();
  void badExportRefused();
  void sampleRefusesToReplaceItsInputs();
  void badLatentsRefused_data();
  void badLatentsRefused();

private:
  QString importReference(int size, unsigned seed);
  QTemporaryDir dir_;
  QString trained_, imported64_, imported128_;
};

QString TestOnnxExport::importReference(int size, unsigned seed) {
  const QString file = dir_.filePath(QString("reference-%1.pt").arg(size));
  const CliResult made = runProgram("/usr/bin/python3", {"-c", kMakeReference, STREETGAN_SOURCE_DIR "/tests/cli", file,
                                                          QString::number(size), QString::number(seed)});
  if (made.exit_code != 0) return "python3: " + made.out + made.err;
  const QString run = dir_.filePath(QString("imported-%1").arg(size));
  const CliResult imported = runCli({"import", file, "--run-dir", run, "--batch-size", "4"});
  return imported.exit_code == 0 ? run : "import: " + imported.err;
}

void TestOnnxExport::initTestCase() {
  QVERIFY2(QDir(STREETGAN_NPM_MODULES "/onnxruntime-node").exists(),
           "onnxruntime-node is not in " STREETGAN_NPM_MODULES ": the build runs npm ci (web/package-lock.json) when npm is installed");
  const QString data = makeTinyDataset(dir_.filePath("data"));
  QStringList args = tinyTrainArgs(data, dir_.filePath("trained"), 1);
  args[args.indexOf("-t") + 1] = R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"ema":{"half_life_images":50}})";
  const CliResult trained = runCli(args);
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  trained_ = dir_.filePath("trained");
  imported64_ = importReference(64, 3);
  QVERIFY2(QDir(imported64_).exists(), qPrintable(imported64_));
  imported128_ = importReference(128, 4);
  QVERIFY2(QDir(imported128_).exists(), qPrintable(imported128_));
}

void TestOnnxExport::runtimeGivesSampleImages_data() {
  QTest::addColumn<QString>("which");
  QTest::addColumn<QStringList>("options");
  QTest::addColumn<QString>("generator");  // what the model's metadata says
  QTest::addColumn<int>("nz");
  QTest::addColumn<int>("size");
  QTest::newRow("trained run, moving average") << "trained" << QStringList{} << "ema" << 16 << 64;
  QTest::newRow("trained run, raw G, opset 13") << "trained" << QStringList{"--generator", "raw", "--opset", "13"} << "raw" << 16 << 64;
  QTest::newRow("trained run, fixed batch") << "trained" << QStringList{"--batch", "5"} << "ema" << 16 << 64;
  QTest::newRow("original tool's G, 64 px") << "imported64" << QStringList{} << "raw" << 12 << 64;
  QTest::newRow("original tool's G, 128 px") << "imported128" << QStringList{"--format", "onnx"} << "raw" << 12 << 128;
}

void TestOnnxExport::runtimeGivesSampleImages() {
  QFETCH(QString, which);
  QFETCH(QStringList, options);
  QFETCH(QString, generator);
  QFETCH(int, nz);
  QFETCH(int, size);
  const QString run = which == "trained" ? trained_ : which == "imported64" ? imported64_ : imported128_;
  const QString tag = QString(QTest::currentDataTag()).replace(QRegularExpression("[^a-z0-9]+"), "-");
  const QString model = dir_.filePath(tag + (options.contains("--format") ? ".model" : ".onnx"));
  CliResult r = runCli(QStringList{"export", "--checkpoint", run, "--out", model} + options);
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.out.contains("as ONNX to " + model), qPrintable(r.out));

  r = runProgram("/usr/bin/python3", {"-c", kCheckModel, model});
  QVERIFY2(r.exit_code == 0, qPrintable("onnx.checker: " + r.out + r.err));
  const QJsonObject metadata = jsonLine(r.out);
  QCOMPARE(metadata["streetgan.format"].toString(), QString("streetgan-generator-onnx"));
  QCOMPARE(metadata["streetgan.generator"].toString(), generator);
  QCOMPARE(metadata["streetgan.img_size"].toString(), QString::number(size));
  QCOMPARE(QJsonDocument::fromJson(metadata["streetgan.config"].toString().toUtf8()).object()["nz"].toInt(), nz);

  const QString latents = dir_.filePath(tag + "-z.npy"), ours = dir_.filePath(tag + "-ours.npy");
  QVERIFY(writeLatents(latents, 5, nz, 11));
  const QStringList raw = options.contains("raw") ? QStringList{"--generator", "raw"} : QStringList{};
  r = runCli(QStringList{"sample", "--checkpoint", run, "--latents", latents, "--out", ours} + raw);
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY2(r.err.contains("generator " + generator), qPrintable(r.err));

  qputenv("NODE_PATH", STREETGAN_NPM_MODULES);
  r = runProgram("node", {STREETGAN_SOURCE_DIR "/tests/cli/onnx_runtime_check.js", model, latents, ours});
  QVERIFY2(r.exit_code == 0, qPrintable("node: " + r.out + r.err));
  const QJsonObject check = jsonLine(r.out);
  QCOMPARE(check["inputs"].toArray(), QJsonArray({"z"}));
  QCOMPARE(check["outputs"].toArray(), QJsonArray({"image"}));
  QCOMPARE(check["dims"].toArray(), QJsonArray({5, 3, size, size}));
  QVERIFY2(check["largest_difference"].toDouble() <= 1e-4, qPrintable(r.out));
}

void TestOnnxExport::badExportRefused_data() {
  QTest::addColumn<QStringList>("options");
  QTest::addColumn<QString>("out");  // under the test folder
  QTest::addColumn<int>("exit_code");
  QTest::addColumn<QString>("message");
  QTest::newRow("unknown format") << QStringList{"--format", "tflite"} << "g.onnx" << 2
      << "streetgan export: option '--format': unknown format \"tflite\"; allowed: pytorch, onnx";
  QTest::newRow("opset too old") << QStringList{"--opset", "12"} << "g.onnx" << 2
      << "streetgan export: option '--opset': '12' is not allowed; allowed: an integer from 13 to 17";
  QTest::newRow("opset too new") << QStringList{"--opset", "18"} << "g.onnx" << 2
      << "streetgan export: option '--opset': '18' is not allowed; allowed: an integer from 13 to 17";
  QTest::newRow("batch 0") << QStringList{"--batch", "0"} << "g.onnx" << 2
      << "streetgan export: option '--batch': '0' is not allowed; allowed: an integer from 1 to 4096 (or dynamic)";
  QTest::newRow("batch words") << QStringList{"--batch", "many"} << "g.onnx" << 2
      << "streetgan export: option '--batch': 'many' is not allowed";
  QTest::newRow("opset for PyTorch") << QStringList{"--opset", "17"} << "g.pt" << 2
      << "streetgan export: --opset goes with --format onnx";
  QTest::newRow("not a generator") << QStringList{"--checkpoint", "@DIR@/notes.pt"} << "g.onnx" << 2 << "notes.pt";
  QTest::newRow("out is a link") << QStringList{} << "link.onnx" << 2 << "link.onnx: a symbolic link; give the file itself";
  QTest::newRow("out is a FIFO") << QStringList{} << "fifo.onnx" << 2 << "fifo.onnx: not a regular file";
  QTest::newRow("out empty") << QStringList{} << "@EMPTY@" << 2 << "streetgan export: option '--out' needs a file";
  QTest::newRow("out among the run's checkpoints") << QStringList{} << "@RUN@/checkpoints/step-0000099999.pt" << 2
      << "step-0000099999.pt: one of the files of the run trained (its config, events and folders are training's)";
  QTest::newRow("out is the run's config") << QStringList{"--format", "onnx"} << "@RUN@/config.json" << 2
      << "config.json: one of the files of the run trained";
}

void TestOnnxExport::badExportRefused() {
  QFETCH(QStringList, options);
  QFETCH(QString, out);
  QFETCH(int, exit_code);
  QFETCH(QString, message);
  QTemporaryDir dir;
  QFile notes(dir.filePath("notes.pt"));
  QVERIFY(notes.open(QIODevice::WriteOnly) && notes.write("not a checkpoint\n") > 0);
  notes.close();
  QVERIFY(QFile::link(dir.filePath("elsewhere.onnx"), dir.filePath("link.onnx")));
  QCOMPARE(::mkfifo(qPrintable(dir.filePath("fifo.onnx")), 0600), 0);
  const QStringList before = QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System);
  const QByteArray config = readFileBytes(trained_ + "/config.json");
  const QString path = out == "@EMPTY@" ? QString() : out.startsWith("@RUN@") ? QString(out).replace("@RUN@", trained_) : dir.filePath(out);
  QStringList args{"export", "--out", path};
  for (const QString& option : options) args << QString(option).replace("@DIR@", dir.path());
  if (!args.contains("--checkpoint")) args << "--checkpoint" << trained_;
  const CliResult r = runCli(args, 120000);
  QCOMPARE(r.exit_code, exit_code);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QCOMPARE(r.err.trimmed().count('\n'), r.err.contains("using ") ? 1 : 0);  // one line (and the checkpoint used)
  QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System), before);
  QVERIFY(!QFile::exists(trained_ + "/checkpoints/step-0000099999.pt"));
  QCOMPARE(readFileBytes(trained_ + "/config.json"), config);
}

void TestOnnxExport::sampleRefusesToReplaceItsInputs() {
  QTemporaryDir dir;
  const QString latents = dir.filePath("z.npy");
  QVERIFY(writeLatents(latents, 2, 16, 5));
  const QByteArray before = readFileBytes(latents);
  const QString checkpoint = QDir(trained_ + "/checkpoints").entryInfoList({"*.pt"}, QDir::Files, QDir::Name).last().filePath();
  const QByteArray weights = readFileBytes(checkpoint);
  for (const QString& out : {latents, checkpoint}) {
    const CliResult r = runCli({"sample", "--checkpoint", checkpoint, "--latents", latents, "--out", out}, 120000);
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains(out + ": "), qPrintable(r.err));
  }
  QCOMPARE(readFileBytes(latents), before);
  QCOMPARE(readFileBytes(checkpoint), weights);
}

void TestOnnxExport::badLatentsRefused_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<QString>("message");
  const auto npy = [](std::vector<std::int64_t> shape, std::vector<float> values) {
    const std::string bytes = NpyArray::toBytes(shape, values.data(), values.size());
    return QByteArray(bytes.data(), qsizetype(bytes.size()));
  };
  QTest::newRow("wrong width") << npy({2, 3}, std::vector<float>(6, 0.5f)) << "the latents must be an array of shape (N, 16)";
  QTest::newRow("not a number") << npy({1, 16}, std::vector<float>(16, std::nanf(""))) << "element 0 is not a finite number (NaN or infinity)";
  QTest::newRow("not NumPy") << QByteArray("z = [1, 2, 3]\n") << "not a NumPy .npy file";
  QTest::newRow("shape past the data") << npy({1, 16}, std::vector<float>(16, 0.f)).replace("(1, 16)", "(9, 16)")
                                        << "the header's shape needs more values than the file's 16";
}

void TestOnnxExport::badLatentsRefused() {
  QFETCH(QByteArray, bytes);
  QFETCH(QString, message);
  QTemporaryDir dir;
  QFile file(dir.filePath("z.npy"));
  QVERIFY(file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size());
  file.close();
  const CliResult r = runCli({"sample", "--checkpoint", trained_, "--latents", file.fileName(), "--out", dir.filePath("out.npy")}, 120000);
  QCOMPARE(r.exit_code, 2);
  QVERIFY2(r.err.contains("streetgan sample: --latents: " + file.fileName() + ": " + message), qPrintable(r.err));
  QVERIFY(!QFile::exists(dir.filePath("out.npy")));
}

STREETGAN_TEST_GUILESS_MAIN(TestOnnxExport)
#include "tst_onnx_export.moc"
