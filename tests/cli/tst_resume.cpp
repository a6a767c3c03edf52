#include "tests/support/test_device.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QJsonArray>
#include <QtTest>

#include <cmath>
#include <csignal>

using namespace streetgan::test;

namespace {

struct StepRecord {
  int step;
  double loss_d, loss_g, d_x, d_g_z1, d_g_z2;
  // Bit-exact on the CPU; on another STREETGAN_TEST_DEVICE kernels may sum in another order,
  // so the same comparison becomes a tolerance there (test_device.h).
  bool operator==(const StepRecord& o) const {
    const double tolerance = streetgan::test::testTolerance();
    auto close = [tolerance](double a, double b) {
      return tolerance == 0 ? a == b : std::abs(a - b) <= tolerance * std::max(1.0, std::abs(b));
    };
    return step == o.step && close(loss_d, o.loss_d) && close(loss_g, o.loss_g) && close(d_x, o.d_x) &&
           close(d_g_z1, o.d_g_z1) && close(d_g_z2, o.d_g_z2);
  }
};

// Step events of a run, with a step replayed after a crash taken from the process that
// finished it (the latest run_started wins).
QMap<int, StepRecord> stepsOf(const QString& run_dir) {
  QMap<int, StepRecord> steps;
  for (const auto& e : eventsOfType(readEvents(run_dir), "step")) {
    const int step = e.value("step").toInt();
    steps[step] = {step, e.value("loss_d").toDouble(), e.value("loss_g").toDouble(),
                   e.value("d_x").toDouble(), e.value("d_g_z1").toDouble(), e.value("d_g_z2").toDouble()};
  }
  return steps;
}

void compareSteps(const QMap<int, StepRecord>& actual, const QMap<int, StepRecord>& reference) {
  QCOMPARE(actual.keys(), reference.keys());
  for (int step : reference.keys())
    QVERIFY2(actual[step] == reference[step],
             qPrintable(QString("step %1: loss_d %2 vs %3").arg(step)
                            .arg(actual[step].loss_d, 0, 'g', 17).arg(reference[step].loss_d, 0, 'g', 17)));
}

QMap<int, StepRecord> firstSteps(const QMap<int, StepRecord>& all, int count) {
  QMap<int, StepRecord> out;
  for (int step : all.keys())
    if (step <= count) out[step] = all[step];
  return out;
}

// Starts a training process with its events on stdout; calls `act` once `ready` says so.
void runUntil(QProcess& process, const QStringList& args,
              const std::function<bool(const QString& line)>& ready) {
  process.start(STREETGAN_CLI, args + QStringList{"--events", "-"});
  QVERIFY(process.waitForStarted());
  QByteArray pending;
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < 300000) {
    if (!process.waitForReadyRead(1000) && process.state() != QProcess::Running) break;
    pending += process.readAllStandardOutput();
    int newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const QString line = QString::fromUtf8(pending.left(newline));
      pending.remove(0, newline + 1);
      if (ready(line)) return;
    }
  }
  QFAIL("the training process ended before the awaited event");
}

}  // namespace

class TestResume : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void eventsCarrySpecFields();
  void oneEpochPlusResumeEqualsTwoEpochs();
  void sigintStopsCleanlyAndResumesExactly();
  void sigkillResumesFromLastCheckpoint();
  void corruptLatestCheckpointFallsBack();
  void existingRunIsNotOverwritten();
  void deferredStatisticsChangeNoValue_data();
  void deferredStatisticsChangeNoValue();
  void bf16RunAndResumeInAnotherPrecision();
  void theRecipeResumesExactly();
  void aResumeMayTuneTheRecipe();

private:
  QTemporaryDir dir_;
  QString data_;
  QMap<int, StepRecord> two_epochs_, three_epochs_;
};

