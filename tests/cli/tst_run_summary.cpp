// RunSummary: the Runs tab's view of a run directory, from hand-written event logs (every state,
// resumes, garbage and truncated lines, byte-by-byte feeding, quality figures and alarms, saved
// metrics files) and from a real run of the CLI; and the checks on the logged pid (never trusted
// as read: range, start time).
#include "core/runs/quality_evaluation_file.h"
#include "core/runs/process_identity.h"
#include "core/runs/run_summary.h"

#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <climits>
#include <csignal>
#include <unistd.h>

using namespace streetgan;

namespace {

QByteArray started(qint64 pid, int step = 0, int images = 0, int epoch = 0) {
  return QString(R"({"v":1,"type":"run_started","time":100,"device":"cpu","pid":%1,"step":%2,"images_seen":%3,"epoch":%4,"config":{"epochs":5,"preset":"safe-64"}})")
             .arg(pid).arg(step).arg(images).arg(epoch).toUtf8() + "\n";
}
QByteArray step(int n, double loss_d, double loss_g) {
  return QString(R"({"v":1,"type":"step","time":%1,"epoch":1,"iteration":%2,"iterations":10,"step":%2,"images_seen":%3,"loss_d":%4,"loss_g":%5})")
             .arg(100 + n).arg(n).arg(16 * n).arg(loss_d).arg(loss_g).toUtf8() + "\n";
}
QByteArray parzen(int epoch, double mean) {
  return QString(R"({"v":1,"type":"parzen","time":200,"epoch":%1,"mean_ll":%2,"stderr":1.5})").arg(epoch).arg(mean).toUtf8() + "\n";
}
QByteArray epochEnd(int epoch) {
  return QString(R"({"v":1,"type":"epoch_end","time":150,"epoch":%1,"epochs":5})").arg(epoch).toUtf8() + "\n";
}
QByteArray finished(const char* status, int epoch, const char* message = nullptr) {
  QString line = QString(R"({"v":1,"type":"run_finished","time":300,"status":"%1","epoch":%2)").arg(status).arg(epoch);
  if (message) line += QString(R"(,"message":"%1")").arg(message);
  return line.toUtf8() + "}\n";
}

RunSummary summarize(const QByteArray& log, bool alive, std::size_t chunk = 0) {
  RunSummaryBuilder builder("/runs/some-run/");
  if (chunk == 0) {
    builder.feed(std::string_view(log.constData(), static_cast<std::size_t>(log.size())));
  } else {
    for (qsizetype at = 0; at < log.size(); at += static_cast<qsizetype>(chunk))
      builder.feed(std::string_view(log.constData() + at, std::min<std::size_t>(chunk, static_cast<std::size_t>(log.size() - at))));
  }
  return builder.summary(alive);
}

}  // namespace

