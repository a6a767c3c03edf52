// Strangers on the rendezvous port, as issue 49 found them.
// - A stranger (tests/security/fake_rank.py, PyTorch's own c10d client) joins a resumed run as its
//   rank 1 to play the attack issue 49 found: adding 65,536 to the size it gives the config
//   exchange made rank 0 send its 1 KB config plus 64 KiB of its heap. Rank 0's store now lets in
//   only a rank that proves the job's token: the stranger is dropped at the door and named in a
//   warning, and rank 0 ends with exit 1 and a message, never a crash. (Were it let in, rank 0
//   takes the size from itself alone: tst_job_store and the rank group's own checks.)
// - `--nproc 2` on one host listened on every interface (*:PORT): every socket its ranks listen on
//   (the store and Gloo's) is now on loopback.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::test;

namespace {

// The local addresses (as /proc/net/tcp and tcp6 write them) of the sockets process `pid` listens on.
QStringList listeningAddresses(qint64 pid) {
  QSet<QString> inodes;
  const QString fds = QString("/proc/%1/fd").arg(pid);
  for (const QString& fd : QDir(fds).entryList(QDir::NoDotAndDotDot | QDir::System | QDir::Files)) {
    const QString target = QFile::symLinkTarget(fds + "/" + fd);
    if (target.contains("socket:[")) inodes.insert(target.section('[', 1).section(']', 0, 0));
  }
  QStringList addresses;
  for (const QString table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    for (const QByteArray& line : readFileBytes(table).split('\n')) {
      const QStringList fields = QString::fromLatin1(line).simplified().split(' ');
      // sl local_address rem_address st ... inode (the tenth field); 0A: LISTEN.
      if (fields.size() > 9 && fields[3] == "0A" && inodes.contains(fields[9])) addresses += fields[1].section(':', 0, 0);
    }
  }
  return addresses;
}

}  // namespace

class HostileRankTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;

private slots:
  void strangerGetsNoMemoryOfRankZero() {
    const QString run = dir_.filePath("run");
    const auto trained = runCli(tinyTrainArgs(makeTinyDataset(dir_.path()), run, 1));
    QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
    const int port = freeLoopbackPort();
    QProcess rank0;
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.insert("RANK", "0");
    environment.insert("WORLD_SIZE", "2");
    environment.insert("MASTER_ADDR", "127.0.0.1");
    environment.insert("MASTER_PORT", QString::number(port));
    environment.insert("STREETGAN_DIST_TIMEOUT", "10");  // --dist-timeout of a rank started alone
    environment.insert("STREETGAN_JOB_TOKEN", "the-job-token-the-stranger-lacks");
    rank0.setProcessEnvironment(environment);
    rank0.start(STREETGAN_CLI, {"train", "--resume", "--run-dir", run, "--epochs", "2", "--threads", "1"});
    QVERIFY(rank0.waitForStarted());
    QProcess stranger;
    QElapsedTimer waited;
    waited.start();
    do {  // the store exists once rank 0 has started
      QTest::qWait(200);
      stranger.start("/usr/bin/python3", {QStringLiteral(STREETGAN_SOURCE_DIR) + "/tests/security/fake_rank.py",
                                          QString::number(port), "65536"});
      QVERIFY(stranger.waitForFinished(120000));
    } while (stranger.readAllStandardError().contains("Connection refused") && waited.elapsed() < 60000);
    const QByteArray said = stranger.readAllStandardOutput().trimmed();
    // A hang guard only: rank 0 waits at most --dist-timeout (10 s) for its collectives.
    QVERIFY2(rank0.waitForFinished(200000), "rank 0 did not end within 200 s");
    const QString err = QString::fromUtf8(rank0.readAllStandardError());
    qInfo("the stranger says %s; rank 0 says %s", said.constData(), qPrintable(err.trimmed().section('\n', -1)));
    QCOMPARE(rank0.exitStatus(), QProcess::NormalExit);
    QVERIFY2(rank0.exitCode() == 1, qPrintable(err));
    // Never in, so no collective with rank 0: PyTorch's client fails its first request (or dies of
    // it: it allocates what the store's greeting reads as a length, std::bad_alloc).
    const QJsonObject result = QJsonDocument::fromJson(said).object();
    QVERIFY2(!result.contains("announced") && !result.contains("leaked_nonzero"), said.constData());
    QVERIFY2(err.contains(QRegularExpression("warning: a connection from 127\\.0\\.0\\.1:[0-9]+ to the job's store at "
                                             "127\\.0\\.0\\.1:" + QString::number(port) + " was dropped: ")),
             qPrintable(err));
    QVERIFY2(!err.contains("Segmentation") && !err.contains("frame #"), qPrintable(err));
  }

  void ranksOnOneHostListenOnLoopbackOnly() {
    const QString run = dir_.filePath("one-host");
    QProcess launcher;
    launcher.start(STREETGAN_CLI, tinyTrainArgs(makeTinyDataset(dir_.filePath("one-host-data")), run, 2) +
                                      QStringList{"--nproc", "2", "--master-port",
                                                  QString::number(freeLoopbackPort())});
    QVERIFY(launcher.waitForStarted());
    // Every socket the ranks listen on while they run (the store from rank 0's start, Gloo's from
    // the join on), looked at every 50 ms until the job ends; a hang guard of 300 s.
    QSet<QString> listening;
    QElapsedTimer waited;
    waited.start();
    while (!launcher.waitForFinished(50) && waited.elapsed() < 300000)
      for (const qint64 rank : childrenOf(launcher.processId()))
        for (const QString& address : listeningAddresses(rank)) listening.insert(address);
    QVERIFY2(launcher.state() == QProcess::NotRunning, "the job did not end within 300 s");
    QVERIFY2(launcher.exitCode() == 0, launcher.readAllStandardError().constData());
    qInfo("the ranks listened on %lld address(es): %s", static_cast<long long>(listening.size()),
          qPrintable(QStringList(listening.values()).join(", ")));
    QVERIFY2(!listening.isEmpty(), "no listening socket found while the ranks trained");
    for (const QString& address : listening)
      QVERIFY2(address == "0100007F", qPrintable("a rank listens on " + QStringList(listening.values()).join(", ") +
                                                 " (hex, /proc/net/tcp)"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(HostileRankTest)
#include "tst_hostile_rank.moc"
