// Every way a `streetgan` command can fail that a CPU can provoke, one row each, through the real
// program: a usage or config error exits 2, a runtime failure (a folder or file the machine
// refuses, a damaged checkpoint or cache, no memory left) exits 1; never an abort or a crash. The
// error is one plain line on stderr naming the file, key or value, after at most the progress
// lines the command prints while it works; nothing half-written is left behind.
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <ATen/CPUGeneratorImpl.h>
#include <QDirIterator>
#include <QRegularExpression>
#include <QtTest>

#include <sys/stat.h>
#include <torch/torch.h>

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>

using namespace streetgan;
using namespace streetgan::test;

namespace {

struct Outcome {
  bool finished = false;  // exited normally (not killed by a signal, not timed out)
  int exit_code = -1;
  QString err;
};

// The size of the shared libraries the program's engine loads (ldd), in KiB: the address space
// it needs before it does anything. 0.5 GiB with Debian's LibTorch 1.13, 3.3 GiB with trixie's
// CUDA 2.6. (streetgan hands the commands these rows run to its engine, in the same process.)
qint64 librariesKib() {
  static const qint64 kib = [] {
    QProcess ldd;
    ldd.start("ldd", {STREETGAN_CLI_ENGINE});
    if (!ldd.waitForFinished(60000)) return qint64(0);
    qint64 bytes = QFileInfo(STREETGAN_CLI_ENGINE).size();
    for (const QString& line : QString::fromLocal8Bit(ldd.readAllStandardOutput()).split('\n')) {
      const qsizetype arrow = line.indexOf("=> /");
      if (arrow < 0) continue;
      const QString path = line.mid(arrow + 3).section(' ', 0, 0);
      bytes += QFileInfo(QFileInfo(path).canonicalFilePath()).size();
    }
    return bytes / 1024;
  }();
  return kib;
}

// Runs `streetgan args…` in `cwd`; with `memory_kib` > 0 under `ulimit -v` of that much above the
// program's libraries (set by bash, which then becomes the program).
Outcome runStreetgan(const QStringList& args, const QString& cwd, int memory_kib) {
  QProcess process;
  process.setWorkingDirectory(cwd);
  if (memory_kib > 0) {
    // Fewer threads and malloc arenas: less address space that depends on the machine's cores.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("OPENBLAS_NUM_THREADS", "1");
    environment.insert("OMP_NUM_THREADS", "1");
    environment.insert("MALLOC_ARENA_MAX", "2");
    process.setProcessEnvironment(environment);
    const qint64 limit = memory_kib + librariesKib();
    process.start("bash", QStringList{"-c", QString("ulimit -v %1 && exec \"$0\" \"$@\"").arg(limit), STREETGAN_CLI} + args);
  } else {
    process.start(STREETGAN_CLI, args);
  }
  Outcome outcome;
  if (!process.waitForStarted(30000)) return outcome;
  if (!process.waitForFinished(300000)) {
    process.kill();
    process.waitForFinished();
    return outcome;
  }
  outcome.finished = process.exitStatus() == QProcess::NormalExit;
  outcome.exit_code = process.exitCode();
  outcome.err = QString::fromUtf8(process.readAllStandardError());
  return outcome;
}

// `pattern` as a whole-line regular expression in which "…" stands for any text.
QRegularExpression linePattern(const QString& pattern) {
  QStringList parts = pattern.split(QString::fromUtf8("…"));
  for (QString& part : parts) part = QRegularExpression::escape(part);
  return QRegularExpression("^" + parts.join(".*") + "$");
}

QStringList filesUnder(const QString& root, const QStringList& name_filters) {
  QStringList found;
  QDirIterator it(root, name_filters, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
  while (it.hasNext()) found << it.next();
  return found;
}

bool writeBytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

// A checkpoint of the original tool with this `epoch` (a decimal of any size), saved by Debian's
// python3-torch as tst_interop's reference_dcgan.py saves them.
bool makeReferenceCheckpoint(const QString& out, const QString& epoch, QString* output) {
  static const char script[] = R"(
import sys, torch
sys.path.insert(0, sys.argv[1])
import reference_dcgan as r
torch.manual_seed(1)
torch.save({'epoch': int(sys.argv[3]), 'G_state_dict': r.generator(12, 6, 3, 64).state_dict()}, sys.argv[2])
)";
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start("/usr/bin/python3", {"-c", script, STREETGAN_SOURCE_DIR "/tests/cli", out, epoch});
  const bool finished = process.waitForFinished(300000);
  *output = QString::fromLocal8Bit(process.readAll());
  return finished && process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
}

bool copyFolder(const QString& from, const QString& to) {
  if (!QDir().mkpath(to)) return false;
  QDirIterator it(from, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    const QString target = to + "/" + QDir(from).relativeFilePath(path);
    if (it.fileInfo().isDir() ? !QDir().mkpath(target) : !QFile::copy(path, target)) return false;
  }
  return true;
}

}  // namespace

