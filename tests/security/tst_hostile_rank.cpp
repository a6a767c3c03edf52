// A stranger on the rendezvous port (tests/security/fake_rank.py, PyTorch's own c10d client)
// joins a resumed run as its rank 1 and plays the attack issue 49 found: it adds 65,536 to the
// size it gives the config exchange, which made rank 0 send its 1 KB config plus 64 KiB of its
// heap. Rank 0 now takes the size from itself alone: the stranger gets nothing of rank 0's memory,
// and rank 0 ends with exit 1 and a message, never a crash.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::test;

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
    const QJsonObject result = QJsonDocument::fromJson(said).object();
    QVERIFY2(!result.isEmpty(), said.constData());
    if (result.contains("leaked_nonzero")) QCOMPARE(result.value("leaked_nonzero").toInt(), 0);
    else QVERIFY2(result.contains("error"), said.constData());
    QVERIFY2(!err.contains("Segmentation") && !err.contains("frame #"), qPrintable(err));
  }
};

STREETGAN_TEST_GUILESS_MAIN(HostileRankTest)
#include "tst_hostile_rank.moc"