void TestResume::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = makeTinyDataset(dir_.path());
  for (int epochs : {2, 3}) {
    const QString run = dir_.path() + "/reference" + QString::number(epochs);
    const auto r = runCli(tinyTrainArgs(data_, run, epochs));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    (epochs == 2 ? two_epochs_ : three_epochs_) = stepsOf(run);
  }
  QCOMPARE(two_epochs_.size(), 8);  // 32 images, batch 8
  QCOMPARE(three_epochs_.size(), 12);
  compareSteps(firstSteps(three_epochs_, 8), two_epochs_);
}

void TestResume::eventsCarrySpecFields() {
  const auto events = readEvents(dir_.path() + "/reference2");
  for (const auto& e : events) {
    QCOMPARE(e.value("v").toInt(), 1);
    QVERIFY(e.value("time").toDouble() > 1.6e9);
    QVERIFY(!e.value("type").toString().isEmpty());
  }
  QCOMPARE(events.first().value("type").toString(), QString("run_started"));
  const auto started = events.first();
  QCOMPARE(started.value("device").toString(), QString::fromStdString(streetgan::test::testDeviceName()));
  QVERIFY(started.value("params_g").toDouble() > 0 && started.value("params_d").toDouble() > 0);
  QVERIFY(started.value("resumed_from").isNull());
  QCOMPARE(started.value("config").toObject().value("batch_size").toInt(), 8);
  QCOMPARE(started.value("config").toObject().value("nz").toInt(), 16);
  for (const auto& step : eventsOfType(events, "step"))
    for (const char* key : {"epoch", "iteration", "images_seen", "loss_d", "loss_g", "d_x", "d_g_z1",
                            "d_g_z2", "images_per_s", "data_wait_fraction"})
      QVERIFY2(step.contains(key) && step.value(key).isDouble(), key);
  QCOMPARE(eventsOfType(events, "epoch_end").size(), 2);
  QCOMPARE(eventsOfType(events, "checkpoint").size(), 2);
  const auto samples = eventsOfType(events, "samples");
  QVERIFY(samples.size() >= 3);  // steps 3, 4 (epoch end), 6, 8
  for (const auto& s : samples)
    QVERIFY(QFile::exists(dir_.path() + "/reference2/" + s.value("path").toString()));
  QCOMPARE(events.last().value("type").toString(), QString("run_finished"));
  QCOMPARE(events.last().value("status").toString(), QString("completed"));
  QCOMPARE(eventsOfType(events, "step").last().value("images_seen").toInt(), 64);
  QFile::remove(testOutputDir() + "/training_samples.png");
  QFile::copy(dir_.path() + "/reference2/" + samples.last().value("path").toString(),
              testOutputDir() + "/training_samples.png");
}

void TestResume::oneEpochPlusResumeEqualsTwoEpochs() {
  const QString run = dir_.path() + "/resumed";
  auto r = runCli(tinyTrainArgs(data_, run, 1));
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QCOMPARE(stepsOf(run).size(), 4);
  r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "2", "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  compareSteps(stepsOf(run), two_epochs_);
  const auto started = eventsOfType(readEvents(run), "run_started");
  QCOMPARE(started.size(), 2);
  QCOMPARE(started.last().value("resumed_from").toString(), QString("checkpoints/step-0000000004.pt"));
  QCOMPARE(started.last().value("step").toInt(), 4);
}

