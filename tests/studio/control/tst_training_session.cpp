// TrainingSession over LocalProcessTransport, with the real `streetgan train` on tiny demo data:
// every event of a run delivered once and in order; stop (SIGINT) and resume; a child killed
// mid-run shows as failed with its stderr; garbage on the event stream is skipped and counted;
// a missing program; a detached run carries on to completion without the session; Kill ends the
// child's whole process group (a `--nproc 2` launcher's ranks with it). And FollowedRunTransport
// signals the pid a run's log names only while it is that run's process.
#include "app/studio/control/followed_run_transport.h"
#include "app/studio/control/local_process_transport.h"
#include "app/studio/control/training_session.h"
#include "core/runs/process_identity.h"
#include "tests/support/status_check.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

using namespace streetgan;
using namespace streetgan::studio;
using namespace streetgan::test;

namespace {

/// The tiny run of test_support as a request (its training flags after --run-dir and --dataroot).
TrainingRequest tinyRequest(const QString& data, const QString& run_dir, int epochs) {
  QStringList args = tinyTrainArgs(data, run_dir, epochs);
  TrainingRequest request;
  request.run_dir = run_dir;
  request.dataroot = data;
  // Drop "train", --dataroot D and --run-dir R: the request carries those.
  for (int i = 1; i < args.size(); ++i) {
    if (args[i] == "--dataroot" || args[i] == "--run-dir") {
      ++i;
      continue;
    }
    request.extra_arguments << args[i];
  }
  return request;
}

struct Recorder {
  std::vector<StreamEvent> events;
  void attach(TrainingSession& session) {
    QObject::connect(&session, &TrainingSession::eventsReceived, &session,
                     [this](const std::vector<StreamEvent>& batch) { events.insert(events.end(), batch.begin(), batch.end()); });
  }
  int count(const std::string& type) const {
    return static_cast<int>(std::count_if(events.begin(), events.end(), [&](const StreamEvent& e) { return e.type == type; }));
  }
};


// A run folder whose events.jsonl names `pid` (and `start_time`, when not 0) as its process.
QString runNaming(const QString& dir, qint64 pid, quint64 start_time) {
  QDir().mkpath(dir);
  QFile events(dir + "/events.jsonl");
  if (!events.open(QIODevice::WriteOnly | QIODevice::Truncate)) return dir;
  QString line = QString(R"({"v":1,"type":"run_started","time":1,"pid":%1)").arg(pid);
  if (start_time != 0) line += QString(R"(,"pid_start_time":%1)").arg(start_time);
  events.write(line.toUtf8() + "}\n");
  return dir;
}

}  // namespace

class TestTrainingSession : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void argumentsOfARequest();
  void completeRunDeliversEveryEventOnce();
  void stopThenResume();
  void killedChildShowsAsFailedWithItsStderr();
  void garbageOnTheStreamIsSkippedAndCounted();
  void missingProgram();
  void detachedRunCarriesOn();
  void killEndsTheWholeProcessGroup();
  void killEndsTheRanksOfAMultiRankRun();
  void followedRunSignalsOnlyItsOwnProcess();
  void followedRunWithAPidThatIsNotOne_data();
  void followedRunWithAPidThatIsNotOne();

private:
  QTemporaryDir dir_;
  QString data_;
};

void TestTrainingSession::initTestCase() {
  qRegisterMetaType<SessionState>();
  data_ = makeTinyDataset(dir_.filePath("data"));
}

void TestTrainingSession::argumentsOfARequest() {
  TrainingRequest request;
  request.run_dir = "/runs/a b";
  request.dataroot = "/data";
  request.config_file = "/c.json";
  request.extra_arguments = {"--epochs", "3"};
  QCOMPARE(TrainingSession::argumentsFor(request),
           (QStringList{"train", "--run-dir", "/runs/a b", "--events", "-", "--dataroot", "/data", "--config",
                        "/c.json", "--epochs", "3"}));
  request.resume = true;
  request.dataroot.clear();
  request.config_file.clear();
  request.extra_arguments.clear();
  QCOMPARE(TrainingSession::argumentsFor(request),
           (QStringList{"train", "--run-dir", "/runs/a b", "--events", "-", "--resume"}));
}