class TestCliErrors : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void failures_data();
  void failures();
  void checkpointOnAFullDisk();

private:
  QTemporaryDir dir_;
  QMap<QString, QString> fixtures_;  // "@NAME@" → path
  QString checkpoint_name_;          // the tiny run's checkpoint, relative to the run
};

void TestCliErrors::initTestCase() {
  QVERIFY(dir_.isValid());
  const QString data = makeTinyDataset(dir_.path());
  fixtures_["@DATA@"] = data;

  // A regular file: no folder can be made under it, even by root.
  const QString file = dir_.filePath("plain-file");
  QVERIFY(writeBytes(file, "a regular file\n"));
  fixtures_["@FILE@"] = file;

  // A tiny run of one epoch, and its checkpoint.
  const QString run = dir_.filePath("run");
  const auto trained = runCli(tinyTrainArgs(data, run, 1));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  const QStringList checkpoints = QDir(run + "/checkpoints").entryList({"step-*.pt"}, QDir::Files, QDir::Name);
  QCOMPARE(checkpoints.size(), 1);
  checkpoint_name_ = "checkpoints/" + checkpoints.first();
  fixtures_["@RUN@"] = run;
  fixtures_["@CHECKPOINT@"] = run + "/" + checkpoint_name_;

  // Truncated: the first half of it.
  const QByteArray bytes = readFileBytes(fixtures_["@CHECKPOINT@"]);
  QVERIFY(bytes.size() > 1000);
  fixtures_["@TRUNCATED_CHECKPOINT@"] = dir_.filePath("truncated.pt");
  QVERIFY(writeBytes(fixtures_["@TRUNCATED_CHECKPOINT@"], bytes.left(bytes.size() / 2)));
  fixtures_["@TEXT_CHECKPOINT@"] = dir_.filePath("text.pt");
  QVERIFY(writeBytes(fixtures_["@TEXT_CHECKPOINT@"], "this is not a checkpoint\n"));

  // The wrong shape: the weights of the tiny model (nz 16), stored with a config that says nz 32,
  // as if the config in it had been edited.
  TrainConfig tiny;
  tiny.nz = 16, tiny.ngf = 8, tiny.ndf = 8, tiny.batch_size = 8;
  DcganStep model(tiny, torch::kCPU, Precision::Fp32);
  TrainConfig edited = tiny;
  edited.nz = 32;
  CheckpointState state{{1, 0, 4, 32}, torch::randn({16, 32, 1, 1}),
                        at::make_generator<at::CPUGeneratorImpl>(1).get_state(), edited};
  fixtures_["@WRONG_SHAPE_CHECKPOINT@"] = dir_.filePath("wrong-shape.pt");
  const Status saved = saveCheckpoint(fixtures_["@WRONG_SHAPE_CHECKPOINT@"].toStdString(), model, state);
  QVERIFY2(saved.ok(), saved.error().c_str());

  // A valid cache of the data, a truncated copy, and a file of garbage.
  fixtures_["@CACHE@"] = dir_.filePath("data.sgcache");
  const auto cached = runCli({"cache", "build", "--dataroot", data, "--out", fixtures_["@CACHE@"]});
  QVERIFY2(cached.exit_code == 0, qPrintable(cached.err));
  const QByteArray cache = readFileBytes(fixtures_["@CACHE@"]);
  fixtures_["@TRUNCATED_CACHE@"] = dir_.filePath("truncated.sgcache");
  QVERIFY(writeBytes(fixtures_["@TRUNCATED_CACHE@"], cache.left(cache.size() / 2)));
  fixtures_["@GARBAGE_CACHE@"] = dir_.filePath("garbage.sgcache");
  QVERIFY(writeBytes(fixtures_["@GARBAGE_CACHE@"], QByteArray(4096, 'x')));

  // 256 images: the tiny data set's, 8 copies each.
  fixtures_["@MANY_IMAGES@"] = dir_.filePath("many-images");
  QVERIFY(QDir().mkpath(fixtures_["@MANY_IMAGES@"]));
  const QStringList images = filesUnder(data, {"*.jpg"});
  QCOMPARE(images.size(), 32);
  for (const QString& image : images)
    for (int copy = 0; copy < 8; ++copy)
      QVERIFY(QFile::copy(image, QString("%1/%2-%3").arg(fixtures_["@MANY_IMAGES@"]).arg(copy).arg(QFileInfo(image).fileName())));

  // Checkpoints of the original tool with epochs no run can have: INT64_MAX (it wrapped to a
  // negative epoch, exit 0) and one past the largest (a run has at most 1,000,000 epochs).
  for (const auto& [name, epoch] : {std::pair<QString, QString>{"@HUGE_EPOCH_CHECKPOINT@", "9223372036854775807"},
                                    {"@EPOCH_1000000_CHECKPOINT@", "1000000"}}) {
    const QString path = dir_.filePath(QString(name).remove('@').toLower() + ".pt");
    QString output;
    QVERIFY2(makeReferenceCheckpoint(path, epoch, &output),
             qPrintable("python3-torch could not save the checkpoint (a test dependency):\n" + output));
    fixtures_[name] = path;
  }

  // A data folder whose images are not images.
  fixtures_["@NOT_IMAGES@"] = dir_.filePath("not-images");
  QVERIFY(QDir().mkpath(fixtures_["@NOT_IMAGES@"]));
  for (const char* name : {"a.jpg", "b.jpg", "c.png", "d.jpg"})
    QVERIFY(writeBytes(fixtures_["@NOT_IMAGES@"] + "/" + name, "not an image\n"));
}