// Every recipe key on (issue 51): the hinge loss, a spectrally normalised D (its u and v in the
// checkpoint), R1 and R2 every 3 steps and G every 2nd step (the schedules go on across the resume
// at step 4), D's own learning rate. One epoch and a resume to two equal two epochs, bit for bit on the CPU.
void TestResume::theRecipeResumesExactly() {
  const auto recipe = [&](const QString& run, int epochs) {
    QStringList args = tinyTrainArgs(data_, run, epochs);
    args[args.indexOf("-t") + 1] = R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"loss":"hinge","d_norm":"spectral",)"
                                   R"("r1_gamma":1,"r2_gamma":0.5,"reg_every":3,"lr_d":0.0004,"n_critic":2,)"
                                   R"("ema":{"half_life_images":100,"rampup":0.05},)"
                                   R"("augment":{"diff":"color,translation,cutout","ada_target":0.3,"ada_kimg":0.2}})";
    return args;
  };
  const QString whole = dir_.path() + "/recipe-whole", resumed = dir_.path() + "/recipe-resumed";
  auto r = runCli(recipe(whole, 2));
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const auto reference = stepsOf(whole);
  QCOMPARE(reference.size(), 8);
  // Not the original recipe's steps: the keys reached the step.
  QVERIFY(reference[1].loss_d != two_epochs_[1].loss_d);
  const QJsonObject config = eventsOfType(readEvents(whole), "run_started").first().value("config").toObject();
  QCOMPARE(config.value("d_norm").toString(), QString("spectral"));
  QCOMPARE(config.value("reg_every").toInt(), 3);
  r = runCli(recipe(resumed, 1));
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  r = runCli({"train", "--resume", "--run-dir", resumed, "--epochs", "2", "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  compareSteps(stepsOf(resumed), reference);
  // ADA's p: in every step event, moved by r_t, and the same after the resume.
  const auto adaOf = [&](const QString& run) {
    QList<double> p;
    for (const auto& step : eventsOfType(readEvents(run), "step")) p.push_back(step.value("ada_p").toDouble(-1));
    return p;
  };
  const QList<double> ada_whole = adaOf(whole);
  QCOMPARE(ada_whole.size(), 8);
  QVERIFY2(*std::max_element(ada_whole.begin(), ada_whole.end()) > 0, "p never moved");
  QVERIFY(*std::min_element(ada_whole.begin(), ada_whole.end()) >= 0);
  QCOMPARE(adaOf(resumed), ada_whole);
  // G's moving average, which the steps do not show: the two runs' last averages, exported as
  // state dicts, are the same bytes (and not G's).
  QByteArray exported[3];
  int i = 0;
  for (const auto& [run, generator] : {std::pair{whole, "ema"}, {resumed, "ema"}, {whole, "raw"}}) {
    QTemporaryDir out;
    r = runCli({"export", "--checkpoint", run, "--generator", generator, "--out", out.filePath("G.pt")});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QString("generator %1,").arg(generator)), qPrintable(r.out));
    QFile file(out.filePath("G.pt"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    exported[i++] = file.readAll();
  }
  QVERIFY(!exported[0].isEmpty());
  QVERIFY(exported[0] == exported[1]);
  QVERIFY(exported[0] != exported[2]);
}

// -t on --resume changes the learning rates, penalties or augmentation from then on, and says so
// in a warning; the steps after it are no longer the uninterrupted run's.
void TestResume::aResumeMayTuneTheRecipe() {
  const QString run = dir_.path() + "/tuned", reference = dir_.path() + "/tuned-reference";
  for (const auto& [folder, epochs] : {std::pair{run, 1}, {reference, 2}}) {
    QStringList args = tinyTrainArgs(data_, folder, epochs);
    args[args.indexOf("-t") + 1] = R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"lr_d":0.0004,"d_norm":"spectral"})";
    const auto r = runCli(args);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  }
  auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "2", "--threads", testThreadsText(), "-t",
                   R"({"lr_d":0.001,"r1_gamma":2,"augment":{"diff":"translation"}})"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QStringList warnings;
  for (const auto& w : eventsOfType(readEvents(run), "warning")) warnings << w.value("message").toString();
  for (const char* said : {"resumed with lr_d 0.001 (the run trained with 0.0004 until now)",
                           "resumed with r1_gamma 2.0 (the run trained with 0.0 until now)",
                           "resumed with augment.diff \"translation\" (the run trained with \"\" until now)"})
    QVERIFY2(warnings.contains(said), qPrintable(warnings.join("\n")));
  const auto tuned = stepsOf(run), untuned = stepsOf(reference);
  QCOMPARE(tuned.size(), 8);
  compareSteps(firstSteps(tuned, 4), firstSteps(untuned, 4));
  QVERIFY(tuned[5].loss_d != untuned[5].loss_d);
  const QJsonObject config = eventsOfType(readEvents(run), "run_started").last().value("config").toObject();
  QCOMPARE(config.value("lr_d").toDouble(), 0.001);
  QCOMPARE(config.value("d_norm").toString(), QString("spectral"));
  // What cannot change is refused, naming the key and the way out, and the run is left as it was.
  r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "3", "-t", R"({"d_norm":"batchnorm"})"});
  QCOMPARE(r.exit_code, 2);
  QVERIFY2(r.err.contains("config key \"d_norm\" cannot change when a run resumes"), qPrintable(r.err));
  QCOMPARE(stepsOf(run).size(), 8);
  // The same value again (a command line given once more) is no change.
  r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "3", "--threads", testThreadsText(), "-t",
              R"({"d_norm":"spectral","ngf":8})"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QCOMPARE(stepsOf(run).size(), 12);
}