void TestTrainingSession::completeRunDeliversEveryEventOnce() {
  TrainingSession session(std::make_unique<LocalProcessTransport>(STREETGAN_CLI));
  Recorder recorder;
  recorder.attach(session);
  QSignalSpy finished(&session, &TrainingSession::finished);
  QSignalSpy states(&session, &TrainingSession::stateChanged);
  const QString run = dir_.filePath("complete");
  QVERIFY(session.start(tinyRequest(data_, run, 2)));
  QVERIFY(finished.wait(300000));
  QCOMPARE(session.state(), SessionState::Completed);
  QCOMPARE(states.first().first().value<SessionState>(), SessionState::Starting);
  QCOMPARE(states.at(1).first().value<SessionState>(), SessionState::Running);
  QCOMPARE(session.malformedLines(), 0);
  // Exactly the events of events.jsonl, in order.
  const auto logged = readEvents(run);
  QCOMPARE(static_cast<int>(recorder.events.size()), logged.size());
  for (int i = 0; i < logged.size(); ++i) {
    QCOMPARE(QString::fromStdString(recorder.events[i].type), logged[i].value("type").toString());
    if (recorder.events[i].type == "step")
      QCOMPARE(recorder.events[i].body["step"].get<int>(), logged[i].value("step").toInt());
  }
  QVERIFY(recorder.count("step") > 0);
  QCOMPARE(recorder.count("epoch_end"), 2);
  QCOMPARE(recorder.events.back().type, std::string("run_finished"));
}

void TestTrainingSession::stopThenResume() {
  const QString run = dir_.filePath("stopped");
  {
    TrainingSession session(std::make_unique<LocalProcessTransport>(STREETGAN_CLI));
    Recorder recorder;
    recorder.attach(session);
    QSignalSpy finished(&session, &TrainingSession::finished);
    QVERIFY(session.start(tinyRequest(data_, run, 200)));
    QTRY_VERIFY_WITH_TIMEOUT(recorder.count("step") >= 1, 120000);
    session.stop();
    QCOMPARE(session.state(), SessionState::Stopping);
    QVERIFY(finished.wait(120000));
    QCOMPARE(session.state(), SessionState::Stopped);
    QCOMPARE(recorder.events.back().type, std::string("run_finished"));
    QCOMPARE(recorder.events.back().body["status"].get<std::string>(), std::string("stopped"));
  }
  TrainingSession session(std::make_unique<LocalProcessTransport>(STREETGAN_CLI));
  Recorder recorder;
  recorder.attach(session);
  QSignalSpy finished(&session, &TrainingSession::finished);
  TrainingRequest resume;
  resume.run_dir = run;
  resume.resume = true;
  resume.extra_arguments = {"--epochs", "2"};
  QVERIFY(session.start(resume));
  QVERIFY(finished.wait(300000));
  QVERIFY2(session.state() == SessionState::Completed, qPrintable(session.errorMessage() + "\n" + session.stderrTail()));
  QVERIFY(!recorder.events.empty());
  QCOMPARE(recorder.events.front().type, std::string("run_started"));
  QVERIFY(recorder.events.front().body["resumed_from"].is_string());
}

void TestTrainingSession::killedChildShowsAsFailedWithItsStderr() {
  auto transport = std::make_unique<LocalProcessTransport>(STREETGAN_CLI);
  LocalProcessTransport* local = transport.get();
  TrainingSession session(std::move(transport));
  Recorder recorder;
  recorder.attach(session);
  QSignalSpy finished(&session, &TrainingSession::finished);
  QVERIFY(session.start(tinyRequest(data_, dir_.filePath("killed"), 200)));
  QTRY_VERIFY_WITH_TIMEOUT(recorder.count("step") >= 1, 120000);
  // As the kernel's OOM killer would: from outside, without warning.
  QVERIFY(::kill(static_cast<pid_t>(local->pid()), SIGKILL) == 0);
  QVERIFY(finished.wait(60000));
  QCOMPARE(session.state(), SessionState::Failed);
  QVERIFY2(session.errorMessage().contains("killed by signal 9"), qPrintable(session.errorMessage()));
  const QString message = finished.first().at(1).toString();
  QVERIFY2(message.contains("run directory:"), qPrintable(message));  // the stderr tail
  QVERIFY(session.stderrTail().contains("run directory:"));
}

void TestTrainingSession::garbageOnTheStreamIsSkippedAndCounted() {
  // A real process printing a stream with garbage between events, and a truncated last line.
  QTemporaryDir dir;
  const QString script = dir.filePath("fake-streetgan");
  QVERIFY(writeScript(script,
             "printf 'Loading...\\n'\n"
             "printf '{\"v\":1,\"type\":\"run_started\",\"time\":1}\\n'\n"
             "printf '{\"v\":1,\"type\":\"step\",\"step\":1,\"loss_d\":0.5}\\n'\n"
             "printf '\\001\\002 not json\\n[1,2]\\n{\"type\":\\n'\n"
             "printf '{\"v\":1,\"type\":\"run_finished\",\"status\":\"completed\"}\\n'\n"
             "printf '{\"v\":1,\"type\":\"ste'\n"));
  TrainingSession session(std::make_unique<LocalProcessTransport>(script));
  Recorder recorder;
  recorder.attach(session);
  QSignalSpy finished(&session, &TrainingSession::finished);
  QVERIFY(session.start(tinyRequest(data_, dir.filePath("run"), 1)));
  QVERIFY(finished.wait(30000));
  QCOMPARE(session.state(), SessionState::Completed);
  QCOMPARE(session.eventCount(), 3);
  QCOMPARE(session.malformedLines(), 5);  // Loading..., binary, [1,2], {"type":, the truncated line
  QCOMPARE(recorder.count("step"), 1);
}