class TestRunSummary : public QObject {
  Q_OBJECT
private slots:
  void states_data() {
    QTest::addColumn<QByteArray>("log");
    QTest::addColumn<bool>("alive");
    QTest::addColumn<QString>("state");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<qint64>("epoch");
    QTest::addColumn<double>("loss_d");
    QTest::addColumn<double>("best_parzen");  // NaN: none
    QTest::addColumn<qint64>("malformed");
    QTest::addColumn<QString>("message");
    const double none = std::nan("");
    QTest::newRow("empty log") << QByteArray() << false << "not started" << qint64(0) << qint64(0) << none << none << qint64(0) << "";
    QTest::newRow("running") << started(42) + step(1, 1.5, 0.5) + step(2, 1.25, 0.75) << true << "running" << qint64(2) << qint64(0) << 1.25 << none << qint64(0) << "";
    QTest::newRow("gone without run_finished") << started(42) + step(1, 1.5, 0.5) << false << "failed" << qint64(1) << qint64(0) << 1.5 << none << qint64(0)
                                               << "the training process ended without finishing the run (killed or crashed)";
    QTest::newRow("completed") << started(42) + step(1, 1.5, 0.5) + epochEnd(1) + parzen(1, -300) + step(2, 1.0, 2.0) + epochEnd(2) + parzen(2, -250.5) + finished("completed", 2)
                               << false << "completed" << qint64(2) << qint64(2) << 1.0 << -250.5 << qint64(0) << "";
    QTest::newRow("best parzen is the highest, not the last") << started(42) + parzen(1, -200) + parzen(2, -260) + finished("stopped", 2)
                                                              << false << "stopped" << qint64(0) << qint64(2) << none << -200.0 << qint64(0) << "";
    QTest::newRow("failed with a message") << started(42) + finished("failed", 0, "out of memory") << false << "failed" << qint64(0) << qint64(0) << none << none << qint64(0) << "out of memory";
    QTest::newRow("error event then killed") << started(42) + QByteArray(R"({"v":1,"type":"error","time":1,"message":"disk full"})" "\n") << false << "failed" << qint64(0) << qint64(0) << none << none << qint64(0) << "disk full";
    QTest::newRow("resumed after a stop") << started(42) + step(1, 1.5, 0.5) + step(2, 1.4, 0.5) + finished("stopped", 0) + started(43, 2, 32) + step(3, 0.5, 0.5)
                                          << true << "running" << qint64(3) << qint64(0) << 0.5 << none << qint64(0) << "";
    // A killed process logged steps past its checkpoint (step 1); the resumed one starts from it.
    QTest::newRow("resumed after a kill, no step yet") << started(42) + step(1, 1.5, 0.5) + step(2, 1.4, 0.5) + started(43, 1, 16)
                                                       << true << "running" << qint64(1) << qint64(0) << none << none << qint64(0) << "";
    QTest::newRow("garbage lines") << started(42) + "not json\n{\"no type\":1}\n[1,2]\n\n" + step(1, 1.5, 0.5) + "{\"type\":\"step\",\"v\":1,\"step\":\n" + finished("completed", 1)
                                   << false << "completed" << qint64(1) << qint64(1) << 1.5 << none << qint64(4) << "";
    QTest::newRow("truncated last line") << started(42) + step(1, 1.5, 0.5) + finished("completed", 1).left(30) << true << "running" << qint64(1) << qint64(0) << 1.5 << none << qint64(0) << "";
    QTest::newRow("unknown types and fields") << started(42) + R"({"v":1,"type":"tensorboard_flush","time":5})" "\n" + step(1, 1.5, 0.5) + finished("completed", 1)
                                              << false << "completed" << qint64(1) << qint64(1) << 1.5 << none << qint64(0) << "";
  }
  void states() {
    QFETCH(QByteArray, log);
    QFETCH(bool, alive);
    QFETCH(QString, state);
    QFETCH(qint64, step);
    QFETCH(qint64, epoch);
    QFETCH(double, loss_d);
    QFETCH(double, best_parzen);
    QFETCH(qint64, malformed);
    QFETCH(QString, message);
    for (std::size_t chunk : {std::size_t(0), std::size_t(1), std::size_t(7)}) {
      const RunSummary s = summarize(log, alive, chunk);
      QCOMPARE(QString(runStateName(s.state)), state);
      QCOMPARE(qint64(s.step), step);
      QCOMPARE(qint64(s.epoch), epoch);
      QCOMPARE(s.loss_d.has_value(), !std::isnan(loss_d));
      if (s.loss_d) QCOMPARE(*s.loss_d, loss_d);
      QCOMPARE(s.best_parzen.has_value(), !std::isnan(best_parzen));
      if (s.best_parzen) QCOMPARE(*s.best_parzen, best_parzen);
      QCOMPARE(qint64(s.malformed_lines), malformed);
      QCOMPARE(QString::fromStdString(s.message), message);
      QCOMPARE(QString::fromStdString(s.name), QString("some-run"));
    }
  }

  void followsFromItsOffset() {
    const QByteArray first = started(42) + step(1, 1.5, 0.5) + step(2, 1.0, 0.5).left(20);
    RunSummaryBuilder builder("/runs/r");
    builder.feed(std::string_view(first.constData(), static_cast<std::size_t>(first.size())));
    QCOMPARE(qint64(builder.bytesRead()), qint64((started(42) + step(1, 1.5, 0.5)).size()));
    const QByteArray rest = step(2, 1.0, 0.5).mid(20) + finished("completed", 1);
    builder.feed(std::string_view(rest.constData(), static_cast<std::size_t>(rest.size())));
    QCOMPARE(qint64(builder.bytesRead()), qint64(first.size() + rest.size()));
    const RunSummary s = builder.summary(true);
    QCOMPARE(s.state, RunState::Completed);
    QCOMPARE(s.step, std::int64_t(2));
    QCOMPARE(s.preset, std::string("safe-64"));
    QCOMPARE(s.epochs, std::int64_t(5));
    QCOMPARE(s.pid, std::int64_t(42));
  }

  void processLiveness() {
    QVERIFY(trainingProcessAlive(::getpid(), "tst_run_summary", *processStartTime(::getpid())));
    // Without a start time only a `tst_run_summary train …` command line would be taken for it.
    QVERIFY(!trainingProcessAlive(::getpid(), "tst_run_summary"));
    QVERIFY(!trainingProcessAlive(::getpid(), "streetgan-no-such-program"));  // a recycled pid
    QVERIFY(!trainingProcessAlive(0));
    QVERIFY(!trainingProcessAlive(-5));
    QVERIFY(!trainingProcessAlive(4194304 + 7));  // above Linux's largest pid
  }

