// TrainingSession over LocalProcessTransport, with the real `streetgan train` on tiny demo data:
// every event of a run delivered once and in order; stop (SIGINT) and resume; a child killed
// mid-run shows as failed with its stderr; garbage on the event stream is skipped and counted;
// a missing program; a detached run carries on to completion without the session.
#include "app/studio/control/local_process_transport.h"
#include "app/studio/control/training_session.h"
#include "tests/support/test_support.h"

#include <QFile>
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

QTEST_GUILESS_MAIN(TestTrainingSession)
#include "tst_training_session.moc"
