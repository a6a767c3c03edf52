// Links inside a run folder, as a careless copy or a crafted run folder holds them: `train
// --resume` refuses each with one line naming it, and what the link names is left as it was
// (before, the resumed run appended its events to the linked file, and its pruning deleted the
// six checkpoints of the run its linked checkpoints/ named); `metrics --save` refuses a linked
// evaluations/ before any work.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace streetgan::test;

namespace {

bool copyFolder(const QString& from, const QString& to) {
  if (!QDir().mkpath(to)) return false;
  for (const QFileInfo& entry : QDir(from).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot)) {
    const QString target = to + "/" + entry.fileName();
    if (entry.isDir() ? !copyFolder(entry.filePath(), target) : !QFile::copy(entry.filePath(), target)) return false;
  }
  return true;
}

// Every file under `folder` with its bytes, to compare before and after.
QMap<QString, QByteArray> contentsOf(const QString& folder) {
  QMap<QString, QByteArray> files;
  for (const QFileInfo& entry : QDir(folder).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot)) {
    if (entry.isDir()) {
      for (auto [name, bytes] : contentsOf(entry.filePath()).asKeyValueRange()) files[entry.fileName() + "/" + name] = bytes;
    } else {
      files[entry.fileName()] = readFileBytes(entry.filePath());
    }
  }
  return files;
}

}  // namespace

class HostileRunFolderTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;
  QString run_;