  // A logged pid that is not one (4294967295 is -1 as a pid_t; 2^32 + our pid is our pid) is not
  // a live process, whatever kill() would make of it — and nothing signals it.
  void pidsThatAreNotPids_data() {
    QTest::addColumn<qint64>("pid");
    QTest::newRow("zero") << qint64(0);
    QTest::newRow("negative") << qint64(-5);
    QTest::newRow("-1") << qint64(-1);
    QTest::newRow("uint32 max, -1 as pid_t") << qint64(4294967295LL);
    QTest::newRow("2^32 + this process, this process as pid_t") << qint64((1LL << 32) + ::getpid());
    QTest::newRow("2^31") << qint64(1LL << 31);
    QTest::newRow("pid_max") << qint64(processIdLimit());
    QTest::newRow("above Linux's largest pid") << qint64(4194304 + 7);
    QTest::newRow("int64 max") << qint64(LLONG_MAX);
    QTest::newRow("int64 min") << qint64(LLONG_MIN);
  }
  void pidsThatAreNotPids() {
    QFETCH(qint64, pid);
    QVERIFY(!validProcessId(pid));
    QVERIFY(!trainingProcessAlive(pid, ""));  // "": any command line would do
    QVERIFY(!trainingProcessAlive(pid, "tst_run_summary"));
    QCOMPARE(checkTrainingProcess(pid, "", 0), ProcessCheck::NotAProcessId);
    QVERIFY(!processStartTime(pid).has_value());
    // Signal 0 only checks: harmless whatever a broken check would let through.
    const Status sent = signalTrainingProcess(pid, "", 0, 0);
    QVERIFY(!sent.ok());
    QCOMPARE(QString::fromStdString(sent.error()),
             QString("pid %1 is not a process id (allowed: 1 to %2); nothing was signalled").arg(pid).arg(processIdLimit() - 1));
    // The same pid in a run's log: the run is not running.
    const RunSummary s = summarize(started(pid) + step(1, 1.5, 0.5), trainingProcessAlive(pid));
    QCOMPARE(s.state, RunState::Failed);
    QTemporaryDir dir;
    QFile events(dir.filePath("events.jsonl"));
    QVERIFY(events.open(QIODevice::WriteOnly));
    events.write(started(pid));
    events.close();
    const auto read = readRunSummary(dir.path().toStdString());
    QVERIFY2(read.ok(), read.ok() ? "" : read.error().c_str());
    QCOMPARE(read->state, RunState::Failed);
  }

  // The start time logged with the pid tells the run's process from a newcomer with its pid.
  void startTimeTellsAReusedPid() {
    QVERIFY(validProcessId(::getpid()));
    QVERIFY(processIdLimit() >= 2 && processIdLimit() <= 4194304);
    const auto start = processStartTime(::getpid());
    QVERIFY(start.has_value());
    QVERIFY(*start > 0);
    QCOMPARE(checkTrainingProcess(::getpid(), "tst_run_summary", *start), ProcessCheck::Alive);
    QCOMPARE(checkTrainingProcess(::getpid(), "tst_run_summary", *start + 1), ProcessCheck::Reused);
    QCOMPARE(checkTrainingProcess(::getpid(), "streetgan-no-such-program", *start), ProcessCheck::Reused);
    // A log from before start times: this process's command line is not `tst_run_summary train …`.
    QCOMPARE(checkTrainingProcess(::getpid(), "tst_run_summary", 0), ProcessCheck::Reused);
    QVERIFY(trainingProcessAlive(::getpid(), "tst_run_summary", *start));
    QVERIFY(!trainingProcessAlive(::getpid(), "tst_run_summary", *start + 1));
    const Status refused = signalTrainingProcess(::getpid(), "tst_run_summary", *start + 1, SIGKILL);
    QVERIFY(!refused.ok());  // and we are still here
    QCOMPARE(QString::fromStdString(refused.error()),
             QString("pid %1 is no longer the run's training process (the pid was reused by another process); "
                     "nothing was signalled").arg(::getpid()));
    QVERIFY(signalTrainingProcess(::getpid(), "tst_run_summary", *start, 0).ok());

    // What the builder reads: the start time of the latest run_started, none in older logs.
    RunSummaryBuilder builder("/runs/r");
    const QByteArray log = started(42) + QString(R"({"v":1,"type":"run_started","time":100,"pid":43,"pid_start_time":%1})")
                                             .arg(*start).toUtf8() + "\n";
    builder.feed(std::string_view(log.constData(), static_cast<std::size_t>(log.size())));
    QCOMPARE(builder.pid(), std::int64_t(43));
    QCOMPARE(builder.pidStartTime(), *start);
    RunSummaryBuilder old("/runs/r");
    const QByteArray old_log = started(42);
    old.feed(std::string_view(old_log.constData(), static_cast<std::size_t>(old_log.size())));
    QCOMPARE(old.pidStartTime(), std::uint64_t(0));
  }

