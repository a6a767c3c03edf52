// Distributed training with real processes on loopback (Gloo, CPU): `streetgan train --nproc 2`,
// torchrun launching `streetgan train` as its ranks, and ranks started by hand with torchrun's
// environment. Checks that 2 ranks with SyncBN train like one process with the whole batch, that
// ranks stay in step, that a killed rank ends the job with the error event and the run resumes
// with another world size, that a signal to one rank stops all, that a killed launcher takes its
// ranks with it, and that only rank 0 writes.
#include "core/runs/run_history.h"
#include "core/runs/run_summary.h"
#include "core/train/checkpoint.h"
#include "core/train/generator_average.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QJsonArray>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <torch/torch.h>

#include <algorithm>

#include <unistd.h>

#include <cmath>
#include <csignal>

using namespace streetgan::test;

namespace {

// Adam's normalised update turns rounding differences in near-zero gradients into whole ±lr
// steps: one process with 1 and with 2 threads already differs by 1e-4 after 4 steps at lr 2e-4
// (measured). At lr 1e-6 those steps stay below the tolerances, while a wrong share, noise row
// or BatchNorm statistic still shows from the first step (see the control without SyncBN).
QStringList distributedTrainArgs(const QString& data, const QString& run, int batch, int epochs, const QString& lr = "1e-6") {
  return {"train", "--dataroot", data, "--run-dir", run, "--epochs", QString::number(epochs), "--seed", "7",
          "--threads", "1", "--device", "cpu", "-t",
          QString(R"({"batch_size":%1,"ngf":8,"ndf":8,"nz":16,"lr":%2})").arg(batch).arg(lr), "-c",
          R"({"log_frequency":1000,"save_frequency":1,"keep_checkpoints":100})"};
}

struct Losses {
  QVector<double> d, g;
};

Losses lossesOfDistributed(const QString& run) {
  Losses out;
  for (const auto& e : eventsOfType(readEvents(run), "step")) {
    out.d.push_back(e.value("loss_d").toDouble());
    out.g.push_back(e.value("loss_g").toDouble());
  }
  return out;
}

double maxRelative(const QVector<double>& a, const QVector<double>& b) {
  double worst = 0;
  for (int i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-12, std::abs(a[i])));
  return worst;
}

QString latestCheckpoint(const QString& run) {
  const auto files = QDir(run + "/checkpoints").entryList({"step-*.pt"}, QDir::Files, QDir::Name);
  return files.isEmpty() ? QString() : run + "/checkpoints/" + files.last();
}

// The largest absolute difference between two checkpoints' parameters (G and D).
double maxParameterDifference(const QString& a, const QString& b) {
  auto config = streetgan::readCheckpointConfig(a.toStdString());
  if (!config) qFatal("%s", config.error().c_str());
  streetgan::DcganStep left(*config, c10::Device(c10::kCPU), streetgan::Precision::Fp32);
  streetgan::DcganStep right(*config, c10::Device(c10::kCPU), streetgan::Precision::Fp32);
  if (auto loaded = streetgan::loadCheckpoint(a.toStdString(), left); !loaded) qFatal("%s", loaded.error().c_str());
  if (auto loaded = streetgan::loadCheckpoint(b.toStdString(), right); !loaded) qFatal("%s", loaded.error().c_str());
  double worst = 0;
  const auto compare = [&](torch::nn::Module& x, torch::nn::Module& y) {
    const auto px = x.parameters(), py = y.parameters();
    for (std::size_t i = 0; i < px.size(); ++i) worst = std::max(worst, (px[i] - py[i]).abs().max().item<double>());
  };
  compare(*left.generator(), *right.generator());
  compare(*left.discriminator(), *right.discriminator());
  if (left.average()) compare(*left.average()->generator(), *right.average()->generator());
  return worst;
}

QJsonObject lastDistributedEvent(const QString& run, const QString& type) {
  const auto events = eventsOfType(readEvents(run), type);
  return events.isEmpty() ? QJsonObject() : events.last();
}

// Every rank reported the same parameter checksum at the end.
void verifyRanksInStep(const QString& run, int world) {
  const auto checksums = lastDistributedEvent(run, "run_finished").value("rank_checksums").toArray();
  QCOMPARE(checksums.size(), world);
  for (const auto& value : checksums) QCOMPARE(value.toDouble(), checksums.first().toDouble());
}


// Waits (up to `ms`) until `run` has a checkpoint past step `after`; false at once when
// `launcher` ended first (its stderr is then printed).
bool waitForDistributedCheckpoint(QProcess& launcher, const QString& run, int after, int ms) {
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < ms) {
    if (lastDistributedEvent(run, "checkpoint").value("step").toInt() > after) return true;
    if (launcher.waitForFinished(100)) {
      qWarning("the job ended first: %s", launcher.readAllStandardError().constData());
      return false;
    }
  }
  return false;
}


