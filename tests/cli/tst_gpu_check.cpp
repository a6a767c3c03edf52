// packaging/gpu-check.sh as far as a machine without a GPU can run it: its options and their
// errors, the "no GPU visible" exit, the LibTorch it finds (--torch, the installed PyTorch's,
// Debian's) and its refusal of one without CUDA, the --deps bundle checks, and the plan --dry-run
// prints. nvidia-smi and python3 are stand-ins on PATH (a GPU that is not there, a PyTorch that
// points at a LibTorch made of empty files); nothing is built.
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

namespace {

void writeStandIn(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
  f.close();
  QVERIFY(f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
}

void touch(const QString& path) {
  QVERIFY(QDir().mkpath(QFileInfo(path).path()));
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
}

}  // namespace

class TestGpuCheck : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString root = dir_.path();
    // LibTorch prefixes as TorchConfig.cmake looks for them: a CUDA build and a CPU-only one.
    touch(root + "/cuda-torch/share/cmake/Torch/TorchConfig.cmake");
    touch(root + "/cuda-torch/lib/libtorch_cuda.so");
    touch(root + "/cpu-torch/share/cmake/Torch/TorchConfig.cmake");
    touch(root + "/cpu-torch/lib/libtorch_cpu.so");
    QFile garbage(root + "/not-a-bundle.tar.xz");
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write("this is not an xz archive\n");
    garbage.close();
    for (const char* bin : {"no-gpu", "one-gpu", "two-gpus"}) QVERIFY(QDir().mkpath(root + "/" + bin));
    // Archives: one of something else, and a bundle with a link that leads out of it.
    touch(root + "/other/readme.txt");
    touch(root + "/victim/libc.so.6");
    QVERIFY(QDir().mkpath(root + "/escaping/usr/lib"));
    QFile readme(root + "/escaping/usr/README.streetgan");
    QVERIFY(readme.open(QIODevice::WriteOnly));
    readme.write("stubs (every function traps): libc.so.6\n");
    readme.close();
    QVERIFY(QFile::link(root + "/victim/libc.so.6", root + "/escaping/usr/lib/libc.so.6"));
    for (const char* name : {"other", "escaping"}) {
      QProcess tar;
      tar.start("tar", {"-C", root + "/" + name, "-cJf", root + "/" + name + ".tar.xz", "."});
      QVERIFY(tar.waitForFinished(60000) && tar.exitCode() == 0);
    }
    writeStandIn(root + "/no-gpu/nvidia-smi",
                "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n");
    const QByteArray gpu =
        "#!/bin/sh\ncase \"$*\" in\n  -L) echo 'GPU 0: Stand-in GPU (UUID: GPU-0)'; [ \"$GPUS\" = 2 ] && echo 'GPU 1: Stand-in GPU (UUID: GPU-1)';;\n"
        "  *query-gpu=name*) echo 'Stand-in GPU';;\n  *driver_version*) echo '999.1';;\n  *compute_cap*) echo '9.0';;\nesac\nexit 0\n";
    writeStandIn(root + "/one-gpu/nvidia-smi", QByteArray(gpu).replace("$GPUS", "1"));
    writeStandIn(root + "/two-gpus/nvidia-smi", QByteArray(gpu).replace("$GPUS", "2"));
    // python3 stand-ins: a PyTorch whose CMake prefix is the CUDA LibTorch above, and none.
    QVERIFY(QDir().mkpath(root + "/pytorch"));
    writeStandIn(root + "/pytorch/python3", "#!/bin/sh\necho '" + root.toUtf8() + "/cuda-torch/share/cmake'\n");
    QVERIFY(QDir().mkpath(root + "/no-pytorch"));
    writeStandIn(root + "/no-pytorch/python3", "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n");
  }

  void options_data() {
    QTest::addColumn<QString>("bins");  // stand-in folders put first on PATH, ':'-separated
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("expected");  // a regular expression over stdout and stderr together

    const QString out = "@ROOT@/out";
    QTest::newRow("help") << "" << QStringList{"--help"} << 0 << "One command that proves a GPU host(.|\\n)*--dry-run";
    QTest::newRow("unknown option") << "" << QStringList{"--fast"} << 2
                                    << "^gpu-check: unknown option '--fast' \\(see --help\\)\\n$";
    QTest::newRow("--out without its folder") << "" << QStringList{"--out"} << 2
                                              << "^gpu-check: option '--out' needs a value \\(--out DIR\\), not an empty one\\n$";
    QTest::newRow("an empty --torch") << "" << QStringList{"--torch", ""} << 2
                                      << "^gpu-check: option '--torch' needs a value \\(--torch DIR\\), not an empty one\\n$";
    QTest::newRow("--jobs 0") << "" << QStringList{"--jobs", "0", "--out", out} << 2
                              << "^gpu-check: --jobs must be a number from 1 to 1024, not '0'\\n$";
    QTest::newRow("--jobs not a number") << "" << QStringList{"--jobs", "all", "--out", out} << 2
                                         << "^gpu-check: --jobs must be a number from 1 to 1024, not 'all'\\n$";
    QTest::newRow("--jobs too many") << "" << QStringList{"--jobs", "99999999999999999999", "--out", out} << 2
                                     << "^gpu-check: --jobs must be a number from 1 to 1024, not '99999999999999999999'\\n$";
    QTest::newRow("an output folder it cannot write") << "@ROOT@/one-gpu" << QStringList{"--out", "/proc/streetgan-gpu-check"} << 2
                                                      << "^gpu-check: --out: cannot write to the folder '/proc/streetgan-gpu-check'\\n$";
    QTest::newRow("no GPU visible") << "@ROOT@/no-gpu" << QStringList{"--out", "@ROOT@/no-gpu-out"} << 3
                                    << "^gpu-check: no NVIDIA GPU is visible \\(nvidia-smi is missing or lists none\\); this script proves a GPU host\\n$";
    QTest::newRow("--torch without LibTorch") << "@ROOT@/one-gpu" << QStringList{"--out", out, "--torch", "@ROOT@/no-such"} << 2
                                              << "gpu-check: --torch: no LibTorch CMake files \\(TorchConfig.cmake\\) under '@ROOT@/no-such'";
    QTest::newRow("a LibTorch without CUDA") << "@ROOT@/one-gpu" << QStringList{"--out", out, "--torch", "@ROOT@/cpu-torch"} << 2
                                             << "gpu-check: the LibTorch in @ROOT@/cpu-torch \\(from --torch\\) has no CUDA";
    QTest::newRow("the installed PyTorch's LibTorch") << "@ROOT@/one-gpu:@ROOT@/pytorch" << QStringList{"--out", out, "--dry-run"} << 0
        << "GPU: Stand-in GPU x 1, driver 999.1(.|\\n)*LibTorch: @ROOT@/cuda-torch/share/cmake \\(from the installed PyTorch\\)"
           "(.|\\n)*benchmark: naive-64 and safe-128 at batch 256 and 1024 in fp32, bf16 and fp16, 5 runs each";
    // Without PyTorch it falls back to Debian's LibTorch, which on a machine with Debian's CPU
    // build (this one) is refused for want of CUDA, and elsewhere is missing or is the CUDA one.
    QTest::newRow("no PyTorch: Debian's LibTorch") << "@ROOT@/one-gpu:@ROOT@/no-pytorch" << QStringList{"--out", out, "--dry-run"} << -1
        << "(from Debian's libtorch|no LibTorch found: give --torch DIR)";
    QTest::newRow("two GPUs: NCCL, --quick") << "@ROOT@/two-gpus" << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--quick", "--dry-run"} << 0
        << "GPU: Stand-in GPU x 2(.|\\n)*LibTorch: @ROOT@/cuda-torch \\(from --torch\\)(.|\\n)*resume; 2 ranks over NCCL"
           "(.|\\n)*benchmark: 3 configurations, 3 runs each \\(--quick\\)(.|\\n)*output: @ROOT@/out";
    QTest::newRow("--no-bench") << "@ROOT@/one-gpu" << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--no-bench", "--dry-run"} << 0
                                << "benchmark: none \\(--no-bench\\)";
    // The suites that read STREETGAN_TEST_DEVICE run on the GPU: found in the sources, so a new one joins.
    QTest::newRow("the device suites") << "@ROOT@/one-gpu" << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--dry-run"} << 0
        << "\\nsuites on cuda: [a-z_ ]*tst_graphed_train_step[a-z_ ]*tst_training_step[a-z_ ]*\\n"
           "(.|\\n)*train on cuda in fp32, bf16, fp16 and with CUDA graphs"
           "(.|\\n)*naive-64 256 bf16 also with torch.compile, CUDA graphs and real batches";
    QTest::newRow("--no-suites") << "@ROOT@/one-gpu" << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--no-suites", "--dry-run"} << 0
                                 << "\\nsuites: none \\(--no-suites\\)\\n";
    QTest::newRow("--deps: a missing file") << "@ROOT@/one-gpu"
        << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--deps", "@ROOT@/no-such.tar.xz", "--dry-run"} << 2
        << "gpu-check: --deps: no file '@ROOT@/no-such.tar.xz'";
    QTest::newRow("--deps: not an archive") << "@ROOT@/one-gpu"
        << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--deps", "@ROOT@/not-a-bundle.tar.xz", "--dry-run"} << 2
        << "^gpu-check: --deps: '@ROOT@/not-a-bundle.tar.xz' is not a bundle of packaging/gpu-deps.sh \\(not an xz tar archive\\)\\n$";
    QTest::newRow("--deps: an archive of something else") << "@ROOT@/one-gpu"
        << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--deps", "@ROOT@/other.tar.xz", "--dry-run"} << 2
        << "is not a bundle of packaging/gpu-deps.sh \\(no usr/README.streetgan and usr/lib\\)\\n$";
    // A bundle whose usr/lib/libc.so.6 links to a file outside it: removing that "stub" (the
    // host has libc) must never reach the file it leads to.
    QTest::newRow("--deps: a link out of the bundle") << "@ROOT@/one-gpu"
        << QStringList{"--out", out, "--torch", "@ROOT@/cuda-torch", "--deps", "@ROOT@/escaping.tar.xz", "--dry-run"} << 2
        << "is not a bundle of packaging/gpu-deps.sh \\(a link leads out of it: usr/lib/libc.so.6\\)\\n$";
    QTest::newRow("--out -: a folder named '-'") << "@ROOT@/one-gpu"
        << QStringList{"--out", "-", "--torch", "@ROOT@/cuda-torch", "--dry-run"} << 0 << "\\noutput: @ROOT@/-\\n$";
  }

  void options() {
    QFETCH(QString, bins);
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, expected);
    const QString root = dir_.path();
    for (QString& a : args) a.replace("@ROOT@", root);
    expected.replace("@ROOT@", QRegularExpression::escape(root));
    bins.replace("@ROOT@", root);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PATH", (bins.isEmpty() ? QString() : bins + ":") + env.value("PATH"));
    QProcess script;
    script.setProcessEnvironment(env);
    script.setProcessChannelMode(QProcess::MergedChannels);
    script.setWorkingDirectory(root);
    script.start("bash", QStringList{QStringLiteral(STREETGAN_SOURCE_DIR) + "/packaging/gpu-check.sh"} + args);
    QVERIFY(script.waitForStarted());
    QVERIFY2(script.waitForFinished(120000), "gpu-check.sh did not finish in 2 minutes");
    const QString output = QString::fromUtf8(script.readAll());
    if (code >= 0) QVERIFY2(script.exitCode() == code, qPrintable(QString("exit %1: %2").arg(script.exitCode()).arg(output)));
    else QVERIFY2(script.exitCode() == 0 || script.exitCode() == 2, qPrintable(output));
    QVERIFY2(QRegularExpression(expected).match(output).hasMatch(), qPrintable("output was: " + output));
    // Whatever it refused, it built nothing, and what it was given stays as it was.
    QVERIFY(!QFileInfo::exists(root + "/out/work/build"));
    QVERIFY(QFileInfo::exists(root + "/victim/libc.so.6"));
    QVERIFY(!QFileInfo::exists(root + "/no-gpu-out"));
    // A dry run or a refusal leaves no output folder it made.
    QVERIFY2(!QFileInfo::exists(root + "/out") && !QFileInfo::exists(root + "/-"), qPrintable("it left its output folder: " + output));
  }

  // An earlier check's results in --out survive a dry run (its log and summary were truncated).
  void dryRunKeepsAnEarlierCheck() {
    const QString root = dir_.path();
    QVERIFY(QDir().mkpath(root + "/earlier/work/build"));
    for (const QString name : {"/earlier/summary.md", "/earlier/gpu-check.log", "/earlier/work/build/kept"}) {
      QFile file(root + name);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write("an earlier check\n");
    }
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PATH", root + "/one-gpu:" + env.value("PATH"));
    QProcess script;
    script.setProcessEnvironment(env);
    script.setProcessChannelMode(QProcess::MergedChannels);
    script.start("bash", {QStringLiteral(STREETGAN_SOURCE_DIR) + "/packaging/gpu-check.sh", "--out", root + "/earlier",
                          "--torch", root + "/cuda-torch", "--dry-run"});
    QVERIFY(script.waitForFinished(120000));
    QCOMPARE(script.exitCode(), 0);
    for (const QString name : {"/earlier/summary.md", "/earlier/gpu-check.log", "/earlier/work/build/kept"}) {
      QFile file(root + name);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QCOMPARE(file.readAll(), QByteArray("an earlier check\n"));
    }
  }

  // bench/bench_table.py, which gpu-check.sh uses to make one table of the per-configuration
  // tables bench_train.py writes. The fp32 and bf16 rows are as the H100 lease recorded them
  // (2026-11-26, bench/README.md); the third adds the headline's torch.compile and real-data
  // columns (values made up for the test), which the others lack.
  void tableFormatterOnARecordedSample() {
    const QString root = dir_.path();
    const QByteArray header = "| preset | batch | precision | streetgan img/s | pytorch eager img/s | ratio | pytorch peak MiB |\n"
                              "|---|---|---|---|---|---|---|\n";
    writeStandIn(root + "/t1.md", header + "| naive-64 | 256 | fp32 | 28027 | 27137 | 1.03 | 2061 |\n");
    writeStandIn(root + "/t2.md", header + "| naive-64 | 256 | bf16 | 33969 | 30334 | 1.12 | 475 |\n");
    writeStandIn(root + "/t3.md",
                "| preset | batch | precision | streetgan img/s | pytorch eager img/s | ratio | torch.compile img/s | ratio | "
                "real data share | pytorch peak MiB |\n|---|---|---|---|---|---|---|---|---|---|\n"
                "| naive-64 | 1024 | bf16 | 74154 | 39640 | 1.87 | 52000 | 1.43 | 96% | 1744 |\n");
    writeStandIn(root + "/broken.md", "| preset | batch |\n|---|---|\n| naive-64 |\n");
    const QString formatter = QStringLiteral(STREETGAN_SOURCE_DIR) + "/bench/bench_table.py";
    QProcess merge;
    merge.start("/usr/bin/python3", {formatter, root + "/t1.md", root + "/t2.md", root + "/t3.md"});
    QVERIFY(merge.waitForFinished(60000));
    QCOMPARE(merge.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(merge.readAllStandardOutput()),
             QString("| preset | batch | precision | streetgan img/s | pytorch eager img/s | ratio | torch.compile img/s | ratio | "
                     "real data share | pytorch peak MiB |\n"
                     "|---|---|---|---|---|---|---|---|---|---|\n"
                     "| naive-64 | 256 | fp32 | 28027 | 27137 | 1.03 |  |  |  | 2061 |\n"
                     "| naive-64 | 256 | bf16 | 33969 | 30334 | 1.12 |  |  |  | 475 |\n"
                     "| naive-64 | 1024 | bf16 | 74154 | 39640 | 1.87 | 52000 | 1.43 | 96% | 1744 |\n"));
    QProcess broken;
    broken.start("/usr/bin/python3", {formatter, root + "/t1.md", root + "/broken.md"});
    QVERIFY(broken.waitForFinished(60000));
    QCOMPARE(broken.exitCode(), 2);
    QCOMPARE(QString::fromUtf8(broken.readAllStandardError()),
             "bench_table.py: " + root + "/broken.md: its header has 2 cells, its row 1\n");
    QVERIFY(broken.readAllStandardOutput().isEmpty());
  }

private:
  QTemporaryDir dir_;
};

STREETGAN_TEST_GUILESS_MAIN(TestGpuCheck)
#include "tst_gpu_check.moc"