void TestResume::sigintStopsCleanlyAndResumesExactly() {
  const QString run = dir_.path() + "/interrupted";
  QProcess process;
  runUntil(process, tinyTrainArgs(data_, run, 3), [&](const QString& line) {
    if (!line.contains("\"type\":\"step\"") || !line.contains("\"step\":6,")) return false;
    ::kill(static_cast<pid_t>(process.processId()), SIGINT);
    return true;
  });
  QVERIFY(process.waitForFinished(120000));
  QCOMPARE(process.exitStatus(), QProcess::NormalExit);
  QCOMPARE(process.exitCode(), 0);
  const auto events = readEvents(run);
  QCOMPARE(events.last().value("type").toString(), QString("run_finished"));
  QCOMPARE(events.last().value("status").toString(), QString("stopped"));
  const int stopped_at = events.last().value("step").toInt();
  QVERIFY2(stopped_at >= 6 && stopped_at < 12, qPrintable(QString::number(stopped_at)));
  QVERIFY(QFile::exists(run + QString("/checkpoints/step-%1.pt").arg(stopped_at, 10, 10, QChar('0'))));

  const auto r = runCli({"train", "--resume", "--run-dir", run, "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  compareSteps(stepsOf(run), three_epochs_);
}

void TestResume::sigkillResumesFromLastCheckpoint() {
  const QString run = dir_.path() + "/killed";
  QProcess process;
  bool after_checkpoint = false;
  runUntil(process, tinyTrainArgs(data_, run, 3), [&](const QString& line) {
    if (line.contains("\"type\":\"checkpoint\"")) after_checkpoint = true;
    if (!after_checkpoint || !line.contains("\"step\":6,")) return false;
    ::kill(static_cast<pid_t>(process.processId()), SIGKILL);
    return true;
  });
  QVERIFY(process.waitForFinished(60000));
  QCOMPARE(process.exitStatus(), QProcess::CrashExit);
  // What a writer killed mid-checkpoint leaves behind: never taken for a checkpoint.
  QFile partial(run + "/checkpoints/step-0000000009.pt.4242.tmp");
  QVERIFY(partial.open(QIODevice::WriteOnly));
  partial.write("half a checkpoint");
  partial.close();

  const auto r = runCli({"train", "--resume", "--run-dir", run, "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY(!partial.exists());
  const auto started = eventsOfType(readEvents(run), "run_started");
  QCOMPARE(started.last().value("resumed_from").toString(), QString("checkpoints/step-0000000004.pt"));
  compareSteps(stepsOf(run), three_epochs_);
}

void TestResume::corruptLatestCheckpointFallsBack() {
  const QString run = dir_.path() + "/corrupt";
  QVERIFY(runCli(tinyTrainArgs(data_, run, 2)).exit_code == 0);
  QFile latest(run + "/checkpoints/step-0000000008.pt");
  QVERIFY(latest.open(QIODevice::ReadWrite));
  QVERIFY(latest.resize(100));
  latest.close();
  const auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "3", "--threads", testThreadsText()});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const auto events = readEvents(run);
  bool warned = false;
  for (const auto& w : eventsOfType(events, "warning"))
    warned |= w.value("path").toString() == "checkpoints/step-0000000008.pt";
  QVERIFY(warned);
  QCOMPARE(eventsOfType(events, "run_started").last().value("resumed_from").toString(),
           QString("checkpoints/step-0000000004.pt"));
  compareSteps(stepsOf(run), three_epochs_);
}

void TestResume::existingRunIsNotOverwritten() {
  const QString run = dir_.path() + "/reference2";
  const qint64 size = QFileInfo(run + "/events.jsonl").size();
  const auto r = runCli(tinyTrainArgs(data_, run, 2));
  QCOMPARE(r.exit_code, 2);
  QVERIFY2(r.err.contains("this folder already holds a run; pass --resume to continue it"), qPrintable(r.err));
  QCOMPARE(QFileInfo(run + "/events.jsonl").size(), size);
}

void TestResume::deferredStatisticsChangeNoValue_data() {
  QTest::addColumn<int>("every");
  QTest::newRow("copied every step") << 1;
  QTest::newRow("copied every 5 steps") << 5;
  QTest::newRow("copied 1000 steps at a time") << 1000;
}

void TestResume::deferredStatisticsChangeNoValue() {
  // The statistics of the steps between copies wait on the device; every step's event is still
  // written, in order, with the values the step had (the log points copy first).
  QFETCH(int, every);
  const QString config = dir_.path() + QString("/sync%1.json").arg(every);
  QFile file(config);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(QString(R"({"sync_every_steps": %1})").arg(every).toUtf8());
  file.close();
  const QString run = dir_.path() + QString("/sync%1").arg(every);
  QStringList args = tinyTrainArgs(data_, run, 2);
  args.insert(1, "--config");
  args.insert(2, config);
  const auto r = runCli(args);
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  compareSteps(stepsOf(run), two_epochs_);
  const auto events = readEvents(run);
  int last_step = 0;
  for (const auto& e : events) {
    if (e.value("type").toString() != "step") continue;
    QCOMPARE(e.value("step").toInt(), last_step + 1);  // in order, none missing
    last_step = e.value("step").toInt();
  }
  QCOMPARE(last_step, 8);
  // A sample grid comes after the step event of its step, and before the next step's.
  for (int i = 0; i < events.size(); ++i)
    if (events[i].value("type").toString() == "samples") {
      const auto steps_before = eventsOfType(events.mid(0, i), "step");
      QVERIFY(!steps_before.isEmpty());
      QCOMPARE(steps_before.last().value("step").toInt(), events[i].value("step").toInt());
    }
}

void TestResume::bf16RunAndResumeInAnotherPrecision() {
  const QString run = dir_.path() + "/bf16";
  auto r = runCli(tinyTrainArgs(data_, run, 1) + QStringList{"--precision", "bf16"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  auto started = eventsOfType(readEvents(run), "run_started");
  QCOMPARE(started.last().value("precision").toString(), QString("bf16"));
  for (const auto& step : eventsOfType(readEvents(run), "step"))
    for (const char* key : {"loss_d", "loss_g", "d_x", "d_g_z1", "d_g_z2"})
      QVERIFY2(std::isfinite(step.value(key).toDouble()), key);
  // The run resumes in another precision; the stored config keeps the rest.
  r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "2", "--threads", testThreadsText(),
              "--precision", "fp32"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  started = eventsOfType(readEvents(run), "run_started");
  QCOMPARE(started.size(), 2);
  QCOMPARE(started.last().value("precision").toString(), QString("fp32"));
  QCOMPARE(eventsOfType(readEvents(run), "step").size(), 8);
  QCOMPARE(readEvents(run).last().value("status").toString(), QString("completed"));
}

STREETGAN_TEST_GUILESS_MAIN(TestResume)
#include "tst_resume.moc"