  // Numbers too large for an integer are not cast (undefined), they count as absent.
  void hugeNumbersAreNotCast() {
    const QByteArray log = R"({"v":1,"type":"run_started","time":100,"pid":1e300,"pid_start_time":-5,"step":18446744073709551615,"epoch":-1e300})" "\n";
    RunSummaryBuilder builder("/runs/r");
    builder.feed(std::string_view(log.constData(), static_cast<std::size_t>(log.size())));
    const RunSummary s = builder.summary(false);
    QCOMPARE(s.pid, std::int64_t(0));
    QCOMPARE(s.pid_start_time, std::uint64_t(0));
    QCOMPARE(s.step, std::int64_t(0));
    QCOMPARE(s.epoch, std::int64_t(0));
    QCOMPARE(s.state, RunState::Failed);
  }

  // A step nested 100,000 deep (a 200 KB line) is malformed, not a stack overflow when the summary
  // is made; our writer's step lines (keys sorted, "type" last but "v") give the last losses.
  void deepAndSortedStepLines() {
    QByteArray log = R"({"v":1,"type":"run_started","time":100,"pid":0,"step":0,"images_seen":0})" "\n";
    log += R"({"d_x":0.5,"epoch":1,"images_seen":32,"iteration":1,"iterations":2,"loss_d":1.25,"loss_g":2.5,"step":1,"time":101,"type":"step","v":1})" "\n";
    log += "{\"a\":" + QByteArray(100000, '[') + QByteArray(100000, ']') + R"(,"type":"step","step":5})" "\n";
    RunSummaryBuilder builder("/runs/r");
    builder.feed(std::string_view(log.constData(), static_cast<std::size_t>(log.size())));
    const RunSummary s = builder.summary(false);
    QCOMPARE(s.malformed_lines, std::int64_t(1));
    QCOMPARE(s.step, std::int64_t(1));
    QCOMPARE(s.images_seen, std::int64_t(32));
    QCOMPARE(*s.loss_d, 1.25);
    QCOMPARE(*s.loss_g, 2.5);
    QCOMPARE(s.last_event_time, 101.0);
  }

