// The remote side of a studio run: paths resolved only inside a run directory, a training
// process launched detached with its launch record, and the `streetgan remote` commands
// (follow from an offset, status, signal, get) on real runs of the real CLI; records naming a
// pid that is not one, or one now another process's, signal nothing.
#include "core/runs/process_identity.h"
#include "core/runs/run_launch.h"
#include "core/runs/run_relative_path.h"
#include "core/runs/run_summary.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

using namespace streetgan;
using namespace streetgan::test;

namespace {

void waitUntil(const std::function<bool()>& done, int timeout_ms = 60000) {
  QElapsedTimer clock;
  clock.start();
  while (!done() && clock.elapsed() < timeout_ms) QTest::qWait(20);
}

bool writeLaunchText(const QString& path, const QByteArray& text) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile file(path);
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(text) == text.size();
}

}  // namespace

class RunLaunchTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;
  QString data_;

private slots:
  void initTestCase() {
    data_ = makeTinyDataset(dir_.path());
    QDir().mkpath(dir_.filePath("run/samples"));
    QFile(dir_.filePath("run/samples/a.png")).open(QIODevice::WriteOnly);
    QFile::link("/etc", dir_.filePath("run/outside"));
    QFile::link(dir_.filePath("run/samples"), dir_.filePath("run/inside"));
  }

  void insideRunDirectory_data() {
    QTest::addColumn<QString>("relative");
    QTest::addColumn<QString>("refusal");  // empty: accepted
    QTest::newRow("sample") << "samples/a.png" << "";
    QTest::newRow("not there yet") << "checkpoints/step-0000000001.pt" << "";
    QTest::newRow("link inside") << "inside/a.png" << "";
    QTest::newRow("dot") << "./samples/a.png" << "";
    QTest::newRow("empty") << "" << "it is empty";
    QTest::newRow("absolute") << "/etc/passwd" << "it is absolute";
    QTest::newRow("home") << "~/x" << "it is absolute";
    QTest::newRow("parent") << "../x" << "climbs out";
    QTest::newRow("parent inside") << "samples/../../x" << "climbs out";
    QTest::newRow("newline") << "samples/a\n.png" << "control character";
    QTest::newRow("link out") << "outside/passwd" << "a link leads out";
  }
  void insideRunDirectory() {
    QFETCH(QString, relative);
    QFETCH(QString, refusal);
    const auto resolved = resolveInsideRunDirectory(dir_.filePath("run").toStdString(), relative.toStdString());
    if (refusal.isEmpty()) {
      QVERIFY2(resolved.ok(), resolved.ok() ? "" : resolved.error().c_str());
      QCOMPARE(QString::fromStdString(*resolved), dir_.filePath("run") + "/" + relative);
    } else {
      QVERIFY(!resolved.ok());
      QVERIFY2(QString::fromStdString(resolved.error()).contains(refusal), resolved.error().c_str());
      QVERIFY2(QString::fromStdString(resolved.error()).contains("'" + relative + "'"), resolved.error().c_str());
    }
  }

  // A stand-in trainer: the launch detaches it (its own session, no terminal, stdout and stdin
  // on /dev/null, stderr in the record) and records how it ended.
  void launchRecordsPidAndExitStatus() {
    const QString script = dir_.filePath("fake-streetgan");
    QVERIFY(writeScript(script, "#!/bin/sh\necho \"args: $*\" >&2\nls -l /proc/$$/fd/0 /proc/$$/fd/1 >&2\n"
                                "ps -o sid= -p $$ >&2\nsleep \"$2\"\nexit 3\n"));
    const std::string run = dir_.filePath("launched").toStdString();
    auto pid = launchDetachedTraining(run, script.toStdString(), {"train", "1"});
    QVERIFY2(pid.ok(), pid.ok() ? "" : pid.error().c_str());
    LaunchStatus status = readLaunchStatus(run);
    QVERIFY(status.launched);
    QCOMPARE(status.pid, *pid);
    QVERIFY(status.running);
    // A second launch while it runs is refused.
    const auto again = launchDetachedTraining(run, script.toStdString(), {"train", "1"});
    QVERIFY(!again.ok());
    QVERIFY2(QString::fromStdString(again.error()).contains("still running"), again.error().c_str());
    waitUntil([&] { return readLaunchStatus(run).ended; });
    status = readLaunchStatus(run);
    QVERIFY(status.ended && !status.running);
    QCOMPARE(status.exit_code, 3);
    QVERIFY(status.stderr_tail.find("args: train 1") != std::string::npos);
    QVERIFY(status.stderr_tail.find("/dev/null") != std::string::npos);
    // A session of its own (led by its watcher), not the caller's: a hang-up there does not reach it.
    const qint64 session = QString::fromStdString(status.stderr_tail).section('\n', -2, -2).trimmed().toLongLong();
    QVERIFY(session > 0);
    QVERIFY(session != ::getsid(0));
    const auto late = signalLaunchedTraining(run, SIGINT);
    QVERIFY(!late.ok());
    QVERIFY2(QString::fromStdString(late.error()).contains("is not running"), late.error().c_str());

    // Killed: the record says by which signal.
    pid = launchDetachedTraining(run, script.toStdString(), {"train", "30"});
    QVERIFY(pid.ok());
    QVERIFY(signalLaunchedTraining(run, SIGKILL).ok());
    waitUntil([&] { return readLaunchStatus(run).ended; });
    QCOMPARE(readLaunchStatus(run).signal_number, SIGKILL);

    const auto missing = launchDetachedTraining(run, dir_.filePath("no-such-program").toStdString(), {});
    QVERIFY(!missing.ok());
    QVERIFY2(QString::fromStdString(missing.error()).contains("No such file"), missing.error().c_str());
  }

  // A launch record whose pid is not a pid (edited, or garbage): not running, and a signal is
  // refused with the file named. 4294967295 was -1 as a pid_t: kill(-1, SIG) would have reached
  // every process of the user. The signal sent here is 0 (only a check), so the test is harmless
  // even where the check would let the pid through.
  void recordWithoutAValidPid_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("said");
    const QString allowed = QString(" (allowed: 1 to %1); nothing was signalled").arg(processIdLimit() - 1);
    QTest::newRow("uint32 max") << QByteArray("4294967295\n") << "pid 4294967295 is not a process id" + allowed;
    const qint64 wraps = (1LL << 32) + ::getpid();  // this test's own pid as a pid_t
    QTest::newRow("2^32 + this process") << QByteArray::number(wraps) + "\n" << QString("pid %1 is not a process id").arg(wraps) + allowed;
    QTest::newRow("-1") << QByteArray("-1\n") << "pid -1 is not a process id" + allowed;
    QTest::newRow("zero") << QByteArray("0\n") << "it does not hold a process id" + allowed;
    QTest::newRow("pid_max") << QByteArray::number(processIdLimit()) << QString("pid %1 is not a process id").arg(processIdLimit()) + allowed;
    QTest::newRow("not a number") << QByteArray("abc\n") << "it does not hold a process id" + allowed;
    QTest::newRow("number and garbage") << QByteArray("12abc\n") << "it does not hold a process id" + allowed;
  }
  void recordWithoutAValidPid() {
    QFETCH(QByteArray, text);
    QFETCH(QString, said);
    const QString run = dir_.filePath("bad-pid-" + QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-'));
    QVERIFY(writeLaunchText(run + "/launch/pid", text));
    const LaunchStatus status = readLaunchStatus(run.toStdString());
    QVERIFY(status.launched);
    QVERIFY(!status.running);
    const Status sent = signalLaunchedTraining(run.toStdString(), 0);
    QVERIFY(!sent.ok());
    QCOMPARE(QString::fromStdString(sent.error()), run + "/launch/pid: " + said);
    const CliResult cli = runCli({"remote", "status", run});
    QCOMPARE(cli.exit_code, 0);
    QVERIFY2(cli.out.contains("\"running\":false"), qPrintable(cli.out));
  }

  // The record keeps the process's start time: a pid now another process's (here: the start time
  // edited, as if the process had ended and its pid been handed on) is neither running nor
  // signalled, by the library or the CLI; a record from before start times (none) still works.
  void reusedPidIsNotSignalled() {
    const QString script = dir_.filePath("fake-streetgan-sleeper");
    // A shell that stays a shell (its command line names fake-streetgan), and leaves no long sleep
    // behind when it is killed.
    QVERIFY(writeScript(script, "i=0\nwhile [ $i -lt \"$2\" ]; do sleep 1; i=$((i+1)); done\n"));
    const std::string run = dir_.filePath("reused").toStdString();
    const auto pid = launchDetachedTraining(run, script.toStdString(), {"train", "30"});
    QVERIFY2(pid.ok(), pid.ok() ? "" : pid.error().c_str());
    const auto start = processStartTime(*pid);
    QVERIFY(start.has_value());
    const QString start_file = QString::fromStdString(launchRecordDir(run)) + "/start-time";
    QCOMPARE(readFileBytes(start_file), QByteArray::number(qulonglong(*start)) + "\n");
    QCOMPARE(readLaunchStatus(run).start_time, *start);
    QVERIFY(readLaunchStatus(run).running);

    QVERIFY(writeLaunchText(start_file, QByteArray::number(qulonglong(*start + 1)) + "\n"));
    QVERIFY(!readLaunchStatus(run).running);
    const Status refused = signalLaunchedTraining(run, SIGKILL);
    QVERIFY(!refused.ok());
    QCOMPARE(QString::fromStdString(refused.error()),
             QString::fromStdString(run) + QString(": pid %1 is no longer the run's training process (the pid was "
                                                   "reused by another process); nothing was signalled").arg(*pid));
    const CliResult cli = runCli({"remote", "signal", QString::fromStdString(run), "kill"});
    QCOMPARE(cli.exit_code, 1);
    QVERIFY2(cli.err.contains("no longer the run's training process"), qPrintable(cli.err));
    QVERIFY(::kill(static_cast<pid_t>(*pid), 0) == 0);
    QVERIFY(processStartTime(*pid) == start);  // the same process, untouched

    // The run's events.jsonl names it the same way: with the wrong start time, not running.
    const QByteArray started = QString(R"({"v":1,"type":"run_started","time":1,"pid":%1,"pid_start_time":%2})" "\n")
                                   .arg(*pid).arg(qulonglong(*start + 1)).toUtf8();
    QVERIFY(writeLaunchText(QString::fromStdString(run) + "/events.jsonl", started));
    auto summary = readRunSummary(run);
    QVERIFY(summary.ok());
    QCOMPARE(summary->state, RunState::Failed);
    QVERIFY(writeLaunchText(QString::fromStdString(run) + "/events.jsonl",
                      QString(R"({"v":1,"type":"run_started","time":1,"pid":%1,"pid_start_time":%2})" "\n")
                          .arg(*pid).arg(qulonglong(*start)).toUtf8()));
    summary = readRunSummary(run);
    QVERIFY(summary.ok());
    QCOMPARE(summary->state, RunState::Running);

    // A record written before start times were kept: only a `streetgan train …` command line is
    // taken for the run (the review's `remote signal` killed `streetgan serve`, `tail -f
    // streetgan.log` and a process renamed streetgan-helper). This one is fake-streetgan-sleeper.
    QVERIFY(QFile::remove(start_file));
    QCOMPARE(readLaunchStatus(run).start_time, std::uint64_t(0));
    QVERIFY(!readLaunchStatus(run).running);
    QVERIFY(!signalLaunchedTraining(run, SIGKILL).ok());
    QVERIFY(processStartTime(*pid) == start);  // untouched
    ::kill(static_cast<pid_t>(*pid), SIGKILL);
    waitUntil([&] { return readLaunchStatus(run).ended; });

    // The same with a program named streetgan, run as `streetgan train …`: signalled.
    QVERIFY(QDir().mkpath(dir_.filePath("legacy-bin")));
    const QString named = dir_.filePath("legacy-bin/streetgan");
    QVERIFY(writeScript(named, "i=0\nwhile [ $i -lt \"$2\" ]; do sleep 1; i=$((i+1)); done\n"));
    const std::string legacy = dir_.filePath("legacy").toStdString();
    const auto legacy_pid = launchDetachedTraining(legacy, named.toStdString(), {"train", "30"});
    QVERIFY2(legacy_pid.ok(), legacy_pid.ok() ? "" : legacy_pid.error().c_str());
    QVERIFY(QFile::remove(QString::fromStdString(launchRecordDir(legacy)) + "/start-time"));
    QVERIFY(readLaunchStatus(legacy).running);
    const Status killed = signalLaunchedTraining(legacy, SIGKILL);
    QVERIFY2(killed.ok(), killed.ok() ? "" : killed.error().c_str());
    waitUntil([&] { return readLaunchStatus(legacy).ended; });
    QCOMPARE(readLaunchStatus(legacy).signal_number, SIGKILL);
  }

  // The real CLI: launch a run, follow it from the start and from an offset, read its status,
  // get its files; bad requests are named.
  void remoteCommandsOnARealRun() {
    const QString run = dir_.filePath("real run");
    const QStringList train = tinyTrainArgs(data_, run, 2).mid(3);  // without "train --dataroot D"
    auto launched = runCli(QStringList{"remote", "launch", run, "--config-json", R"({"batch_size":8})",
                                       "--dataroot", data_} + train.mid(2));
    QVERIFY2(launched.exit_code == 0, qPrintable(launched.err));
    const CliResult followed = runCli({"remote", "follow", run});
    QCOMPARE(followed.exit_code, 0);
    const QByteArray log = readFileBytes(run + "/events.jsonl");
    QCOMPARE(followed.out.toUtf8(), log);
    QVERIFY(log.contains("\"run_finished\""));
    const CliResult tail = runCli({"remote", "follow", run, "--offset", QString::number(log.size() - 100)});
    QCOMPARE(tail.out.toUtf8(), log.right(100));
    const CliResult past = runCli({"remote", "follow", run, "--offset", QString::number(log.size() + 1)});
    QCOMPARE(past.exit_code, 1);
    QVERIFY2(past.err.contains("is past its end"), qPrintable(past.err));

    const CliResult status = runCli({"remote", "status", run});
    QCOMPARE(status.exit_code, 0);
    QVERIFY2(status.out.contains("\"exit_code\":0") && status.out.contains("\"running\":false") &&
             status.out.contains(QString("\"events_bytes\":%1").arg(log.size())), qPrintable(status.out));
    const CliResult stop = runCli({"remote", "signal", run, "stop"});
    QCOMPARE(stop.exit_code, 1);
    QVERIFY2(stop.err.contains("is not running"), qPrintable(stop.err));

    const CliResult got = runCli({"remote", "get", run, "config.json", "../x", "launch/config.json"});
    QCOMPARE(got.exit_code, 1);
    const QByteArray config = readFileBytes(run + "/config.json");
    const QByteArray sent = readFileBytes(run + "/launch/config.json");
    QCOMPARE(sent, QByteArray(R"({"batch_size":8})"));
    QCOMPARE(got.out.toUtf8(), "size " + QByteArray::number(config.size()) + "\n" + config +
                                   "error '../x' is not a path inside the run directory (it climbs out with '..')\n" +
                                   "size " + QByteArray::number(sent.size()) + "\n" + sent);

    const CliResult bad = runCli({"remote", "launch", run, "--config-json", "{not json"});
    QCOMPARE(bad.exit_code, 2);
    QVERIFY2(bad.err.contains("'--config-json'") && bad.err.contains("not valid JSON"), qPrintable(bad.err));
    QCOMPARE(runCli({"remote", "nonsense"}).exit_code, 2);
    QVERIFY(runCli({"remote", "--help"}).out.contains("follow RUN_DIR"));
  }

  // A run folder may come from another host or another user: its record files, log and events
  // as FIFOs (the open blocked for ever) or links to /dev/zero (read without end, until memory
  // ran out). status, follow and get now read regular files only, and bounded.
  void hostileRecordFiles() {
    const QString run = dir_.filePath("hostile");
    QVERIFY(QDir().mkpath(run + "/launch"));
    QVERIFY(writeLaunchText(run + "/launch/pid", QByteArray::number(qint64(::getpid())) + "\n"));
    QCOMPARE(::mkfifo(QFile::encodeName(run + "/launch/exit-status").constData(), 0600), 0);
    QVERIFY(QFile::link("/dev/zero", run + "/launch/start-time"));
    QVERIFY(QFile::link("/dev/zero", run + "/launch/stderr.log"));
    QCOMPARE(::mkfifo(QFile::encodeName(run + "/events.jsonl").constData(), 0600), 0);
    QVERIFY(QFile::link("/dev/zero", run + "/zero"));

    const CliResult status = runCli({"remote", "status", run}, 60000);  // the hang guard
    QCOMPARE(status.exit_code, 0);
    // The pid is this test's own, but no start time was read and it is no streetgan: not running.
    QVERIFY2(status.out.contains("\"running\":false") && status.out.contains("\"stderr_tail\":\"\""), qPrintable(status.out));
    QVERIFY(status.out.size() < 4096);

    const CliResult followed = runCli({"remote", "follow", run}, 60000);
    QCOMPARE(followed.exit_code, 1);
    QVERIFY2(followed.err.contains(run + "/events.jsonl: not a regular file"), qPrintable(followed.err));

    const CliResult got = runCli({"remote", "get", run, "events.jsonl", "zero", "launch"}, 60000);
    QCOMPARE(got.exit_code, 1);
    QCOMPARE(got.out, "error " + run + "/events.jsonl: not a regular file\n" +
                          "error 'zero' is not a path inside the run directory (a link leads out of the run directory)\n" +
                          "error " + run + "/launch: a folder, not a regular file\n");
  }
};

STREETGAN_TEST_GUILESS_MAIN(RunLaunchTest)
#include "tst_run_launch.moc"