// torchrun starting 2 ranks of `streetgan` with `train_args`. Debian trixie's PyTorch 2.6 is built
// without libuv, and its torchrun's store asks for it unless USE_LIBUV=0 (streetgan's own store
// never does). Bookworm's torchrun (1.13 on Python 3.11) fails at start unless --redirects and
// --tee are non-zero (an enum change in Python 3.11), so they are given.
void startTorchrun(QProcess& process, const QString& torchrun, const QStringList& options, const QString& log_dir,
                   const QStringList& train_args) {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("USE_LIBUV", "0");
  env.insert("STREETGAN_JOB_TOKEN", "torchrun-job-token-0123456789");  // for a store of rank 0's own
  process.setProcessEnvironment(env);
  process.start(torchrun, QStringList{"--nproc_per_node", "2"} + options +
                              QStringList{"--master_port", QString::number(freeLoopbackPort()), "--no_python", "--redirects",
                                          "2", "--tee", "1", "--log_dir", log_dir, STREETGAN_CLI} +
                              train_args);
}

// Rank `rank` of 2 started by hand, as torchrun would (RANK, WORLD_SIZE, MASTER_*), in `folder`.
QProcess* startRank(QObject* parent, int rank, int port, const QStringList& args, const QString& folder = {}) {
  auto* process = new QProcess(parent);
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("RANK", QString::number(rank));
  env.insert("WORLD_SIZE", "2");
  env.insert("MASTER_ADDR", "127.0.0.1");
  env.insert("MASTER_PORT", QString::number(port));
  env.insert("STREETGAN_JOB_TOKEN", "ranks-by-hand-token-0123456789");
  process->setProcessEnvironment(env);
  if (!folder.isEmpty()) process->setWorkingDirectory(folder);
  process->start(STREETGAN_CLI, args);
  return process;
}

}  // namespace

