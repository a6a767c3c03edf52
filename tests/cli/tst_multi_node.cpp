// Several hosts over a real network: `streetgan train --nnodes 2 --node-rank R --master-addr ...`
// on "hosts" that are network namespaces joined by a bridge (tests/support/network_hosts.h), each
// rank talking Gloo over its host's own interface (GLOO_SOCKET_IFNAME). Checks that 2 hosts × 2
// ranks train like 1 host × 4 ranks and only node 0 writes; that a lost node (its link cut, or its
// ranks killed) ends the job with one error naming it and a checkpoint that resumes on one host;
// that a node that never comes, and wrong launches, fail with a plain message and no hang; that
// --max-restarts gives up on a node that always fails, naming why, and never restarts a wrong launch.
#include "core/runs/run_summary.h"
#include "tests/support/network_hosts.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <cmath>
#include <memory>

using namespace streetgan::test;

namespace {

constexpr int kPort = 29611;

// The job's token every host is given (--job-token): a file only its owner reads, made once.
QString jobTokenFile(const QString& folder = {}) {
  static QString path;
  if (path.isEmpty() && !folder.isEmpty()) {
    path = folder + "/job.token";
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(QFile::ReadOwner | QFile::WriteOwner))
      qFatal("cannot write %s", qPrintable(path));
    file.write("6a6f622d746f6b656e2d666f722d746865206d756c74692d6e6f646520746573\n");
  }
  return path;
}

QStringList nodeTrainArgs(const QString& data, const QString& run, int batch, int epochs, const QString& lr = "1e-6") {
  return {"train", "--dataroot", data, "--run-dir", run, "--epochs", QString::number(epochs), "--seed", "7",
          "--threads", "1", "--device", "cpu", "--sync-batchnorm", "-t",
          QString(R"({"batch_size":%1,"ngf":8,"ndf":8,"nz":16,"lr":%2})").arg(batch).arg(lr), "-c",
          R"({"log_frequency":1000,"save_frequency":1,"keep_checkpoints":100})"};
}

// The launcher options of host `node` of `nnodes`, each with `nproc` ranks, meeting at host 0.
QStringList nodeArgs(int node, int nnodes, int nproc = 2, int timeout_s = 20) {
  return {"--nproc", QString::number(nproc), "--nnodes", QString::number(nnodes), "--node-rank", QString::number(node),
          "--master-addr", NetworkHosts::address(0), "--master-port", QString::number(kPort), "--dist-timeout",
          QString::number(timeout_s), "--job-token", jobTokenFile()};
}

QJsonObject lastNodeEvent(const QString& run, const QString& type) {
  const auto events = eventsOfType(readEvents(run), type);
  return events.isEmpty() ? QJsonObject() : events.last();
}

QVector<double> lossesOfNodes(const QString& run) {
  QVector<double> out;
  for (const auto& e : eventsOfType(readEvents(run), "step")) out << e.value("loss_d").toDouble() << e.value("loss_g").toDouble();
  return out;
}

// A job's processes on the hosts: started, then read when they end.
struct Host {
  std::unique_ptr<QProcess> process = std::make_unique<QProcess>();
  QString err;
  bool finish(int ms) {
    if (!process->waitForFinished(ms)) return false;
    err = QString::fromUtf8(process->readAllStandardError());
    return true;
  }
};

std::unique_ptr<Host> startOn(int host, const QStringList& args) {
  auto h = std::make_unique<Host>();
  h->process->start("ip", NetworkHosts::onHost(host, STREETGAN_CLI, args,
                                               {"GLOO_SOCKET_IFNAME=" + NetworkHosts::interfaceName(host)}));
  return h;
}

void killTree(QProcess& process) {
  if (process.state() == QProcess::NotRunning) return;
  for (const qint64 child : childrenOf(process.processId())) ::kill(static_cast<pid_t>(child), SIGKILL);
  process.kill();
  process.waitForFinished(30000);
}

bool waitForNodeCheckpoint(QProcess& launcher, const QString& run, int ms) {
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < ms) {
    if (lastNodeEvent(run, "checkpoint").value("step").toInt() > 0) return true;
    if (launcher.waitForFinished(100)) return false;
  }
  return false;
}

}  // namespace