void TestTrainingSession::missingProgram() {
  TrainingSession session(std::make_unique<LocalProcessTransport>("/nonexistent/streetgan"));
  QSignalSpy finished(&session, &TrainingSession::finished);
  QVERIFY(!session.start(tinyRequest(data_, dir_.filePath("never"), 1)));
  QCOMPARE(session.state(), SessionState::Failed);
  QCOMPARE(session.errorMessage(), QString("cannot start /nonexistent/streetgan: No such file or directory"));
  QCOMPARE(finished.size(), 1);
}

void TestTrainingSession::detachedRunCarriesOn() {
  const QString run = dir_.filePath("detached");
  {
    TrainingSession session(std::make_unique<LocalProcessTransport>(STREETGAN_CLI));
    Recorder recorder;
    recorder.attach(session);
    QVERIFY(session.start(tinyRequest(data_, run, 3)));
    QTRY_VERIFY_WITH_TIMEOUT(recorder.count("step") >= 1, 120000);
    session.detach();
    QCOMPARE(session.state(), SessionState::Detached);
  }  // the session and its transport are gone; the process is not
  QTRY_VERIFY_WITH_TIMEOUT(!readEvents(run).isEmpty() && readEvents(run).last().value("type").toString() == "run_finished",
                           300000);
  const auto events = readEvents(run);
  QCOMPARE(events.last().value("status").toString(), QString("completed"));
  QCOMPARE(eventsOfType(events, "epoch_end").size(), 3);
}

// Kill reaches what the child started in its group, not only the child: here a shell's `sleep`.
void TestTrainingSession::killEndsTheWholeProcessGroup() {
  QTemporaryDir dir;
  const QString script = dir.filePath("fake-streetgan");
  QVERIFY(writeScript(script, "sleep 300 &\necho \"$!\"\nwait\n"));
  LocalProcessTransport transport(script);
  QByteArray out;
  connect(&transport, &TrainingTransport::eventBytes, this, [&](const QByteArray& bytes) { out += bytes; });
  QSignalSpy ended(&transport, &TrainingTransport::ended);
  QString error;
  QVERIFY2(succeeded(transport.start({}), &error), qPrintable(error));
  QTRY_VERIFY_WITH_TIMEOUT(out.contains('\n'), 60000);
  const qint64 sleeper = out.trimmed().toLongLong();
  QVERIFY(sleeper > 0);
  const QByteArray start = liveStartTime(sleeper);
  QVERIFY(!start.isEmpty());
  transport.kill();
  QVERIFY(ended.wait(60000));
  const QStringList left = waitUntilGone({{sleeper, start}});
  QVERIFY2(left.isEmpty(), qPrintable("still running after Kill: " + left.join(", ")));
}

// The studio's Kill on `streetgan train --nproc 2`: the launcher and both ranks end.
void TestTrainingSession::killEndsTheRanksOfAMultiRankRun() {
  auto transport = std::make_unique<LocalProcessTransport>(STREETGAN_CLI);
  LocalProcessTransport* local = transport.get();
  TrainingSession session(std::move(transport));
  Recorder recorder;
  recorder.attach(session);
  QSignalSpy finished(&session, &TrainingSession::finished);
  TrainingRequest request = tinyRequest(data_, dir_.filePath("ranks-killed"), 200);
  request.extra_arguments << "--nproc" << "2";
  QVERIFY(session.start(request));
  QTRY_VERIFY_WITH_TIMEOUT(recorder.count("step") >= 1, 120000);
  QList<QPair<qint64, QByteArray>> ranks;
  for (const qint64 pid : childrenOf(local->pid())) ranks.push_back({pid, liveStartTime(pid)});
  QCOMPARE(ranks.size(), 2);
  session.kill();
  QVERIFY(finished.wait(60000));
  QCOMPARE(session.state(), SessionState::Failed);
  const QStringList left = waitUntilGone(ranks);
  QVERIFY2(left.isEmpty(), qPrintable("ranks still running after Kill: " + left.join(", ")));
}