void TestCliErrors::failures_data() {
  QTest::addColumn<QString>("setup");         // what the row's folder @ROW@ gets first
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<int>("memoryKib");         // ulimit -v above the program's libraries; 0: none
  QTest::addColumn<int>("code");
  QTest::addColumn<QString>("line");          // the error line; "…" stands for any text
  QTest::addColumn<QStringList>("progress");  // starts of the progress lines allowed before it
  QTest::addColumn<QStringList>("absent");    // paths that must not exist afterwards

  const QString data = "@DATA@";
  const QStringList none;
  const QStringList tiny{"--threads", "1", "--workers", "1", "-t", R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16})"};
  const QStringList trainProgress{"device: ", "run directory: ", "warning: "};

  // Usage and config errors: exit 2, nothing started.
  QTest::newRow("unknown option") << "" << QStringList{"train", "--dataroot", data, "--speed", "9"} << 0 << 2
      << "streetgan train: unknown option '--speed' (see streetgan train --help)" << none << QStringList{};
  QTest::newRow("sample: an empty --checkpoint") << ""
      << QStringList{"sample", "--checkpoint", "", "--out", "@ROW@/grid.png"} << 0 << 2
      << "streetgan sample: option '--checkpoint' needs a value (--checkpoint FILE), not an empty one" << none
      << QStringList{"@ROW@/grid.png"};
  QTest::newRow("parzen: an empty --checkpoint") << ""
      << QStringList{"parzen", "--checkpoint", "", "--dataroot", data} << 0 << 2
      << "streetgan parzen: option '--checkpoint' needs a value (--checkpoint FILE), not an empty one" << none << none;
  QTest::newRow("bench explore: an unknown --device") << ""
      << QStringList{"bench", "explore", "--checkpoint", "@CHECKPOINT@", "--device", "bogus"} << 0 << 2
      << "streetgan bench explore: option '--device': …" << none << none;
  QTest::newRow("export: an unknown --generator") << ""
      << QStringList{"export", "--checkpoint", "@CHECKPOINT@", "--generator", "best", "--out", "@ROW@/G.pt"} << 0 << 2
      << "streetgan export: option '--generator': \"best\" is not a generator; allowed: ema (G's moving average) or "
         "raw (G itself)"
      << none << QStringList{"@ROW@/G.pt", "@ROW@/G.json"};
  QTest::newRow("sample: --generator ema of a run without a moving average") << ""
      << QStringList{"sample", "--checkpoint", "@CHECKPOINT@", "--generator", "ema", "--out", "@ROW@/grid.png"} << 0 << 1
      << "streetgan sample: @CHECKPOINT@: the checkpoint holds no moving average of G (its run had "
         "ema.half_life_images 0); choose the raw generator (--generator raw)"
      << none << QStringList{"@ROW@/grid.png"};
  QTest::newRow("bad config value") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "-t", R"({"batch_size":0})"} << 0 << 2
      << "streetgan train: -t: config key \"batch_size\": 0 is not allowed; allowed: …"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("missing dataroot") << ""
      << QStringList{"train", "--dataroot", "@ROW@/no-such-folder", "--run-dir", "@ROW@/run"} << 0 << 2
      << "streetgan train: @ROW@/no-such-folder: the data folder does not exist or is not a folder"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("dataroot is a file") << ""
      << QStringList{"train", "--dataroot", "@FILE@", "--run-dir", "@ROW@/run"} << 0 << 2
      << "streetgan train: @FILE@: the data folder does not exist or is not a folder"
      << none << QStringList{"@ROW@/run"};
  // The launcher's ranks must fit WORLD_SIZE (1 to 65536): 2 × 40000 was a runtime error of every
  // rank (exit 1, four lines).
  QTest::newRow("train: --nproc 2 --nnodes 40000") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", "2", "--nnodes", "40000"} + tiny
      << 0 << 2
      << QString::fromUtf8("streetgan train: options '--nproc 2 --nnodes 40000' make 80000 ranks; allowed: at most "
                           "65536 in all (--nproc × --nnodes)")
      << none << QStringList{"@ROW@/run"};
  // 1024 ranks on a 2-core machine ran it out of memory: four ranks a core (eight at least).
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int cores = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : QThread::idealThreadCount();
  const int most_ranks = std::max(8, 4 * cores);
  QTest::newRow("train: --nproc past four a core") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", QString::number(most_ranks + 1)} + tiny
      << 0 << 2
      << QString("streetgan train: option '--nproc': %1 ranks are more than this host can run (%2 CPU cores); allowed: at "
                 "most %3, four a core").arg(most_ranks + 1).arg(cores).arg(most_ranks)
      << none << QStringList{"@ROW@/run"};
  // A name that does not resolve kept the ranks retrying for the whole --dist-timeout.
  QTest::newRow("train: --master-addr that does not resolve") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", "2", "--master-addr",
                     "no-such-host.invalid"} + tiny
      << 0 << 2 << QString::fromUtf8("streetgan train: option '--master-addr': cannot resolve 'no-such-host.invalid' (…)")
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("train: --nproc 1024 --nnodes 65536") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", "1024", "--nnodes", "65536",
                     "--node-rank", "65535"} + tiny
      << 0 << 2
      << QString::fromUtf8("streetgan train: options '--nproc 1024 --nnodes 65536' make 67108864 ranks; allowed: at "
                           "most 65536 in all (--nproc × --nnodes)")
      << none << QStringList{"@ROW@/run"};
  // Issue 49: a job on several hosts shares a secret its ranks prove to rank 0's store; the file
  // holding it is the job's key, readable by its owner alone.
  QTest::newRow("train: --nnodes 2 without a job token") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", "1", "--nnodes", "2"} + tiny
      << 0 << 2
      << QString::fromUtf8("streetgan train: --nnodes 2 needs the job's token on every host: --job-token FILE (the same "
                           "file on each host, readable by its owner alone) or the environment variable "
                           "STREETGAN_JOB_TOKEN; make one with: …")
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("train: --job-token file others can read") << "token-file:0644:0123456789abcdef0123456789abcdef"
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", "1", "--nnodes", "2",
                     "--job-token", "@ROW@/job.token"} + tiny
      << 0 << 2
      << "streetgan train: option '--job-token': job token file @ROW@/job.token is open to other users; allow only "
         "its owner (chmod 600 @ROW@/job.token)"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("train: --job-token too short") << "token-file:0600:secret"
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nproc", "1", "--nnodes", "2",
                     "--job-token", "@ROW@/job.token"} + tiny
      << 0 << 2
      << "streetgan train: option '--job-token': job token file @ROW@/job.token holds a job token of 6 characters; "
         "allowed: 16 to 1024 (make one with: …)"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("train: --nnodes past its range") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--nnodes", "65537"} + tiny << 0 << 2
      << "streetgan train: option '--nnodes': '65537' is not allowed; allowed: an integer from 1 to 65536"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("import: --run-dir /") << ""
      << QStringList{"import", "@HUGE_EPOCH_CHECKPOINT@", "--run-dir", "/"} << 0 << 2
      << "streetgan import: option '--run-dir': \"/\" names no folder a run can be created as" << none << QStringList{};
  QTest::newRow("cache of another channel count") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--cache", "@CACHE@", "-t", R"({"nc":1})"}
      << 0 << 2
      << "streetgan train: @CACHE@: the cache holds images decoded with 3 channel(s) at 1/4 size; this config needs "
         "1 channel(s) at 1/4 size …"
      << none << QStringList{"@ROW@/run"};

  // Runtime failures while preparing a run: exit 1.
  QTest::newRow("run folder under a file") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@FILE@/run"} + tiny << 0 << 1
      << "streetgan train: @FILE@/run: cannot create the run folder (Not a directory)" << none << QStringList{};
  QTest::newRow("run folder in /proc") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "/proc/streetgan-tst-cli-errors/run"} + tiny << 0 << 1
      << "streetgan train: /proc/streetgan-tst-cli-errors/run: cannot create the run folder (No such file or directory)"
      << none << QStringList{};
  QTest::newRow("event log cannot be opened") << "events-link-into-proc"
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run"} + tiny << 0 << 1
      << "streetgan train: @ROW@/run/events.jsonl: cannot open the event log (a symbolic link; a run writes only its own files)"
      << none << QStringList{};
  QTest::newRow("resume: event log is a folder") << "run-copy:events-folder"
      << QStringList{"train", "--resume", "--run-dir", "@ROW@/run", "--dataroot", data} << 0 << 1
      << "streetgan train: @ROW@/run/events.jsonl: cannot open the event log (Is a directory)" << none << QStringList{};
  QTest::newRow("resume: truncated checkpoint") << "run-copy:truncated-checkpoint"
      << QStringList{"train", "--resume", "--run-dir", "@ROW@/run", "--dataroot", data} << 0 << 1
      << "streetgan train: @ROW@/run/@CHECKPOINT_NAME@: cannot read the checkpoint (…)" << none << QStringList{};
  QTest::newRow("resume: corrupt cache") << "run-copy"
      << QStringList{"train", "--resume", "--run-dir", "@ROW@/run", "--dataroot", data, "--cache", "@GARBAGE_CACHE@"}
      << 0 << 1 << "streetgan train: @GARBAGE_CACHE@: not a StreetGAN image cache (no SGCACHE1 signature; an unfinished "
                   "build?)"
      << none << QStringList{};
  QTest::newRow("cache of garbage") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--cache", "@GARBAGE_CACHE@"} + tiny << 0 << 1
      << "streetgan train: @GARBAGE_CACHE@: not a StreetGAN image cache (no SGCACHE1 signature; an unfinished build?)"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("truncated cache") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--cache", "@TRUNCATED_CACHE@"} + tiny << 0 << 1
      << "streetgan train: @TRUNCATED_CACHE@: the cache header does not fit the file (truncated or damaged); rebuild "
         "the cache"
      << none << QStringList{"@ROW@/run"};

  // An imported epoch is bounded (INT64_MAX + 1 wrapped to a negative epoch, exit 0).
  QTest::newRow("import: an epoch of INT64_MAX") << ""
      << QStringList{"import", "@HUGE_EPOCH_CHECKPOINT@", "--run-dir", "@ROW@/run"} << 0 << 1
      << "streetgan import: @HUGE_EPOCH_CHECKPOINT@: epoch is 9223372036854775807; a run has at most 1000000 epochs, "
         "so the largest epoch that can be imported is 999999"
      << none << QStringList{"@ROW@/run"};
  QTest::newRow("import: an epoch past the largest run") << ""
      << QStringList{"import", "@EPOCH_1000000_CHECKPOINT@", "--run-dir", "@ROW@/run"} << 0 << 1
      << "streetgan import: @EPOCH_1000000_CHECKPOINT@: epoch is 1000000; a run has at most 1000000 epochs, "
         "so the largest epoch that can be imported is 999999"
      << none << QStringList{"@ROW@/run"};

  // Runtime failures of a run under way: exit 1 after the run's own lines.
  QTest::newRow("resume: checkpoint of the wrong shape") << "run-copy:wrong-shape-checkpoint"
      << QStringList{"train", "--resume", "--run-dir", "@ROW@/run", "--dataroot", data} << 0 << 1
      << "streetgan train: @ROW@/run: no readable checkpoint to resume from" << trainProgress << QStringList{};
  QTest::newRow("data folder of non-images") << ""
      << QStringList{"train", "--dataroot", "@NOT_IMAGES@", "--run-dir", "@ROW@/run"} + tiny << 0 << 1
      << "streetgan train: @NOT_IMAGES@: none of the first 4 images could be read (the first: @NOT_IMAGES@/…: not an "
         "image (no JPEG, PNG, BMP or WebP signature))"
      << trainProgress << QStringList{};
  // lr 9 with weight decay 999 multiplies every weight by -8990 a step: float overflows within
  // about 12 steps, and the run must stop at the first non-finite loss instead of going on (and
  // save nothing: the only checkpoint due is the one after the last epoch).
  QTest::newRow("train: the losses stop being finite") << ""
      << QStringList{"train", "--dataroot", data, "--run-dir", "@ROW@/run", "--epochs", "20", "--threads", "1",
                     "--workers", "1", "-t", R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"lr":9,"weight_decay":999})", "-c", R"({"save_frequency":20})"}
      << 0 << 1
      << "streetgan train: the losses stopped being finite at step … (loss_d …, loss_g …): the model's weights are no "
         "longer usable, so training stops here and no checkpoint of them is written (the last checkpoint holds "
         "the last finite ones); a lower lr or weight_decay may avoid it"
      << (trainProgress + QStringList{"epoch "}) << QStringList{};
  // 256 images of 128 pixels a batch through the default model need several GiB; 2.5 GiB of
  // address space beyond the program's libraries hold the model and the batch itself.
  QTest::newRow("train: a batch too large for the memory") << ""
      << QStringList{"train", "--dataroot", "@MANY_IMAGES@", "--run-dir", "@ROW@/run", "--device", "cpu", "--threads",
                     "1", "--workers", "1", "-t", R"({"batch_size":256,"img_size":128})"}
      << 5 * 512 * 1024 << 1 << "streetgan train: …out of memory: could not allocate … on the CPU" << trainProgress
      << QStringList{};

  // Other commands.
  QTest::newRow("bench: a batch too large") << ""
      << QStringList{"bench", "train", "--preset", "naive-64", "--batch", "65536", "--device", "cpu", "--threads", "1"}
      << 5 * 512 * 1024 << 1 << "streetgan bench train: out of memory: could not allocate … on the CPU" << none
      << QStringList{};
  QTest::newRow("sample: checkpoint of the wrong shape") << ""
      << QStringList{"sample", "--checkpoint", "@WRONG_SHAPE_CHECKPOINT@", "--out", "@ROW@/grid.png"} << 0 << 1
      << "streetgan sample: @WRONG_SHAPE_CHECKPOINT@: the weights do not match the config stored with them "
         "(generator … is [16, …], the config needs [32, …])"
      << none << QStringList{"@ROW@/grid.png"};
  QTest::newRow("sample: truncated checkpoint") << ""
      << QStringList{"sample", "--checkpoint", "@TRUNCATED_CHECKPOINT@", "--out", "@ROW@/grid.png"} << 0 << 1
      << "streetgan sample: @TRUNCATED_CHECKPOINT@: cannot read the checkpoint (…)" << none << QStringList{"@ROW@/grid.png"};
  QTest::newRow("sample: not a checkpoint") << ""
      << QStringList{"sample", "--checkpoint", "@TEXT_CHECKPOINT@", "--out", "@ROW@/grid.png"} << 0 << 1
      << "streetgan sample: @TEXT_CHECKPOINT@: cannot read the checkpoint (…)" << none << QStringList{"@ROW@/grid.png"};
  QTest::newRow("sample: output under a file") << ""
      << QStringList{"sample", "--checkpoint", "@CHECKPOINT@", "--out", "@FILE@/grid.png", "--n", "4"} << 0 << 1
      << "streetgan sample: @FILE@/grid.png: cannot create the file (Not a directory)" << none << QStringList{};
  QTest::newRow("walk: checkpoint of the wrong shape") << ""
      << QStringList{"walk", "--checkpoint", "@WRONG_SHAPE_CHECKPOINT@", "--seeds", "1,2", "--out", "@ROW@/walk.gif"}
      << 0 << 1
      << "streetgan walk: @WRONG_SHAPE_CHECKPOINT@: the weights do not match the config stored with them (…)"
      << none << QStringList{"@ROW@/walk.gif"};
  QTest::newRow("walk: truncated checkpoint") << ""
      << QStringList{"walk", "--checkpoint", "@TRUNCATED_CHECKPOINT@", "--seeds", "1,2", "--out", "@ROW@/walk.gif"}
      << 0 << 1 << "streetgan walk: @TRUNCATED_CHECKPOINT@: cannot read the checkpoint (…)" << none
      << QStringList{"@ROW@/walk.gif"};
  QTest::newRow("walk: output under a file") << ""
      << QStringList{"walk", "--checkpoint", "@CHECKPOINT@", "--seeds", "1,2", "--frames-per-key", "2", "--out",
                     "@FILE@/walk.gif"}
      << 0 << 1 << "streetgan walk: @FILE@/walk.gif: …" << QStringList{"rendered "} << QStringList{};
  // Issue 49: --size 8192 to MP4 took 9.1 GB for 31 frames; refused before encoding when this
  // process cannot hold it (here a 2 GiB address-space limit), saying what it needs.
  QTest::newRow("walk: a video larger than memory") << ""
      << QStringList{"walk", "--checkpoint", "@CHECKPOINT@", "--seeds", "1,2", "--frames-per-key", "30", "--size",
                     "8192", "--out", "@ROW@/walk.mp4"}
      << 2 * 1024 * 1024 << 1
      << "streetgan walk: @ROW@/walk.mp4: exporting 31 frames of 8192x8192 as mp4 needs about 9.5 GiB of memory, and "
         "… is available here; make its long side smaller, or export PNG frames"
      << QStringList{"rendered "} << QStringList{"@ROW@/walk.mp4"};
  QTest::newRow("parzen: checkpoint of the wrong shape") << ""
      << QStringList{"parzen", "--checkpoint", "@WRONG_SHAPE_CHECKPOINT@", "--dataroot", data, "--holdout-fraction", "0.5"}
      << 0 << 1 << "streetgan parzen: @WRONG_SHAPE_CHECKPOINT@: the weights do not match the config stored with them (…)"
      << none << QStringList{};
  QTest::newRow("cache info: truncated cache") << "" << QStringList{"cache", "info", "@TRUNCATED_CACHE@"} << 0 << 1
      << "streetgan cache info: @TRUNCATED_CACHE@: …" << none << QStringList{};
  QTest::newRow("cache build: output under a file") << ""
      << QStringList{"cache", "build", "--dataroot", data, "--out", "@FILE@/data.sgcache"} << 0 << 1
      << "streetgan cache build: @FILE@/data.sgcache: cannot create the cache file (Not a directory)" << none
      << QStringList{};
  QTest::newRow("demo-data: output under a file") << ""
      << QStringList{"demo-data", "--out", "@FILE@/demo", "--cities", "1", "--sequences", "1", "--frames", "1"} << 0 << 1
      << "streetgan demo-data: @FILE@/demo/…: cannot create the folder (Not a directory)" << none << QStringList{};
  QTest::newRow("data preview: not an image") << ""
      << QStringList{"data", "preview", "@NOT_IMAGES@/a.jpg", "--out", "@ROW@/preview.png"} << 0 << 1
      << "streetgan data preview: @NOT_IMAGES@/a.jpg: not an image (no JPEG, PNG, BMP or WebP signature)" << none
      << QStringList{"@ROW@/preview.png"};

  // Careless or hostile values, refused before the work (issue 49).
  QStringList seeds;
  for (int i = 0; i <= 4096; ++i) seeds << QString::number(i);
  QTest::newRow("sample: more seeds than a grid holds") << ""
      << QStringList{"sample", "--checkpoint", "@CHECKPOINT@", "--out", "@ROW@/grid.png", "--seeds", seeds.join(',')} << 0
      << 2 << "streetgan sample: option '--seeds': 4097 seeds; at most 4096 are taken" << none
      << QStringList{"@ROW@/grid.png"};
  QTest::newRow("metrics: --samples at 4096 px without --n") << ""
      << QStringList{"metrics", "--samples", "@MANY_IMAGES@", "--dataroot", "@DATA@", "--img-size", "4096"} << 1024 * 1024
      << 1 << "streetgan metrics: … samples and 10000 training images of 4096 px would take … MiB, more than … MiB; use fewer"
      << none << QStringList{};
  QTest::newRow("export: over the checkpoint it exports") << ""
      << QStringList{"export", "--checkpoint", "@CHECKPOINT@", "--out", "@CHECKPOINT@"} << 0 << 2
      << "streetgan export: @CHECKPOINT@: one of the files of the run run (its config, events and folders are training's); "
         "choose a path outside them" << none
      << QStringList{};
  QTest::newRow("export: its sidecar over the run's config.json") << ""
      << QStringList{"export", "--checkpoint", "@CHECKPOINT@", "--out", "@RUN@/config.pt"} << 0 << 1
      << "streetgan export: @RUN@/config.json: exists and is not the sidecar of an earlier export, so the export would "
         "replace it; it is kept (choose another --out)"
      << none << QStringList{"@RUN@/config.pt"};
}