private slots:
  void initTestCase() {
    run_ = dir_.filePath("run");
    const auto r = runCli(tinyTrainArgs(makeTinyDataset(dir_.path()), run_, 2));
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  }

  void linkedPartIsRefused_data() {
    QTest::addColumn<QString>("part");     // what in the run folder becomes a link
    QTest::addColumn<QString>("message");  // after "streetgan train: <run>/<part>: "
    QTest::newRow("events.jsonl") << "events.jsonl"
                                  << "cannot open the event log (a symbolic link; a run writes only its own files)";
    QTest::newRow("checkpoints/") << "checkpoints" << "a symbolic link; a run writes only into folders of its own";
    QTest::newRow("samples/") << "samples" << "a symbolic link; a run writes only into folders of its own";
    // Folders other commands write into the run (parzen and metrics --save, directions --save,
    // TensorBoard files during training): refused when the run starts.
    for (const char* later : {"evaluations", "tensorboard", "directions"})
      QTest::newRow(qPrintable(QString(later) + "/")) << later << "a symbolic link; a run writes only into folders of its own";
  }

  void linkedPartIsRefused() {
    QFETCH(QString, part);
    QFETCH(QString, message);
    const QString tag = QString(QTest::currentDataTag()).remove('/').remove('.');
    const QString run = dir_.filePath("resume-" + tag), victim = dir_.filePath("victim-" + tag);
    QVERIFY(copyFolder(run_, run));
    QVERIFY(copyFolder(run_, victim));  // another run: what the link names
    const QString target = victim + "/" + part;
    if (!QFileInfo::exists(target)) {  // a folder the victim's commands made, with a file in it
      QVERIFY(QDir().mkpath(target));
      QFile kept(target + "/kept.json");
      QVERIFY(kept.open(QIODevice::WriteOnly) && kept.write("{}\n") == 3);
    }
    if (QFileInfo::exists(run + "/" + part))
      QVERIFY(QFileInfo(run + "/" + part).isDir() ? QDir(run + "/" + part).removeRecursively() : QFile::remove(run + "/" + part));
    QVERIFY(QFile::link(target, run + "/" + part));
    const auto before = contentsOf(victim);
    const auto r = runCli({"train", "--resume", "--run-dir", run, "--epochs", "4", "--threads", testThreadsText()});
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains(run + "/" + part + ": " + message), qPrintable(r.err));
    QCOMPARE(contentsOf(victim), before);
  }

  // `metrics --save` into a run whose evaluations/ links to another run's: refused before any work,
  // and the other run's evaluations are left as they were.
  void saveIntoLinkedEvaluationsIsRefused() {
    const QString run = dir_.filePath("metrics-linked"), victim = dir_.filePath("metrics-victim");
    QVERIFY(copyFolder(run_, run));
    QVERIFY(QDir().mkpath(victim + "/evaluations"));
    QVERIFY(QFile::link(victim + "/evaluations", run + "/evaluations"));
    const auto before = contentsOf(victim);
    const auto r = runCli({"metrics", "--run", run, "--save", "--n", "8", "--threads", testThreadsText()});
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains("option '--save': " + run + "/evaluations: a symbolic link; a run writes only into "
                            "folders of its own"), qPrintable(r.err));
    QCOMPARE(contentsOf(victim), before);
  }

  // Suspected in issue 49, confirmed: a run folder whose launch record names another of the user's
  // training processes, with that process's start time (anyone can read it in /proc/PID/stat), made
  // `remote signal … kill` kill it. A signal now goes only to a process whose environment holds
  // the record's launch id, which lives in a file only its owner reads.
  void aCraftedLaunchRecordSignalsNothing() {
    const QString victim = dir_.filePath("signal-victim"), crafted = dir_.filePath("signal-crafted");
    QStringList train = tinyTrainArgs(makeTinyDataset(dir_.path()), victim, 100000);
    train.removeFirst();                                        // "train"
    train.remove(train.indexOf("--run-dir"), 2);                // remote launch gives its own
    const auto launched = runCli(QStringList{"remote", "launch", victim} + train);
    QVERIFY2(launched.exit_code == 0, qPrintable(launched.err));
    const qint64 pid = launched.out.trimmed().toLongLong();
    QVERIFY(pid > 0);
    // A failed check below must not leave it training for 100,000 epochs.
    const auto stop_victim = qScopeGuard([&] {
      if (!QFile::exists(victim + "/launch/exit-status")) ::kill(static_cast<pid_t>(pid), SIGKILL);
    });
    QCOMPARE(QFile(victim + "/launch/launch-id").permissions() & (QFile::ReadGroup | QFile::ReadOther), QFile::Permissions());
    // The crafted record: the victim's pid and start time, no launch id, then a made-up one.
    QVERIFY(QDir().mkpath(crafted + "/launch"));
    for (const char* name : {"pid", "start-time"})
      QVERIFY(QFile::copy(victim + "/launch/" + name, crafted + "/launch/" + name));
    auto refused = runCli({"remote", "signal", crafted, "kill"});
    QCOMPARE(refused.exit_code, 1);
    QVERIFY2(refused.err.contains(crafted + "/launch/launch-id: missing, empty or not a regular file, so the record does "
                                            "not show that pid " + QString::number(pid) + " is this run's process"),
             qPrintable(refused.err));
    QFile made_up(crafted + "/launch/launch-id");
    QVERIFY(made_up.open(QIODevice::WriteOnly) && made_up.write("00112233445566778899aabbccddeeff\n") == 33);
    made_up.close();
    refused = runCli({"remote", "signal", crafted, "kill"});
    QCOMPARE(refused.exit_code, 1);
    QVERIFY2(refused.err.contains("is no longer the run's training process"), qPrintable(refused.err));
    // Found by the hostile review: the victim's own launch-id, through a link.
    QVERIFY(QFile::remove(crafted + "/launch/launch-id"));
    QVERIFY(QFile::link(victim + "/launch/launch-id", crafted + "/launch/launch-id"));
    refused = runCli({"remote", "signal", crafted, "kill"});
    QCOMPARE(refused.exit_code, 1);
    QVERIFY2(refused.err.contains(crafted + "/launch/launch-id: missing, empty or not a regular file"), qPrintable(refused.err));
    // And a launch into a run whose launch/ links to the victim's record: refused, the record kept.
    const QString linked = dir_.filePath("signal-linked");
    QVERIFY(QDir().mkpath(linked));
    QVERIFY(QFile::link(victim + "/launch", linked + "/launch"));
    const auto record = contentsOf(victim + "/launch");
    const auto relaunched = runCli(QStringList{"remote", "launch", linked} + train);
    QCOMPARE(relaunched.exit_code, 1);
    QVERIFY2(relaunched.err.contains(linked + "/launch: a symbolic link; a run writes only into folders of its own"),
             qPrintable(relaunched.err));
    QCOMPARE(contentsOf(victim + "/launch").keys(), record.keys());
    QVERIFY2(::kill(static_cast<pid_t>(pid), 0) == 0, "the victim was killed through the crafted record");
    // Its own record still reaches it.
    const auto killed = runCli({"remote", "signal", victim, "kill"});
    QVERIFY2(killed.exit_code == 0, qPrintable(killed.err));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(victim + "/launch/exit-status"), 60000);
    QCOMPARE(readFileBytes(victim + "/launch/exit-status").trimmed(), QByteArray("signal 9"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(HostileRunFolderTest)
#include "tst_hostile_run_folder.moc"