class TestDistributed : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;
  QString data_;

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    data_ = makeTinyDataset(dir_.path());
  }

  // 2 ranks × batch 8 with SyncBN against 1 process × batch 16: the same 10 steps.
  void twoRanksWithSyncBatchNormTrainLikeOneProcess() {
    const QString one = dir_.path() + "/one", two = dir_.path() + "/two-sync", plain = dir_.path() + "/two-plain";
    auto r = runCli(distributedTrainArgs(data_, one, 16, 5));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = runCli(distributedTrainArgs(data_, two, 8, 5) + QStringList{"--nproc", "2", "--sync-batchnorm"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = runCli(distributedTrainArgs(data_, plain, 8, 5) + QStringList{"--nproc", "2"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));

    const Losses a = lossesOfDistributed(one), b = lossesOfDistributed(two), c = lossesOfDistributed(plain);
    QCOMPARE(a.d.size(), 10);  // 32 images, 16 per step, 5 epochs
    QCOMPARE(b.d.size(), 10);
    const double rel_d = maxRelative(a.d, b.d), rel_g = maxRelative(a.g, b.g);
    QVERIFY2(rel_d <= 1e-4 && rel_g <= 1e-4, qPrintable(QString("relative loss difference d %1 g %2").arg(rel_d).arg(rel_g)));
    const double params = maxParameterDifference(latestCheckpoint(one), latestCheckpoint(two));
    QVERIFY2(params <= 1e-5, qPrintable(QString("parameters differ by %1").arg(params)));
    // docs/distributed.md quotes what this prints, not the bounds.
    qInfo("2 ranks with SyncBN against 1 process, 10 steps: losses within %g (D) and %g (G) relative, "
          "parameters within %g; without SyncBN the D losses differ by %g",
          rel_d, rel_g, params, maxRelative(a.d, c.d));
    // The comparison can fail: without SyncBN each rank normalises with half the batch.
    QVERIFY2(maxRelative(a.d, c.d) > 1e-3, qPrintable(QString("without SyncBN: %1").arg(maxRelative(a.d, c.d))));

    verifyRanksInStep(two, 2);
    verifyRanksInStep(plain, 2);
    const auto started = lastDistributedEvent(two, "run_started");
    QCOMPARE(started.value("world_size").toInt(), 2);
    QCOMPARE(started.value("backend").toString(), QString("gloo"));
    QCOMPARE(started.value("devices").toArray().size(), 2);
    QCOMPARE(lastDistributedEvent(two, "run_finished").value("images_seen").toInt(), 160);
    // What the Runs tab lists.
    const auto summary = streetgan::readRunSummary(two.toStdString());
    QVERIFY2(summary.ok(), summary.error().c_str());
    QCOMPARE(summary->world_size, std::int64_t(2));
    QCOMPARE(summary->backend, std::string("gloo"));
    QCOMPARE(summary->state, streetgan::RunState::Completed);
  }

  // Issue 51's recipe keys across ranks: hinge, a spectrally normalised D (u and v updated alike on
  // every rank), R1 + R2 every 2nd step, G every 2nd step, DiffAugment (each rank its rows of the
  // job's draws) and G's moving average, 2 ranks × batch 8 with SyncBN (for G's BatchNorm)
  // against 1 process × batch 16: the same 10 steps.
  void twoRanksTrainTheRecipeLikeOneProcess() {
    const auto recipe = [&](const QString& run, int batch) {
      QStringList args = distributedTrainArgs(data_, run, batch, 5);
      args[args.indexOf("-t") + 1] =
          QString(R"({"batch_size":%1,"ngf":8,"ndf":8,"nz":16,"lr":1e-6,"loss":"hinge","d_norm":"spectral",)"
                  R"("r1_gamma":1,"r2_gamma":1,"reg_every":2,"n_critic":2,)"
                  R"("augment":{"diff":"color,translation,cutout","ada_p":0.5,"ada_target":0.3,"ada_kimg":2},)"
                  R"("ema":{"half_life_images":64}})")
              .arg(batch);
      return args;
    };
    const QString one = dir_.path() + "/recipe-one", two = dir_.path() + "/recipe-two";
    auto r = runCli(recipe(one, 16));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    r = runCli(recipe(two, 8) + QStringList{"--nproc", "2", "--sync-batchnorm"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const Losses a = lossesOfDistributed(one), b = lossesOfDistributed(two);
    QCOMPARE(a.d.size(), 10);
    QCOMPARE(b.d.size(), 10);
    const double rel_d = maxRelative(a.d, b.d), rel_g = maxRelative(a.g, b.g);
    QVERIFY2(rel_d <= 1e-4 && rel_g <= 1e-4, qPrintable(QString("relative loss difference d %1 g %2").arg(rel_d).arg(rel_g)));
    const double params = maxParameterDifference(latestCheckpoint(one), latestCheckpoint(two));
    QVERIFY2(params <= 1e-5, qPrintable(QString("parameters differ by %1").arg(params)));
    verifyRanksInStep(two, 2);
    // ADA's p, steered by the job's r_t: the same on both.
    const auto adaOf = [](const QString& run) {
      QList<double> p;
      for (const auto& step : eventsOfType(readEvents(run), "step")) p.push_back(step.value("ada_p").toDouble(-1));
      return p;
    };
    const QList<double> p_one = adaOf(one), p_two = adaOf(two);
    QCOMPARE(p_one.size(), 10);
    // p starts at 0.5 and follows r_t (below the target here: D barely learns at lr 1e-6).
    QCOMPARE(p_one.first(), 0.5);
    QVERIFY2(p_one.last() != p_one.first(), "p never moved");
    for (int i = 0; i < p_one.size(); ++i) QVERIFY(std::fabs(p_one[i] - p_two[i]) < 1e-6);
  }

  void torchrunLaunchesTheRanks() {
    const QString torchrun = QStandardPaths::findExecutable("torchrun");
    QVERIFY2(!torchrun.isEmpty(), "torchrun not found: install python3-torch (packaging/install-deps.sh does)");
    const QString run = dir_.path() + "/torchrun";
    QProcess process;
    startTorchrun(process, torchrun, {}, dir_.path() + "/torchrun-logs", distributedTrainArgs(data_, run, 8, 2));
    QVERIFY(process.waitForFinished(300000));
    const QString err = QString::fromUtf8(process.readAllStandardError());
    // Debian trixie's torchrun (PyTorch 2.6, the LibTorch 2.x check) cannot create its own store:
    // its static rendezvous always asks for libuv, which that build lacks, whatever USE_LIBUV says.
    if (process.exitCode() != 0 && err.contains("use_libuv was requested but PyTorch was build without libuv support"))
      QSKIP("this torchrun cannot create its own store (its PyTorch lacks libuv and its static rendezvous asks for it)");
    QVERIFY2(process.exitCode() == 0, qPrintable(err));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastDistributedEvent(run, "run_started").value("world_size").toInt(), 2);
    verifyRanksInStep(run, 2);
  }

  // A rank killed mid-run ends the job with the error event; the run resumes with 1 rank from
  // the 2-rank checkpoint, and with 2 ranks from the 1-rank checkpoint.
  void killedRankEndsTheJobAndTheRunResumesWithAnotherWorldSize() {
    const QString run = dir_.path() + "/killed";
    QProcess launcher;
    launcher.start(STREETGAN_CLI, distributedTrainArgs(data_, run, 8, 200, "2e-4") +
                                      QStringList{"--nproc", "2", "--dist-timeout", "20"});
    QVERIFY(launcher.waitForStarted());
    QVERIFY2(waitForDistributedCheckpoint(launcher, run, 0, 120000), "no checkpoint within 120 s");
    const auto ranks = childrenOf(launcher.processId());
    QCOMPARE(ranks.size(), 2);
    QElapsedTimer clock;
    clock.start();
    ::kill(static_cast<pid_t>(ranks.last()), SIGKILL);
    // A hang guard only (10 × the 20 s of --dist-timeout, the longest a rank may wait): how soon
    // the job ends after a rank dies is bench/bench_targets.py's figure (bench/README.md).
    QVERIFY2(launcher.waitForFinished(200000), "the job did not end within 200 s of a rank's death");
    qInfo("the job ended %lld ms after rank 1 was killed", static_cast<long long>(clock.elapsed()));
    QCOMPARE(launcher.exitCode(), 1);
    const QString error = lastDistributedEvent(run, "error").value("message").toString();
    QVERIFY2(error.startsWith("rank 1 of 2 stopped responding"), qPrintable(error));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("failed"));

    // 2 ranks' checkpoint (at an epoch's end), 1 process.
    const int epoch = lastDistributedEvent(run, "checkpoint").value("epoch").toInt();
    auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", QString::number(epoch + 1), "--threads", "1"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastDistributedEvent(run, "run_started").value("world_size").toInt(), 1);
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("images_seen").toInt(), (epoch + 1) * 32);

    // 1 process's checkpoint, 2 ranks.
    r = runCli({"train", "--resume", "--run-dir", run, "--epochs", QString::number(epoch + 2), "--threads", "1",
                "--nproc", "2"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastDistributedEvent(run, "run_started").value("world_size").toInt(), 2);
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("images_seen").toInt(), (epoch + 2) * 32);
    verifyRanksInStep(run, 2);
  }

  // Parzen runs on rank 0 alone at an epoch's end. When it takes longer than --dist-timeout, the
  // other rank must wait for it, not time out in its next collective and end the job.
  void parzenLongerThanTheDistTimeout() {
    const QString config = dir_.path() + "/parzen-config.json";
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"lr":1e-6,"log_frequency":1000,)"
               R"("data":{"holdout_fraction":0.25},"parzen":{"every_epochs":1,"n_samples":20000}})");
    file.close();
    const QString run = dir_.path() + "/parzen";
    auto r = runCli({"train", "--dataroot", data_, "--run-dir", run, "--epochs", "1", "--seed", "7", "--threads", "1",
                     "--device", "cpu", "--config", config, "--nproc", "2", "--dist-timeout", "4"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("completed"));
    // It proves something only if the evaluation outlasted the 4 s timeout (11.8 s on the 2-core
    // VM; a busy machine only makes it longer): said, not asserted, as durations are not.
    const double seconds = lastDistributedEvent(run, "parzen").value("seconds").toDouble();
    qInfo("Parzen took %.1f s (the test needs more than --dist-timeout's 4 s to mean anything)", seconds);
  }

  // Resuming, rank 1 runs where the run folder is not (another host: its --run-dir is empty) and
  // rank 0's newest checkpoint is cut short (a crash while a file system showed it half written).
  // Rank 0 sends each checkpoint it tries to the others, so rank 1 needs no copy, and the ranks
  // fall back together to the newest one every rank can load.
  void ranksResumeFromRankZerosCheckpoint() {
    const QString first = dir_.path() + "/agree-0/run";
    auto r = runCli(distributedTrainArgs(data_, first, 8, 2));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QStringList checkpoints = QDir(first + "/checkpoints").entryList({"*.pt"}, QDir::Files, QDir::Name);
    QCOMPARE(checkpoints.size(), 2);
    QFile newest(first + "/checkpoints/" + checkpoints.last());
    QVERIFY(newest.resize(newest.size() / 2));
    const QString second = dir_.path() + "/agree-1/run";
    QVERIFY(QDir().mkpath(dir_.path() + "/agree-1"));

    const int port = freeLoopbackPort();
    QList<QProcess*> ranks;
    for (int rank = 0; rank < 2; ++rank) {
      ranks << startRank(this, rank, port, {"train", "--resume", "--run-dir", rank == 0 ? first : second, "--epochs", "3",
                                            "--threads", "1"});
    }
    for (auto* process : ranks) {
      QVERIFY(process->waitForFinished(300000));
      QVERIFY2(process->exitCode() == 0, qPrintable(QString::fromUtf8(process->readAllStandardError())));
    }
    const QJsonObject started = lastDistributedEvent(first, "run_started");
    QCOMPARE(started.value("resumed_from").toString(), "checkpoints/" + checkpoints.first());
    const QString warning = eventsOfType(readEvents(first), "warning").value(0).value("message").toString();
    QVERIFY2(warning.contains("trying the previous checkpoint"), qPrintable(warning));
    QCOMPARE(lastDistributedEvent(first, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastDistributedEvent(first, "run_finished").value("images_seen").toInt(), 3 * 32);
    verifyRanksInStep(first, 2);
    QVERIFY(!QDir(second).exists());
  }

  // --max-restarts 2 and rank 1 killed once: the launcher restarts both ranks from the last
  // checkpoint, rank 0 writes one `restart` event with the cause, and the run ends with as many
  // images as an uninterrupted one, its charts' points once each.
  void restartAfterAKilledRank() {
    const QString run = dir_.path() + "/restarted";
    QProcess launcher;
    launcher.start(STREETGAN_CLI, distributedTrainArgs(data_, run, 8, 60, "2e-4") +
                                      QStringList{"--nproc", "2", "--dist-timeout", "20", "--max-restarts", "2"});
    QVERIFY(launcher.waitForStarted());
    QVERIFY2(waitForDistributedCheckpoint(launcher, run, 0, 120000), "no checkpoint within 120 s");
    const auto ranks = childrenOf(launcher.processId());
    QCOMPARE(ranks.size(), 2);
    ::kill(static_cast<pid_t>(ranks.last()), SIGKILL);
    QVERIFY2(launcher.waitForFinished(300000), "the job did not end within 300 s");
    const QString err = QString::fromUtf8(launcher.readAllStandardError());
    QVERIFY2(launcher.exitCode() == 0, qPrintable(err));
    QVERIFY2(err.contains("rank 1 of 2 was killed by signal 9 (SIGKILL); restarting the ranks from the run's last "
                          "checkpoint in 3 s (restart 1 of 2)"), qPrintable(err));
    const auto restarts = eventsOfType(readEvents(run), "restart");
    QCOMPARE(restarts.size(), 1);
    QCOMPARE(restarts.first().value("attempt").toInt(), 1);
    QCOMPARE(restarts.first().value("max_restarts").toInt(), 2);
    const QString cause = restarts.first().value("cause").toString();
    QVERIFY2(cause.startsWith("rank 1 of 2 stopped responding"), qPrintable(cause));
    QVERIFY(restarts.first().value("step").toInt() > 0);
    QCOMPARE(eventsOfType(readEvents(run), "run_finished").size(), 1);
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("images_seen").toInt(), 60 * 32);
    verifyRanksInStep(run, 2);
    // The charts' history: every step once, in order, though the steps after the checkpoint
    // were logged twice.
    streetgan::RunHistoryReader history;
    history.feed(readFileBytes(run + "/events.jsonl").toStdString());
    const auto& steps = history.history().steps;
    QCOMPARE(static_cast<int>(steps.size()), 60 * 2);
    for (std::size_t i = 1; i < steps.size(); ++i) QVERIFY(steps[i].images_seen > steps[i - 1].images_seen);
  }

  // A restart continues only the run its launch began: a launch refused because the folder holds
  // a run (exit 2) is not restarted, and a rank started as a restart (torchrun's variables) in a
  // folder whose run has finished is refused as a first attempt would be. Nothing is written.
  void restartNeverTrainsIntoAnotherRun() {
    const QString run = dir_.path() + "/finished-before";
    auto r = runCli(distributedTrainArgs(data_, run, 8, 1));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const QByteArray log = readFileBytes(run + "/events.jsonl");
    r = runCli(distributedTrainArgs(data_, run, 8, 2) + QStringList{"--nproc", "2", "--max-restarts", "2"});
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err.contains("this folder already holds a run; pass --resume to continue it"), qPrintable(r.err));
    QVERIFY2(r.err.contains("not restarted: a rank could not start with these options"), qPrintable(r.err));
    QVERIFY2(!r.err.contains("restarting"), qPrintable(r.err));
    QCOMPARE(readFileBytes(run + "/events.jsonl"), log);

    QProcess rank;
    auto env = QProcessEnvironment::systemEnvironment();
    for (const auto& [name, value] : {std::pair<QString, QString>{"RANK", "0"}, {"WORLD_SIZE", "1"},
                                      {"MASTER_PORT", QString::number(freeLoopbackPort())}, {"TORCHELASTIC_RESTART_COUNT", "1"},
                                      {"TORCHELASTIC_MAX_RESTARTS", "2"}, {"TORCHELASTIC_RUN_ID", "another-launch"},
                                      {"STREETGAN_JOB_TOKEN", "a-rank-by-hand-token-0123456789"}})
      env.insert(name, value);
    rank.setProcessEnvironment(env);
    rank.start(STREETGAN_CLI, distributedTrainArgs(data_, run, 8, 2));
    QVERIFY(rank.waitForFinished(120000));
    QCOMPARE(rank.exitCode(), 2);
    QVERIFY(QString::fromUtf8(rank.readAllStandardError()).contains("this folder already holds a run"));
    QCOMPARE(readFileBytes(run + "/events.jsonl"), log);
  }

  // torchrun's own --max_restarts: it restarts the ranks with TORCHELASTIC_RESTART_COUNT set (and
  // its store prefix for the attempt); rank 0 continues the run and writes the `restart` event.
  void torchrunRestartsTheRanks() {
    const QString torchrun = QStandardPaths::findExecutable("torchrun");
    QVERIFY2(!torchrun.isEmpty(), "torchrun not found: install python3-torch (packaging/install-deps.sh does)");
    const QString run = dir_.path() + "/torchrun-restarted";
    QProcess process;
    startTorchrun(process, torchrun, {"--max_restarts", "1"}, dir_.path() + "/torchrun-restart-logs",
                  distributedTrainArgs(data_, run, 8, 60, "2e-4"));
    QVERIFY(process.waitForStarted());
    QElapsedTimer clock;
    clock.start();
    while (lastDistributedEvent(run, "checkpoint").value("step").toInt() == 0 && clock.elapsed() < 120000 &&
           !process.waitForFinished(100)) {
    }
    const QString early = process.state() == QProcess::NotRunning ? QString::fromUtf8(process.readAllStandardError()) : QString();
    if (early.contains("use_libuv was requested but PyTorch was build without libuv support"))
      QSKIP("this torchrun cannot create its own store (its PyTorch lacks libuv and its static rendezvous asks for it)");
    QVERIFY2(process.state() != QProcess::NotRunning, qPrintable("torchrun ended before the first checkpoint: " + early));
    // Rank 1: the `streetgan train` under torchrun's agent whose RANK is 1.
    qint64 rank1 = 0;
    for (const qint64 agent_child : childrenOf(process.processId()))
      for (const qint64 pid : QList<qint64>{agent_child} + childrenOf(agent_child))
        if (readFileBytes(QString("/proc/%1/environ").arg(pid)).split('\0').contains("RANK=1")) rank1 = pid;
    QVERIFY2(rank1 > 0, "rank 1 not found among torchrun's children");
    ::kill(static_cast<pid_t>(rank1), SIGKILL);
    QVERIFY2(process.waitForFinished(300000), "torchrun did not end within 300 s");
    QVERIFY2(process.exitCode() == 0, qPrintable(QString::fromUtf8(process.readAllStandardError())));
    const auto restarts = eventsOfType(readEvents(run), "restart");
    QCOMPARE(restarts.size(), 1);
    QCOMPARE(restarts.first().value("attempt").toInt(), 1);
    QVERIFY2(restarts.first().value("cause").toString().startsWith("rank 1 of 2 stopped responding"),
             qPrintable(restarts.first().value("cause").toString()));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("images_seen").toInt(), 60 * 32);
    verifyRanksInStep(run, 2);
  }

  // SIGTERM to a launcher whose ranks wait to join a host that never comes: they cannot stop
  // inside the join, which lasted the whole --dist-timeout (300 s). The launcher kills them 5 s
  // after forwarding the stop: the run's log shows they never began training.
  void stopWhileRanksWaitToJoin() {
    QProcess launcher;
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert("STREETGAN_JOB_TOKEN", "two-hosts-job-token-0123456789");  // a job on several hosts shares one
    launcher.setProcessEnvironment(env);
    launcher.start(STREETGAN_CLI, distributedTrainArgs(data_, dir_.path() + "/never-joined", 8, 1) +
                                      QStringList{"--nproc", "2", "--nnodes", "2", "--node-rank", "0", "--master-addr",
                                                  "127.0.0.1", "--master-port", QString::number(freeLoopbackPort()),
                                                  "--dist-timeout", "300"});
    QVERIFY(launcher.waitForStarted());
    QTRY_COMPARE_WITH_TIMEOUT(childrenOf(launcher.processId()).size(), 2, 60000);
    // The ranks past their start (their stop handlers installed: a rank still loading LibTorch on a
    // busy machine would die of the forwarded SIGTERM itself), then a second into the join.
    const auto ranksCatchStop = [&launcher] {
      const QList<qint64> children = childrenOf(launcher.processId());
      return std::all_of(children.begin(), children.end(), [](qint64 pid) { return catchesSignal(pid, SIGTERM); });
    };
    QTRY_VERIFY_WITH_TIMEOUT(ranksCatchStop(), 60000);
    QTest::qWait(1000);
    QList<QPair<qint64, QByteArray>> ranks;
    for (const qint64 pid : childrenOf(launcher.processId())) ranks.push_back({pid, liveStartTime(pid)});
    ::kill(static_cast<pid_t>(launcher.processId()), SIGTERM);
    // A hang guard (before, it ended after the 300 s of --dist-timeout).
    QVERIFY2(launcher.waitForFinished(200000), "the launcher did not end within 200 s of SIGTERM");
    const QString err = QString::fromUtf8(launcher.readAllStandardError());
    // Either the launcher killed them 5 s after the stop, or the signal interrupted their
    // join (EINTR) and they ended at once; both end the job well within --dist-timeout.
    QCOMPARE(launcher.exitCode(), 1);
    QVERIFY2(err.contains("of the stop request; killing it") || err.contains("Interrupted system call"), qPrintable(err));
    QVERIFY2(waitUntilGone(ranks).isEmpty(), qPrintable(err));
  }

  // SIGTERM to rank 1 alone: every rank stops at the same step, rank 0 writes one checkpoint.
  void signalToOneRankStopsEveryRank() {
    const QString run = dir_.path() + "/stopped";
    QProcess launcher;
    launcher.start(STREETGAN_CLI, distributedTrainArgs(data_, run, 8, 200, "2e-4") + QStringList{"--nproc", "2"});
    QVERIFY(launcher.waitForStarted());
    QVERIFY2(waitForDistributedCheckpoint(launcher, run, 0, 120000), "no checkpoint within 120 s");
    const auto ranks = childrenOf(launcher.processId());
    QCOMPARE(ranks.size(), 2);
    ::kill(static_cast<pid_t>(ranks.last()), SIGTERM);
    QVERIFY2(launcher.waitForFinished(200000), "the job did not stop within 200 s of SIGTERM");
    QCOMPARE(launcher.exitCode(), 0);
    const auto finished = lastDistributedEvent(run, "run_finished");
    QCOMPARE(finished.value("status").toString(), QString("stopped"));
    QCOMPARE(lastDistributedEvent(run, "checkpoint").value("step").toInt(), finished.value("step").toInt());
    verifyRanksInStep(run, 2);

    // The stop may fall inside an epoch (2 steps of 2×8 images each): one process with batch 8
    // continues at the same image of the epoch, so the epoch still shows each image once.
    const int epoch = finished.value("epoch").toInt();
    auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", QString::number(epoch + 1), "--threads", "1"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(lastDistributedEvent(run, "run_finished").value("images_seen").toInt(), (epoch + 1) * 32);
  }

  // The launcher killed outright (SIGKILL: no handler of its own runs, as with the studio's Kill
  // before it killed the group, `remote signal kill`, or the OOM killer): its ranks end too, by
  // their parent-death signal, instead of training on with nobody left to stop them.
  void ranksEndWithTheirKilledLauncher() {
    const QString run = dir_.path() + "/launcher-killed";
    QProcess launcher;
    launcher.start(STREETGAN_CLI, distributedTrainArgs(data_, run, 8, 200, "2e-4") + QStringList{"--nproc", "2"});
    QVERIFY(launcher.waitForStarted());
    QVERIFY2(waitForDistributedCheckpoint(launcher, run, 0, 120000), "no checkpoint within 120 s");
    QList<QPair<qint64, QByteArray>> ranks;
    for (const qint64 pid : childrenOf(launcher.processId())) ranks.push_back({pid, liveStartTime(pid)});
    QCOMPARE(ranks.size(), 2);
    QVERIFY(::kill(static_cast<pid_t>(launcher.processId()), SIGKILL) == 0);
    QVERIFY(launcher.waitForFinished(60000));
    // A hang guard, not a time limit: the ranks get their signal as the launcher dies.
    const QStringList left = waitUntilGone(ranks);
    QVERIFY2(left.isEmpty(), qPrintable("ranks still running 60 s after their launcher was killed: " + left.join(", ")));
  }

  // Ranks started by hand with torchrun's variables, each in its own working folder with the
  // same relative --run-dir: rank 0's folder gets the run, rank 1's stays empty.
  void onlyRankZeroWrites() {
    const int port = freeLoopbackPort();
    QList<QProcess*> ranks;
    QStringList folders;
    for (int rank = 0; rank < 2; ++rank) {
      const QString folder = dir_.path() + "/by-hand-" + QString::number(rank);
      QVERIFY(QDir().mkpath(folder));
      folders << folder;
      ranks << startRank(this, rank, port, distributedTrainArgs(QFileInfo(data_).absoluteFilePath(), "run", 8, 2), folder);
    }
    for (auto* process : ranks) {
      QVERIFY(process->waitForFinished(300000));
      QVERIFY2(process->exitCode() == 0, qPrintable(QString::fromUtf8(process->readAllStandardError())));
    }
    QCOMPARE(lastDistributedEvent(folders[0] + "/run", "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(QDir(folders[0] + "/run").entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
             QStringList({"checkpoints", "config.json", "events.jsonl", "samples", "tensorboard"}));
    // One TensorBoard file: rank 0's.
    QCOMPARE(QDir(folders[0] + "/run/tensorboard").entryList(QDir::Files).size(), 1);
    QVERIFY2(QDir(folders[1]).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             qPrintable(QDir(folders[1]).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).join(", ")));
    // One run_started: rank 1 emitted nothing into rank 0's log either.
    QCOMPARE(eventsOfType(readEvents(folders[0] + "/run"), "run_started").size(), 1);
  }

  void badLaunches_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("environment");
    QTest::addColumn<int>("exit_code");
    QTest::addColumn<QString>("message");
    QTest::newRow("nproc 0") << QStringList{"--nproc", "0"} << QStringList() << 2
                             << "option '--nproc': '0' is not allowed; allowed: an integer from 1 to 1024";
    QTest::newRow("node rank past nnodes") << QStringList{"--nproc", "1", "--nnodes", "2", "--node-rank", "2"}
                                           << QStringList() << 2
                                           << "option '--node-rank': 2 is not allowed; allowed: 0 to 1 (--nnodes 2)";
    QTest::newRow("max restarts alone") << QStringList{"--max-restarts", "1"} << QStringList() << 2
                                        << "option '--max-restarts' needs --nproc N (the ranks to start)";
    QTest::newRow("max restarts negative") << QStringList{"--nproc", "1", "--max-restarts", "-1"} << QStringList() << 2
                                           << "option '--max-restarts': '-1' is not allowed; allowed: an integer from 0 to 1000";
    QTest::newRow("master port alone") << QStringList{"--master-port", "29500"} << QStringList() << 2
                                       << "option '--master-port' needs --nproc N (the ranks to start)";
    QTest::newRow("nproc under torchrun") << QStringList{"--nproc", "2"} << QStringList{"RANK=0", "WORLD_SIZE=2"} << 2
                                          << "--nproc and --nnodes start ranks, and this process already is one";
    QTest::newRow("rank without world size") << QStringList() << QStringList{"RANK=0"} << 2
                                             << "environment variable WORLD_SIZE is not set";
    QTest::newRow("rank past world size") << QStringList() << QStringList{"RANK=2", "WORLD_SIZE=2"} << 2
                                          << "environment variable RANK=\"2\" is not allowed; allowed: a whole number from 0 to 1";
    QTest::newRow("port not a number") << QStringList() << QStringList{"RANK=0", "WORLD_SIZE=1", "MASTER_PORT=http"} << 2
                                       << "environment variable MASTER_PORT=\"http\" is not allowed";
    QTest::newRow("no rank 0 to join") << QStringList()
                                       << QStringList{"RANK=1", "WORLD_SIZE=2", "MASTER_PORT=" + QString::number(freeLoopbackPort()),
                                                      "STREETGAN_DIST_TIMEOUT=3", "STREETGAN_JOB_TOKEN=a-token-of-this-job-0123"}
                                       << 1 << "could not join the distributed run as rank 1 of 2 through the store at 127.0.0.1:";
    // Issue 49: rank 0's store lets in only ranks that prove the job's token.
    QTest::newRow("rank without the job's token") << QStringList() << QStringList{"RANK=1", "WORLD_SIZE=2"} << 1
        << "rank 1 of a distributed run needs the job's token in the environment variable STREETGAN_JOB_TOKEN "
           "(streetgan train --nproc gives it to the ranks it starts; with torchrun, set it on every host: "
           "docs/distributed.md)";
    QTest::newRow("job token too short") << QStringList() << QStringList{"RANK=1", "WORLD_SIZE=2", "STREETGAN_JOB_TOKEN=abc"}
        << 2 << "environment variable STREETGAN_JOB_TOKEN holds a job token of 3 characters; allowed: 16 to 1024";
    QTest::newRow("hpu without Gaudi") << QStringList{"--device", "hpu"} << QStringList() << 2
                                       << "device \"hpu\" is not available: the Intel Gaudi software is not installed here";
  }

  void badLaunches() {
    QFETCH(QStringList, args);
    QFETCH(QStringList, environment);
    QFETCH(int, exit_code);
    QFETCH(QString, message);
    const QString run = dir_.path() + "/bad-" + QString::number(qHash(QString(QTest::currentDataTag())));
    QProcess process;
    auto env = QProcessEnvironment::systemEnvironment();
    for (const QString& pair : environment) env.insert(pair.section('=', 0, 0), pair.section('=', 1));
    process.setProcessEnvironment(env);
    QStringList all = distributedTrainArgs(data_, run, 8, 1);
    all.removeAt(all.indexOf("--device") + 1);
    all.removeAt(all.indexOf("--device"));
    process.start(STREETGAN_CLI, all + args);
    QVERIFY(process.waitForFinished(60000));
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitCode(), exit_code);
    QVERIFY2(err.contains(message), qPrintable(err));
    // One line of ours and no backtrace. (A library may print at load time, as UCX does in a
    // chroot; that is not ours to silence.)
    QCOMPARE(err.count(QRegularExpression("^streetgan", QRegularExpression::MultilineOption)), 1);
    QVERIFY2(!err.contains("frame #"), qPrintable(err));
    QVERIFY(!QDir(run).exists());
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestDistributed)
#include "tst_distributed.moc"