class TestMultiNode : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;
  QString data_;
  NetworkHosts hosts_;

  QString folder(const QString& name) const { return dir_.path() + "/" + name; }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    data_ = QFileInfo(makeTinyDataset(dir_.path())).absoluteFilePath();
    jobTokenFile(dir_.path());
    QString error;
    if (!hosts_.start(3, &error))
      QSKIP(qPrintable("this machine cannot make network namespaces (root and iproute2 are needed): " + error));
  }

  // 2 hosts × 2 ranks × batch 4 against 1 host × 4 ranks × batch 4, SyncBN on both: the same steps.
  void twoHostsTrainLikeOneHost() {
    const QString one = folder("one-host");
    auto r = runCli(nodeTrainArgs(data_, one, 4, 2) + QStringList{"--nproc", "4"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));

    const QString run = folder("h0/run"), other = folder("h1/run");
    auto node1 = startOn(1, nodeTrainArgs(data_, other, 4, 2) + nodeArgs(1, 2));
    auto node0 = startOn(0, nodeTrainArgs(data_, run, 4, 2) + nodeArgs(0, 2));
    QVERIFY(node0->finish(300000) && node1->finish(300000));
    QVERIFY2(node0->process->exitCode() == 0, qPrintable(node0->err));
    QVERIFY2(node1->process->exitCode() == 0, qPrintable(node1->err));

    const auto a = lossesOfNodes(one), b = lossesOfNodes(run);
    QCOMPARE(a.size(), 8);  // 32 images, 16 a step, 2 epochs: 4 steps of two losses
    QCOMPARE(b.size(), a.size());
    for (int i = 0; i < a.size(); ++i)
      QVERIFY2(std::abs(a[i] - b[i]) <= 1e-4 * std::abs(a[i]), qPrintable(QString("loss %1: %2 against %3").arg(i).arg(b[i]).arg(a[i])));
    const auto started = lastNodeEvent(run, "run_started");
    QCOMPARE(started.value("world_size").toInt(), 4);
    QCOMPARE(started.value("nodes").toInt(), 2);
    // What the Runs tab lists ("cpu, 2 hosts × 2 ranks, gloo").
    const auto summary = streetgan::readRunSummary(run.toStdString());
    QVERIFY2(summary.ok(), summary.error().c_str());
    QCOMPARE(summary->nodes, std::int64_t(2));
    QCOMPARE(summary->world_size, std::int64_t(4));
    QCOMPARE(started.value("backend").toString(), QString("gloo"));
    const auto checksums = lastNodeEvent(run, "run_finished").value("rank_checksums").toArray();
    QCOMPARE(checksums.size(), 4);
    for (const auto& value : checksums) QCOMPARE(value.toDouble(), checksums.first().toDouble());
    QCOMPARE(lastNodeEvent(run, "run_finished").value("status").toString(), QString("completed"));
    // Rank 0 alone writes: host 1 got nothing, not even its run folder.
    QVERIFY2(!QDir(folder("h1")).exists(), qPrintable(QDir(folder("h1")).entryList().join(", ")));
  }

  // Host 1 lost mid-run: its link cut (packets vanish, nothing closes: the collective timeout
  // notices) or its ranks killed (their connections close at once).
  void lostNode_data() {
    QTest::addColumn<bool>("cut_link");
    QTest::newRow("link cut") << true;
    QTest::newRow("ranks killed") << false;
  }

  void lostNode() {
    QFETCH(bool, cut_link);
    const QString run = folder(QString("lost-%1/run").arg(cut_link ? "link" : "killed"));
    constexpr int kTimeout = 10;
    auto node0 = startOn(0, nodeTrainArgs(data_, run, 4, 400, "2e-4") + nodeArgs(0, 2, 2, kTimeout));
    auto node1 = startOn(1, nodeTrainArgs(data_, folder("lost-h1/run"), 4, 400, "2e-4") + nodeArgs(1, 2, 2, kTimeout));
    const auto cleanup = qScopeGuard([&] {
      hosts_.setLinkUp(1, true, nullptr);
      killTree(*node1->process);
      killTree(*node0->process);
    });
    QVERIFY2(waitForNodeCheckpoint(*node0->process, run, 180000),
             qPrintable("no checkpoint within 180 s: " + QString::fromUtf8(node0->process->readAllStandardError())));
    QElapsedTimer clock;
    clock.start();
    QString error;
    if (cut_link) {
      QVERIFY2(hosts_.setLinkUp(1, false, &error), qPrintable(error));
    } else {
      const auto ranks = childrenOf(node1->process->processId());
      QCOMPARE(ranks.size(), 2);
      // Both stopped before either is killed: a rank that outlived the other by a moment would
      // see its connection close and report it, and the node would look half alive.
      for (const qint64 pid : ranks) ::kill(static_cast<pid_t>(pid), SIGSTOP);
      for (const qint64 pid : ranks) ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    // A hang guard only: the figure is printed. Within the timeout (10 s) plus rank 0's wait for
    // the others' reasons (3 s) plus the launcher's grace (10 s), on an idle machine.
    QVERIFY2(node0->finish(20 * kTimeout * 1000), "node 0 did not end within 200 s of losing node 1");
    qInfo("node 0 ended %lld ms after node 1 was lost (%s)", static_cast<long long>(clock.elapsed()),
          cut_link ? "link cut" : "ranks killed");
    QCOMPARE(node0->process->exitCode(), 1);
    const auto errors = eventsOfType(readEvents(run), "error");
    QCOMPARE(errors.size(), 1);
    const QString message = errors.first().value("message").toString();
    QVERIFY2(message.startsWith("node 1 (ranks 2 and 3) of 4 ranks stopped responding"), qPrintable(message));
    QCOMPARE(lastNodeEvent(run, "run_finished").value("status").toString(), QString("failed"));

    // The last checkpoint is whole, and the run resumes on one host.
    const int epoch = lastNodeEvent(run, "checkpoint").value("epoch").toInt();
    auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", QString::number(epoch + 1), "--nproc", "2"});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QCOMPARE(lastNodeEvent(run, "run_finished").value("status").toString(), QString("completed"));
    QCOMPARE(lastNodeEvent(run, "run_finished").value("images_seen").toInt(), (epoch + 1) * 32);
  }

  // Host 0 alone: host 1 never starts. The job fails after the join timeout, naming it.
  void nodeThatNeverComes() {
    QElapsedTimer clock;
    clock.start();
    auto node0 = startOn(0, nodeTrainArgs(data_, folder("never/run"), 4, 1) + nodeArgs(0, 2, 2, 5));
    QVERIFY2(node0->finish(120000), "node 0 did not end within 120 s");
    qInfo("node 0 ended %lld ms after it started (--dist-timeout 5)", static_cast<long long>(clock.elapsed()));
    QCOMPARE(node0->process->exitCode(), 1);
    QVERIFY2(node0->err.contains("node 1 (ranks 2 and 3) did not join within --dist-timeout 5 s"), qPrintable(node0->err));
    QVERIFY2(!node0->err.contains("frame #"), qPrintable(node0->err));
    QVERIFY(!QDir(folder("never")).exists());
  }

  // Launches that cannot make one job: each fails with a plain message, and nothing hangs.
  void wrongLaunches_data() {
    QTest::addColumn<QStringList>("host1");
    QTest::addColumn<QStringList>("host2");
    QTest::addColumn<QString>("message");
    QTest::newRow("node rank given twice")
        << nodeArgs(1, 2, 2, 10) << nodeArgs(1, 2, 2, 10)
        << "has already joined from another host: two hosts were started with --node-rank 1";
    QTest::newRow("another --nnodes")
        << nodeArgs(1, 3, 2, 10) << QStringList()
        << "was started for a job of 6 ranks (3 host(s) × 2), and rank 0 for 4 ranks (2 host(s) × 2): give every "
           "host the same --nnodes and --nproc";
    QTest::newRow("another --nproc")
        << nodeArgs(1, 2, 3, 10) << QStringList()
        << "give every host the same --nnodes and --nproc";
  }

  void wrongLaunches() {
    QFETCH(QStringList, host1);
    QFETCH(QStringList, host2);
    QFETCH(QString, message);
    const QString tag = QString::number(qHash(QString(QTest::currentDataTag())));
    std::vector<std::unique_ptr<Host>> jobs;
    jobs.push_back(startOn(0, nodeTrainArgs(data_, folder("wrong-" + tag + "/h0"), 4, 1) + nodeArgs(0, 2, 2, 10)));
    jobs.push_back(startOn(1, nodeTrainArgs(data_, folder("wrong-" + tag + "/h1"), 4, 1) + host1));
    if (!host2.isEmpty()) jobs.push_back(startOn(2, nodeTrainArgs(data_, folder("wrong-" + tag + "/h2"), 4, 1) + host2));
    const auto cleanup = qScopeGuard([&] {
      for (auto& job : jobs) killTree(*job->process);
    });
    QString all;
    int failed = 0;
    for (auto& job : jobs) {
      QVERIFY2(job->finish(200000), "a host's launcher did not end within 200 s");
      all += job->err;
      failed += job->process->exitCode() != 0 ? 1 : 0;
    }
    QVERIFY2(failed >= 1, qPrintable(all));
    QVERIFY2(all.contains(message), qPrintable(all));
    QVERIFY2(!all.contains("frame #"), qPrintable(all));
  }

  // The store's address is a host that is not there, or its port is taken on host 0.
  void unreachableMaster() {
    // --dist-timeout 1: nothing will ever answer there, and only the message is checked.
    QStringList args = nodeTrainArgs(data_, folder("unreachable/run"), 4, 1) + nodeArgs(1, 2, 2, 1);
    args[args.indexOf("--master-addr") + 1] = NetworkHosts::unreachableAddress();
    auto node1 = startOn(1, args);
    QVERIFY2(node1->finish(120000), "node 1 did not end within 120 s");
    QCOMPARE(node1->process->exitCode(), 1);
    QVERIFY2(node1->err.contains("could not join the distributed run as rank 2 of 4 through the store at " +
                                 NetworkHosts::unreachableAddress() + ":" + QString::number(kPort)),
             qPrintable(node1->err));
  }

  void portInUse() {
    // A listener of another program on host 0's port (SO_REUSEADDR: the earlier jobs' connections
    // may still be in TIME_WAIT there).
    QProcess holder;
    holder.start("ip", NetworkHosts::onHost(0, "python3", {"-c", QString("import socket,time\n"
                                                                         "s=socket.socket()\n"
                                                                         "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
                                                                         "s.bind(('0.0.0.0',%1))\n"
                                                                         "s.listen()\n"
                                                                         "print('ready',flush=True)\n"
                                                                         "time.sleep(300)").arg(kPort)}));
    const auto cleanup = qScopeGuard([&] { killTree(holder); });
    QVERIFY(holder.waitForReadyRead(30000));
    auto node0 = startOn(0, nodeTrainArgs(data_, folder("port/run"), 4, 1) + nodeArgs(0, 2, 2, 10));
    QVERIFY2(node0->finish(60000), "node 0 did not end within 60 s");
    QCOMPARE(node0->process->exitCode(), 2);
    QVERIFY2(node0->err.contains(QString("option '--master-port': port %1 is in use on this host").arg(kPort)),
             qPrintable(node0->err));
    QVERIFY(!QDir(folder("port")).exists());
  }

  // --max-restarts 1 on both hosts, and host 1 cannot reach host 0 (its --master-addr is nobody's):
  // every attempt fails after the join timeout, and both give up after one restart, saying why.
  void restartsGiveUpOnANodeThatAlwaysFails() {
    QStringList lost = nodeTrainArgs(data_, folder("always-h1/run"), 4, 1) + nodeArgs(1, 2, 2, 5) +
                       QStringList{"--max-restarts", "1"};
    lost[lost.indexOf("--master-addr") + 1] = NetworkHosts::unreachableAddress();
    auto node1 = startOn(1, lost);
    auto node0 = startOn(0, nodeTrainArgs(data_, folder("always/run"), 4, 1) + nodeArgs(0, 2, 2, 5) +
                                QStringList{"--max-restarts", "1"});
    const auto cleanup = qScopeGuard([&] {
      killTree(*node1->process);
      killTree(*node0->process);
    });
    QVERIFY2(node0->finish(300000) && node1->finish(300000), "the hosts did not end within 300 s");
    QCOMPARE(node0->process->exitCode(), 1);
    QCOMPARE(node1->process->exitCode(), 1);
    for (const QString& err : {node0->err, node1->err}) {
      QCOMPARE(err.count("(restart 1 of 1)"), 1);
      QCOMPARE(err.count("giving up after 1 restart(s) (--max-restarts 1)"), 1);
    }
    QVERIFY2(node0->err.count("node 1 (ranks 2 and 3) did not join within --dist-timeout 5 s") >= 2, qPrintable(node0->err));
  }

  // A launch that is wrong is not restarted: host 1's data folder is missing, so its ranks cannot
  // start (exit 2), and another attempt would fail the same way.
  void aWrongLaunchIsNotRestarted() {
    QStringList bad = nodeTrainArgs(data_, folder("wrong-data-h1/run"), 4, 1) + nodeArgs(1, 2, 2, 20) +
                      QStringList{"--max-restarts", "3"};
    bad[bad.indexOf("--dataroot") + 1] = folder("no-such-data");
    auto node1 = startOn(1, bad);
    auto node0 = startOn(0, nodeTrainArgs(data_, folder("wrong-data/run"), 4, 1) + nodeArgs(0, 2, 2, 20) +
                                QStringList{"--max-restarts", "3"});
    const auto cleanup = qScopeGuard([&] {
      killTree(*node1->process);
      killTree(*node0->process);
    });
    QVERIFY2(node0->finish(300000) && node1->finish(300000), "the hosts did not end within 300 s");
    QCOMPARE(node0->process->exitCode(), 2);
    QCOMPARE(node1->process->exitCode(), 2);
    QVERIFY2(node0->err.contains("rank 2 of 4 (node 1) could not start: " + folder("no-such-data")), qPrintable(node0->err));
    QVERIFY2(node0->err.contains("not restarted: a rank could not start with these options, config or data"),
             qPrintable(node0->err));
    QVERIFY2(!node0->err.contains("restarting") && !node1->err.contains("restarting"), qPrintable(node0->err + node1->err));
    QVERIFY(!QDir(folder("wrong-data")).exists());
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestMultiNode)
#include "tst_multi_node.moc"
