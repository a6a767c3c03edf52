// Crafted checkpoints, made by the test from a real one (craft_checkpoint.py changes one record of
// its zip, or its directory): every command that loads a checkpoint refuses each with one line naming the file and
// what is wrong, exit 1, and writes nothing; none crashes (LibTorch's own reader, given these,
// crashed with SIGSEGV or would run the archive's TorchScript). `train --resume` skips a crafted
// newest checkpoint with a warning and resumes from the one before.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QScopeGuard>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <sys/types.h>

using namespace streetgan::test;

class HostileCheckpointTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;
  QString data_, run_, checkpoint_;

  // The real checkpoint `checkpoint_` with one record changed as `variant` says, at `out`.
  static QString craft(const QString& source, const QString& out, const QString& variant) {
    QProcess python;
    python.start("/usr/bin/python3",
                 {QStringLiteral(STREETGAN_SOURCE_DIR) + "/tests/security/craft_checkpoint.py", source, out, variant});
    if (!python.waitForFinished(60000) || python.exitCode() != 0)
      return "craft_checkpoint.py " + variant + " failed: " + QString::fromUtf8(python.readAllStandardError());
    return {};
  }

  // The network that `program` (Python saving it to sys.argv[1]) makes, at NAME.pt; empty on failure.
  QString writeNetwork(const QString& name, const QString& program) {
    const QString network = dir_.filePath(name + ".pt"), script = dir_.filePath(name + ".py");
    QFile file(script);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(program.toUtf8());
    file.close();
    QProcess python;
    python.start("/usr/bin/python3", {script, network});
    if (!python.waitForFinished(120000) || python.exitCode() != 0) {
      qWarning("%s", python.readAllStandardError().constData());
      return {};
    }
    return network;
  }

  QStringList metricsWith(const QString& network) const {
    return {"metrics", "--samples", data_, "--dataroot", data_, "--n", "16", "--n-train", "16",
            "--only", "fid", "--features-size", "32", "--features", network};
  }

  // The pid of a running `streetgan features-worker` for `network`; 0 when there is none.
  static pid_t workerOf(const QString& network) {
    for (const QString& entry : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
      bool number = false;
      const pid_t pid = entry.toInt(&number);
      if (!number) continue;
      QFile cmdline("/proc/" + entry + "/cmdline");
      if (!cmdline.open(QIODevice::ReadOnly)) continue;
      const QList<QByteArray> words = cmdline.readAll().split('\0');
      QFile stat("/proc/" + entry + "/stat");
      const bool zombie = stat.open(QIODevice::ReadOnly) && stat.readAll().contains(") Z ");
      if (!zombie && words.contains("features-worker") && words.contains(network.toUtf8())) return pid;
    }
    return 0;
  }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    data_ = makeTinyDataset(dir_.path());
    run_ = dir_.filePath("run");
    const auto r = runCli(tinyTrainArgs(data_, run_, 2));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QStringList checkpoints = QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name);
    QVERIFY(checkpoints.size() >= 2);
    checkpoint_ = run_ + "/checkpoints/" + checkpoints.last();
  }

  void craftedCheckpointIsRefused_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("reason");
    QTest::newRow("TUPLE1 on an empty stack") << "empty-stack" << "its data.pkl: the pickle pops an empty stack";
    QTest::newRow("storage offset of 2^28") << "far-offset" << "its data.pkl: a tensor reaches past the end of its storage";
    QTest::newRow("storage of 2^40 elements") << "huge-numel" << "fewer than the 1099511627776 elements data.pkl gives it";
    QTest::newRow("storage record missing") << "missing-storage" << "it has no record data/Z for a tensor of data.pkl";
    QTest::newRow("a method in code/") << "method" << "is not an attribute declaration; a checkpoint's classes hold data only";
    QTest::newRow("a statement in code/") << "statement" << "its code/__torch__.py line 1 is not an attribute declaration";
    QTest::newRow("a class holding itself") << "self-holding" << "its class __torch__.module holds itself";
    QTest::newRow("a type 50 deep") << "deep-type" << "is not an attribute declaration; a checkpoint's classes hold data only";
    QTest::newRow("legacy model.json") << "legacy" << "legacy format of PyTorch 1.0 (model.json)";
    QTest::newRow("two records named alike") << "case-twin" << "two of its records have the same name once case and folders are ignored";
    QTest::newRow("os.system in data.pkl") << "foreign-global" << "needs the Python object os.system";
    // LibTorch's zip reader followed the ZIP64 end record, the check the other one: a method in
    // code/ ran on load (found by a hostile review).
    QTest::newRow("two zip directories") << "two-directories"
                                         << "its ZIP64 end record and its end record describe different directories";
  }

  void craftedCheckpointIsRefused() {
    QFETCH(QString, variant);
    QFETCH(QString, reason);
    const QString crafted = dir_.filePath(variant + ".pt");
    const QString crafting = craft(checkpoint_, crafted, variant);
    QVERIFY2(crafting.isEmpty(), qPrintable(crafting));
    const QString out = dir_.filePath(variant + "-grid.png");
    const auto r = runCli({"sample", "--checkpoint", crafted, "--out", out}, 120000);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.startsWith("streetgan sample: " + crafted + ": cannot read the checkpoint ("), qPrintable(r.err));
    QVERIFY2(r.err.contains(reason), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY(!QFile::exists(out));
  }

  void everyCommandRefusesIt_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("sample") << QStringList{"sample", "--checkpoint", "@CK@", "--out", "@OUT@/grid.png"};
    QTest::newRow("walk") << QStringList{"walk", "--checkpoint", "@CK@", "--seeds", "1,2", "--out", "@OUT@/walk.gif"};
    QTest::newRow("directions") << QStringList{"directions", "--checkpoint", "@CK@"};
    QTest::newRow("export") << QStringList{"export", "--checkpoint", "@CK@", "--out", "@OUT@/G.pt"};
    QTest::newRow("metrics") << QStringList{"metrics", "--checkpoint", "@CK@", "--dataroot", "@DATA@"};
    QTest::newRow("parzen") << QStringList{"parzen", "--checkpoint", "@CK@", "--dataroot", "@DATA@"};
    QTest::newRow("serve") << QStringList{"serve", "--checkpoint", "@CK@", "--port", "0"};
  }

  void everyCommandRefusesIt() {
    QFETCH(QStringList, args);
    const QString crafted = dir_.filePath("every.pt");
    if (!QFile::exists(crafted)) QCOMPARE(craft(checkpoint_, crafted, "empty-stack"), QString());
    const QString out = dir_.filePath(QString("out-") + QTest::currentDataTag());
    QVERIFY(QDir().mkpath(out));
    args.replaceInStrings("@CK@", crafted).replaceInStrings("@OUT@", out).replaceInStrings("@DATA@", data_);
    const auto r = runCli(args, 120000);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains(crafted + ": cannot read the checkpoint (its data.pkl: the pickle pops an empty stack)"),
             qPrintable(r.err));
    QCOMPARE(QDir(out).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
  }

  // A features network is code the user chose to run, but its pickles are data: a crafted one
  // crashed `metrics --features` (SIGSEGV) before LibTorch's reader got them checked.
  void craftedFeaturesNetworkIsRefused() {
    const QString network = writeNetwork("features",
                                         "import sys, torch\n"
                                         "class Net(torch.nn.Module):\n"
                                         "    def __init__(self):\n"
                                         "        super().__init__()\n"
                                         "        self.conv = torch.nn.Conv2d(3, 8, 4, 4)\n"
                                         "    def forward(self, x):\n"
                                         "        return self.conv(x).mean(dim=(2, 3))\n"
                                         "torch.jit.script(Net()).save(sys.argv[1])\n");
    QVERIFY(!network.isEmpty());
    const QString crafted = dir_.filePath("features-empty-stack.pt");
    QCOMPARE(craft(network, crafted, "empty-stack"), QString());
    const QStringList metrics{"metrics", "--samples", data_, "--dataroot", data_, "--n", "16", "--n-train", "16",
                              "--only", "fid", "--features-size", "32", "--features"};
    const auto good = runCli(metrics + QStringList{network}, 120000);
    QVERIFY2(good.exit_code == 0, qPrintable(good.err));
    const auto r = runCli(metrics + QStringList{crafted}, 120000);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains(crafted + ": not a TorchScript network that LibTorch can load (its data.pkl: the pickle pops "
                                      "an empty stack)"),
             qPrintable(r.err));
  }

  // Issue 49: a scripted network calling torch.from_file(path, True, ...) created and filled a file
  // of its choosing when `metrics --features` ran it. Its operators are now checked against those
  // of a pure tensor computation before it runs: refused, and the file is never made. The same for
  // torch.save and for an operator of another namespace (c10d's, the network's).
  void featuresNetworkOutsideTensorsIsRefused_data() {
    QTest::addColumn<QString>("program");  // Python that saves the network to sys.argv[1]; @TARGET@: the file
    QTest::addColumn<QString>("refused");  // the operator the refusal names
    // A small network whose forward runs `line` first.
    const auto simple = [](const QString& line, const QString& prelude = {}) {
      return "import sys, torch\n" + prelude +
             "class Net(torch.nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.conv = torch.nn.Conv2d(3, 8, 4, 4)\n"
             "    def forward(self, x):\n"
             "        " + line + "\n"
             "        return self.conv(x).mean(dim=(2, 3))\n"
             "torch.jit.script(Net()).save(sys.argv[1])\n";
    };
    const QString from_file = "torch.from_file(\"@TARGET@\", True, 4096, dtype=torch.uint8).fill_(65)[0].float() * 0";
    QTest::newRow("from_file") << simple("x = x + " + from_file) << "aten::from_file";
    QTest::newRow("save") << simple("torch.save(x, \"@TARGET@\")") << "aten::save";
    QTest::newRow("print") << simple("print(\"@TARGET@\")") << "prim::Print";
    // Found by the hostile review: code reached through a fork, and through an interface.
    QTest::newRow("from_file in a forked function")
        << simple("x = torch.jit.wait(torch.jit.fork(evil, x))",
                  "def evil(x: torch.Tensor) -> torch.Tensor:\n    return x + " + from_file + "\n")
        << "aten::from_file";
    QTest::newRow("from_file behind an interface")
        << simple("x = self.impl.run(x)",
                  "@torch.jit.interface\n"
                  "class Runs(object):\n"
                  "    def run(self, x: torch.Tensor) -> torch.Tensor:\n"
                  "        pass\n"
                  "@torch.jit.script\n"
                  "class Impl(object):\n"
                  "    def __init__(self):\n"
                  "        pass\n"
                  "    def run(self, x: torch.Tensor) -> torch.Tensor:\n"
                  "        return x + " + from_file + "\n")
               .replace("        self.conv = torch.nn.Conv2d(3, 8, 4, 4)\n",
                        "        self.conv = torch.nn.Conv2d(3, 8, 4, 4)\n        self.impl = Impl()\n")
               .replace("class Net(torch.nn.Module):\n", "class Net(torch.nn.Module):\n    impl: Runs\n")
        << "aten::from_file";
  }

  void featuresNetworkOutsideTensorsIsRefused() {
    QFETCH(QString, program);
    QFETCH(QString, refused);
    const QString tag = QString(QTest::currentDataTag()).replace(' ', '-');
    const QString target = dir_.filePath("written-by-" + tag);
    const QString network = writeNetwork("features-" + tag, QString(program).replace("@TARGET@", target));
    QVERIFY(!network.isEmpty());
    const auto r = runCli(metricsWith(network), 120000);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains(network + ": the network calls " + refused + ", which a features network may not (only "
                                      "pure tensor operators: docs/evaluation.md); it was not run"),
             qPrintable(r.err));
    QVERIFY2(!QFile::exists(target), "the network wrote its file");
  }

  // Issue 49: a features network runs in a process of its own (`streetgan features-worker`), with
  // a memory limit and a time limit after which it is killed; a __setstate__, which LibTorch's
  // loader would run before any check, is refused. Before: the loop ran until SIGKILL, the 3 GiB
  // were allocated, and the __setstate__ created its file.
  void featuresNetworkIsContained_data() {
    QTest::addColumn<QString>("program");  // Python that saves the network to sys.argv[1]; @TARGET@: a file
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QStringList>("messages");
    const QString head = "import sys, torch\nclass Net(torch.nn.Module):\n";
    const QString save = "torch.jit.script(Net()).save(sys.argv[1])\n";
    QTest::newRow("a forward that never ends")
        << head + "    def forward(self, x):\n"
                  "        for i in range(1000000000000):\n"
                  "            x = x + 1\n"
                  "        return x.flatten(1)\n" + save
        << QStringList{"--features-timeout", "2"} << QStringList{": the features network took longer than 2 s and was stopped"};
    QTest::newRow("a forward that allocates 3 GiB")
        << head + "    def forward(self, x):\n"
                  "        z = torch.ones([805306368], dtype=torch.float32)\n"
                  "        return x.flatten(1) + z.sum()\n" + save
        << QStringList{"--features-memory", "1"}
        << QStringList{"can't allocate memory", "(the features network may allocate at most 1024 MiB)"};
    QTest::newRow("a __setstate__ that creates a file")
        << head + "    def __init__(self):\n"
                  "        super().__init__()\n"
                  "        self.k = 1\n"
                  "    def forward(self, x):\n"
                  "        return x.flatten(1)\n"
                  "    @torch.jit.export\n"
                  "    def __getstate__(self):\n"
                  "        return (self.k, self.training)\n"
                  "    @torch.jit.export\n"
                  "    def __setstate__(self, state: tuple[int, bool]):\n"
                  "        self.k = int(torch.from_file(\"@TARGET@\", True, 16, dtype=torch.uint8).sum())\n"
                  "        self.training = state[1]\n" + save
        << QStringList{} << QStringList{"defines __setstate__, code that would run as it loads"};
  }

  void featuresNetworkIsContained() {
    QFETCH(QString, program);
    QFETCH(QStringList, options);
    QFETCH(QStringList, messages);
    const QString tag = QString(QTest::currentDataTag()).replace(' ', '-');
    const QString target = dir_.filePath("contained-" + tag);
    const QString network = writeNetwork("contained-" + tag, QString(program).replace("@TARGET@", target));
    QVERIFY(!network.isEmpty());
    const auto r = runCli(metricsWith(network) + options, 180000);  // the limit guards a hang only
    QCOMPARE(r.exit_code, 1);
    for (const QString& message : messages) QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY2(r.err.contains(network + ": "), qPrintable(r.err));
    QVERIFY2(!QFile::exists(target), "the network created its file");
    QCOMPARE(workerOf(network), 0);
  }

  // SIGTERM to `metrics` stops a network that never returns within a second or so (before: 19 s
  // and SIGKILL); a worker killed by a signal (a network that crashed it) is an error naming it.
  void featuresWorkerStopsOnSignal_data() {
    QTest::addColumn<bool>("signal_metrics");  // SIGTERM to metrics; else SIGSEGV to the worker
    QTest::addColumn<QString>("message");
    QTest::newRow("SIGTERM to metrics") << true << "streetgan metrics: cancelled";
    QTest::newRow("SIGSEGV to the worker") << false << ": the features network's process was killed by signal 11";
  }

  void featuresWorkerStopsOnSignal() {
    QFETCH(bool, signal_metrics);
    QFETCH(QString, message);
    const QString network = writeNetwork(signal_metrics ? "endless-term" : "endless-segv",
                                         "import sys, torch\nclass Net(torch.nn.Module):\n"
                                         "    def forward(self, x):\n"
                                         "        for i in range(1000000000000):\n"
                                         "            x = x + 1\n"
                                         "        return x.flatten(1)\n"
                                         "torch.jit.script(Net()).save(sys.argv[1])\n");
    QVERIFY(!network.isEmpty());
    QProcess metrics;
    metrics.start(STREETGAN_CLI, metricsWith(network));
    QVERIFY(metrics.waitForStarted());
    const auto stop = qScopeGuard([&] {
      metrics.kill();
      metrics.waitForFinished();
    });
    QElapsedTimer clock;
    clock.start();
    pid_t worker = 0;
    while ((worker = workerOf(network)) == 0 && clock.elapsed() < 120000) QTest::qWait(50);
    QVERIFY2(worker > 0, "the features worker never started");
    QTest::qWait(500);  // inside the network's forward by now, or still loading: either must stop
    QCOMPARE(::kill(signal_metrics ? metrics.processId() : worker, signal_metrics ? SIGTERM : SIGSEGV), 0);
    QVERIFY2(metrics.waitForFinished(30000), "metrics did not stop");
    QCOMPARE(metrics.exitCode(), 1);
    const QString err = QString::fromUtf8(metrics.readAllStandardError());
    QVERIFY2(err.contains(message), qPrintable(err));
    clock.restart();
    while (workerOf(network) != 0 && clock.elapsed() < 10000) QTest::qWait(50);
    QCOMPARE(workerOf(network), 0);
  }

  // The newest checkpoint crafted: the run resumes from the one before, and says so.
  void resumeSkipsACraftedCheckpoint() {
    const QString run = dir_.filePath("resume");
    QVERIFY(QDir().mkpath(run + "/checkpoints"));
    for (const QString& name : QDir(run_).entryList(QDir::Files)) QVERIFY(QFile::copy(run_ + "/" + name, run + "/" + name));
    const QStringList checkpoints = QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name);
    for (const QString& name : checkpoints)
      QVERIFY(QFile::copy(run_ + "/checkpoints/" + name, run + "/checkpoints/" + name));
    const QString newest = run + "/checkpoints/" + checkpoints.last();
    QVERIFY(QFile::remove(newest));
    QCOMPARE(craft(checkpoint_, newest, "far-offset"), QString());
    const auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "3", "--threads", testThreadsText()});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const auto warnings = eventsOfType(readEvents(run), "warning");
    QVERIFY(!warnings.isEmpty());
    const QString message = warnings.first().value("message").toString();
    QVERIFY2(message.contains("cannot read the checkpoint (its data.pkl: a tensor reaches past the end of its storage"),
             qPrintable(message));
    QVERIFY2(message.endsWith("; trying the previous checkpoint"), qPrintable(message));
    QCOMPARE(warnings.first().value("path").toString(), "checkpoints/" + checkpoints.last());
    const auto finished = eventsOfType(readEvents(run), "run_finished");
    QVERIFY(!finished.isEmpty());
    QCOMPARE(finished.last().value("status").toString(), QString("completed"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(HostileCheckpointTest)
#include "tst_hostile_checkpoint.moc"