void TestCliErrors::failures() {
  QFETCH(QString, setup);
  QFETCH(QStringList, args);
  QFETCH(int, memoryKib);
  QFETCH(int, code);
  QFETCH(QString, line);
  QFETCH(QStringList, progress);
  QFETCH(QStringList, absent);

  QTemporaryDir row;
  QVERIFY(row.isValid());
  QMap<QString, QString> names = fixtures_;
  names["@ROW@"] = row.path();
  names["@CHECKPOINT_NAME@"] = checkpoint_name_;
  const auto fill = [&](QString text) {
    for (auto it = names.cbegin(); it != names.cend(); ++it) text.replace(it.key(), it.value());
    return text;
  };
  for (QString& arg : args) arg = fill(arg);
  line = fill(line);
  for (QString& path : absent) path = fill(path);

  const QString run = row.filePath("run");
  if (setup.startsWith("run-copy")) {
    QVERIFY(copyFolder(fixtures_["@RUN@"], run));
    const QString checkpoint = run + "/" + checkpoint_name_;
    if (setup == "run-copy:events-folder") {
      QVERIFY(QFile::remove(run + "/events.jsonl"));
      QVERIFY(QDir().mkpath(run + "/events.jsonl"));
    } else if (setup == "run-copy:truncated-checkpoint") {
      QVERIFY(QFile::remove(checkpoint));
      QVERIFY(QFile::copy(fixtures_["@TRUNCATED_CHECKPOINT@"], checkpoint));
    } else if (setup == "run-copy:wrong-shape-checkpoint") {
      QVERIFY(QFile::remove(checkpoint));
      QVERIFY(QFile::copy(fixtures_["@WRONG_SHAPE_CHECKPOINT@"], checkpoint));
    } else {
      QCOMPARE(setup, QString("run-copy"));
    }
  } else if (setup == "events-link-into-proc") {
    // A log that cannot be created even by root: its path leads into /proc, through a link, which
    // is refused first.
    QVERIFY(QDir().mkpath(run));
    QVERIFY(QFile::link("/proc/streetgan-tst-cli-errors/events.jsonl", run + "/events.jsonl"));
  } else if (setup.startsWith("token-file:")) {
    // token-file:MODE:TOKEN: @ROW@/job.token holding TOKEN, with permissions MODE (octal).
    QFile token(row.filePath("job.token"));
    QVERIFY(token.open(QIODevice::WriteOnly));
    token.write(setup.section(':', 2).toUtf8() + "\n");
    token.close();
    QVERIFY(::chmod(qPrintable(token.fileName()), static_cast<mode_t>(setup.section(':', 1, 1).toInt(nullptr, 8))) == 0);
  } else {
    QVERIFY2(setup.isEmpty(), qPrintable(setup));
  }
  const QStringList checkpoints_before = filesUnder(row.path(), {"*.pt"});

  const Outcome outcome = runStreetgan(args, row.path(), memoryKib);
  QVERIFY2(outcome.finished, qPrintable("no normal exit (a signal or a time-out); stderr: " + outcome.err));
  QVERIFY2(outcome.exit_code != 134 && outcome.exit_code != 139, qPrintable(outcome.err));
  QVERIFY2(outcome.exit_code == code,
           qPrintable(QString("exit code %1, expected %2; stderr: %3").arg(outcome.exit_code).arg(code).arg(outcome.err)));

  // One error line, last; before it only the progress lines this row allows.
  const QStringList lines = outcome.err.split('\n', Qt::SkipEmptyParts);
  QVERIFY2(!lines.isEmpty(), "nothing on stderr");
  const QString error = lines.last();
  QVERIFY2(linePattern(line).match(error).hasMatch(), qPrintable("error line: " + error + "\nexpected: " + line));
  for (int i = 0; i + 1 < lines.size(); ++i) {
    const bool allowed = std::any_of(progress.cbegin(), progress.cend(), [&](const QString& start) {
      return lines[i].startsWith(start);
    });
    QVERIFY2(allowed, qPrintable("unexpected line on stderr: " + lines[i] + "\nstderr: " + outcome.err));
  }

  // Nothing half-written: no temporary files, no core dump, no output.
  for (const QString& root : {row.path(), dir_.path()}) {
    const QStringList temporary = filesUnder(root, {"*.tmp"});
    QVERIFY2(temporary.isEmpty(), qPrintable("left behind: " + temporary.join(", ")));
  }
  QVERIFY2(filesUnder(row.path(), {"core", "core.*"}).isEmpty(), "a core dump");
  for (const QString& path : absent) QVERIFY2(!QFileInfo::exists(path), qPrintable(path + " exists"));
  QCOMPARE(filesUnder(row.path(), {"*.pt"}), checkpoints_before);
}