  // The latest SWD and copy rate of the metrics events (each from the newest event that has it),
  // the alarms counted with the newest one's message; without events, the newest metrics file's.
  void qualityFiguresAndAlarms() {
    const QByteArray first =
        R"({"v":1,"type":"metrics","time":150,"epoch":0,"step":1,"images_seen":16,"metrics":{"swd_e3":25.5,"copy_rate":0.125},"feature_space":"pixels32-pca256"})" "\n";
    const QByteArray second =
        R"({"v":1,"type":"metrics","time":160,"epoch":0,"step":2,"images_seen":32,"metrics":{"swd_e3":20.25},"feature_space":"pixels32-pca256"})" "\n";
    const QByteArray memorisation =
        R"({"v":1,"type":"warning","time":151,"message":"memorisation: 12.5% of the samples copy a training image","alarm":"memorisation","step":1})" "\n";
    const QByteArray overfitting =
        R"({"v":1,"type":"warning","time":161,"message":"D is overfitting: r_t is 0.8; try augmentation","alarm":"overfitting","step":2})" "\n";
    const QByteArray skipped = R"({"v":1,"type":"warning","time":152,"message":"skipped a file","path":"a.jpg"})" "\n";
    const QByteArray log = started(42) + step(1, 1.5, 0.5) + first + memorisation + skipped + step(2, 1.25, 0.5) + second + overfitting;
    for (std::size_t chunk : {std::size_t(0), std::size_t(1), std::size_t(7)}) {
      const RunSummary s = summarize(log, true, chunk);
      QCOMPARE(s.swd.value(), 20.25);
      QCOMPARE(s.copy_rate.value(), 0.125);  // the second evaluation has none
      QCOMPARE(s.alarms, std::int64_t(2));
      QCOMPARE(QString::fromStdString(s.last_alarm), QString("D is overfitting: r_t is 0.8; try augmentation"));
      QCOMPARE(s.step, std::int64_t(2));
    }
    const RunSummary plain = summarize(started(42) + step(1, 1.5, 0.5) + skipped, true);
    QVERIFY(!plain.swd && !plain.copy_rate);
    QCOMPARE(plain.alarms, std::int64_t(0));
    QVERIFY(plain.last_alarm.empty());

    // Saved evaluations: the newest in checkpoint order that reads gives the figures it has.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string run = dir.path().toStdString();
    QualityEvaluation older, newer;
    older.checkpoint = QualityEvaluation::Checkpoint{"step-0000000002.pt", 1, 2, 32};
    older.metrics = {{quality_figure::kSwd, 50.0}, {quality_figure::kCopyRate, 0.5}};
    newer.checkpoint = QualityEvaluation::Checkpoint{"step-0000000004.pt", 2, 4, 64};
    newer.metrics = {{quality_figure::kSwd, 35.5}};
    const Status wrote_older = QualityEvaluationFile::write(run, "step-0000000002", older);
    QVERIFY2(wrote_older, wrote_older.error().c_str());
    const Status wrote_newer = QualityEvaluationFile::write(run, "step-0000000004", newer);
    QVERIFY2(wrote_newer, wrote_newer.error().c_str());
    QFile unreadable(dir.filePath("evaluations/metrics-step-0000000009.json"));  // newest by name, but unreadable
    QVERIFY(unreadable.open(QIODevice::WriteOnly));
    unreadable.write("{ not json");
    unreadable.close();
    QFile events(dir.filePath("events.jsonl"));
    QVERIFY(events.open(QIODevice::WriteOnly));
    events.write(started(0) + step(1, 1.5, 0.5));
    events.close();
    const auto saved = readRunSummary(run);
    QVERIFY2(saved.ok(), saved.error().c_str());
    QCOMPARE(saved->swd.value(), 35.5);
    QVERIFY(!saved->copy_rate);  // the newest file has none; an older file's is not taken
    // A metrics event's figure comes before the files'.
    QVERIFY(events.open(QIODevice::Append));
    events.write(first);
    events.close();
    const auto live = readRunSummary(run);
    QVERIFY2(live.ok(), live.error().c_str());
    QCOMPARE(live->swd.value(), 25.5);
    QCOMPARE(live->copy_rate.value(), 0.125);
  }

  void readsFoldersAndRefusesOthers() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto missing = readRunSummary(dir.filePath("nothing").toStdString());
    QVERIFY(!missing);
    QVERIFY(QString::fromStdString(missing.error()).contains("is not a run folder"));
    QDir().mkpath(dir.filePath("broken"));
    QFile config(dir.filePath("broken/config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{ not json");
    config.close();
    const auto broken = readRunSummary(dir.filePath("broken").toStdString());
    QVERIFY(broken.ok());
    QCOMPARE(broken->state, RunState::NotStarted);
    QVERIFY2(QString::fromStdString(broken->message).contains("config.json is not a JSON object"), broken->message.c_str());
  }

  void realRun() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString data = test::makeTinyDataset(dir.filePath("data"));
    const QString run = dir.filePath("runs/tiny");
    const auto result = test::runCli(test::tinyTrainArgs(data, run, 2));
    QVERIFY2(result.exit_code == 0, qPrintable(result.err));
    const auto s = readRunSummary(run.toStdString());
    QVERIFY2(s.ok(), s.error().c_str());
    QCOMPARE(s->state, RunState::Completed);
    QCOMPARE(s->epoch, std::int64_t(2));
    QCOMPARE(s->epochs, std::int64_t(2));
    const auto steps = test::eventsOfType(test::readEvents(run), "step");
    QVERIFY(!steps.isEmpty());
    QCOMPARE(s->step, std::int64_t(steps.last()["step"].toInteger()));
    QCOMPARE(s->images_seen, std::int64_t(steps.last()["images_seen"].toInteger()));
    QCOMPARE(*s->loss_d, steps.last()["loss_d"].toDouble());
    QCOMPARE(s->device, std::string("cpu"));
    QCOMPARE(s->world_size, std::int64_t(1));
    QCOMPARE(s->backend, std::string());
    QCOMPARE(s->malformed_lines, std::int64_t(0));
    // The process logged its start time with its pid.
    const auto started_events = test::eventsOfType(test::readEvents(run), "run_started");
    QCOMPARE(started_events.size(), 1);
    QVERIFY(started_events.first()["pid_start_time"].toInteger() > 0);
    QCOMPARE(s->pid_start_time, std::uint64_t(started_events.first()["pid_start_time"].toInteger()));
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestRunSummary)
#include "tst_run_summary.moc"