// A followed run's log names a live `streetgan` process, but with another start time (its pid was
// reused): Stop and Kill say so and leave it alone, and the run counts as ended. A log that names
// the right pid and start time of a process writing another run's log (a log copied or crafted to
// name another training process: issue 49) is refused too. With the right start time, from the
// log the process writes, Kill reaches it.
void TestTrainingSession::followedRunSignalsOnlyItsOwnProcess() {
  QTemporaryDir dir;
  const QString script = dir.filePath("fake-streetgan");
  // A shell that stays a shell (its command line names fake-streetgan), holds its run's log open
  // for appending, as the trainer does, and leaves no long sleep behind.
  QVERIFY(writeScript(script, "exec 3>>\"$1\"\nwhile :; do sleep 1; done\n"));
  const QString own = runNaming(dir.filePath("own"), 0, 0);
  QProcess other;
  other.start(script, {own + "/events.jsonl"});
  QVERIFY(other.waitForStarted());
  const qint64 pid = other.processId();
  const auto start = streetgan::processStartTime(pid);
  QVERIFY(start.has_value());

  {
    FollowedRunTransport transport(runNaming(dir.filePath("reused"), pid, *start + 1));
    QByteArray said;
    connect(&transport, &TrainingTransport::diagnosticBytes, this, [&](const QByteArray& bytes) { said += bytes; });
    QSignalSpy ended(&transport, &TrainingTransport::ended);
    QString error;
    QVERIFY2(succeeded(transport.start({}), &error), qPrintable(error));
    transport.interrupt();
    transport.kill();
    QVERIFY2(said.contains("is no longer the run's training process") && said.contains("nothing was signalled"), said.constData());
    QVERIFY(ended.wait(60000));  // not the run's process: the run is over
    QVERIFY(!other.waitForFinished(500));
    QCOMPARE(other.state(), QProcess::Running);
  }

  {
    FollowedRunTransport transport(runNaming(dir.filePath("crafted"), pid, *start));
    QByteArray said;
    connect(&transport, &TrainingTransport::diagnosticBytes, this, [&](const QByteArray& bytes) { said += bytes; });
    QString error;
    QVERIFY2(succeeded(transport.start({}), &error), qPrintable(error));
    transport.kill();
    QVERIFY2(said.contains("does not write " + dir.filePath("crafted/events.jsonl").toUtf8() +
                           ", so it is not the run's training process; nothing was signalled"),
             said.constData());
    QVERIFY(!other.waitForFinished(500));
    QCOMPARE(other.state(), QProcess::Running);
  }

  // The shell has opened its log by now (it took three blocks above); should it not have, wait.
  QTRY_VERIFY_WITH_TIMEOUT(streetgan::checkTrainingProcess(pid, "fake-streetgan", *start, {}, (own + "/events.jsonl").toStdString()) ==
                               streetgan::ProcessCheck::Alive,
                           10000);
  FollowedRunTransport transport(runNaming(own, pid, *start));
  QSignalSpy ended(&transport, &TrainingTransport::ended);
  QString error;
  QVERIFY2(succeeded(transport.start({}), &error), qPrintable(error));
  QTest::qWait(300);
  QVERIFY(transport.isRunning());  // its process runs
  transport.kill();
  QVERIFY(other.waitForFinished(60000));
  QCOMPARE(other.exitStatus(), QProcess::CrashExit);
  QVERIFY(ended.wait(60000));
}

// A log whose pid is not a pid (4294967295 is -1 as a pid_t; 2^32 + ours is ours): the run is not
// running and its transport ends. (Nothing is signalled here: before the check, a Kill would have
// been kill(-1, SIGKILL), every process of the user.)
void TestTrainingSession::followedRunWithAPidThatIsNotOne_data() {
  QTest::addColumn<qint64>("pid");
  QTest::newRow("uint32 max") << qint64(4294967295LL);
  QTest::newRow("2^32 + this process") << qint64((1LL << 32) + QCoreApplication::applicationPid());
  QTest::newRow("zero") << qint64(0);
  QTest::newRow("negative") << qint64(-1);
}

void TestTrainingSession::followedRunWithAPidThatIsNotOne() {
  QFETCH(qint64, pid);
  QTemporaryDir dir;
  FollowedRunTransport transport(runNaming(dir.filePath("run"), pid, 0), "");  // "": any command line
  QSignalSpy ended(&transport, &TrainingTransport::ended);
  QString error;
  QVERIFY2(succeeded(transport.start({}), &error), qPrintable(error));
  QVERIFY(ended.wait(60000));
  QVERIFY(!transport.isRunning());
}

STREETGAN_TEST_GUILESS_MAIN(TestTrainingSession)
#include "tst_training_session.moc"