// A disk that fills as the checkpoint is written (RLIMIT_FSIZE of 1 MB, the tiny checkpoint is
// about 1.3 MB): LibTorch's zip writer threw from its destructor and the program aborted (exit
// 134) with a half-written temporary file. Now: one line, exit 1, the run marked failed, no
// temporary file, no checkpoint.
void TestCliErrors::checkpointOnAFullDisk() {
  const QString run = dir_.filePath("full-disk");
  QProcess train;
  train.setChildProcessModifier([] {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG, as on a full disk
    const rlimit limit{1 << 20, 1 << 20};
    ::setrlimit(RLIMIT_FSIZE, &limit);
  });
  train.start(STREETGAN_CLI, tinyTrainArgs(fixtures_["@DATA@"], run, 1));
  QVERIFY(train.waitForFinished(300000));
  const QString err = QString::fromUtf8(train.readAllStandardError());
  QCOMPARE(train.exitStatus(), QProcess::NormalExit);
  QVERIFY2(train.exitCode() == 1, qPrintable(err));
  QVERIFY2(err.contains("cannot write the file") && err.contains("the previous checkpoints are kept"), qPrintable(err));
  QVERIFY2(QDir(run + "/checkpoints").entryList(QDir::Files).isEmpty(),
           qPrintable(QDir(run + "/checkpoints").entryList(QDir::Files).join(", ")));
  const auto finished = eventsOfType(readEvents(run), "run_finished");
  QVERIFY(!finished.isEmpty());
  QCOMPARE(finished.last().value("status").toString(), QString("failed"));
}

STREETGAN_TEST_GUILESS_MAIN(TestCliErrors)
#include "tst_cli_errors.moc"
