// The studio's jobs and the transport choice, without a window: ParzenJob on a real tiny run
// (a result saved in the run, progress, a missing checkpoint, a cancel, lone held-out folder, a
// program that does not exist), MetricsJob on the same run (its arguments, figures saved in the
// run, progress, a missing checkpoint, a cancel), DemoDataJob rendering the demo scenes (progress, a folder that
// cannot be made), the job base class on a stand-in program (progress lines split across writes
// and mixed with diagnostics, and kept out of a failure's reason), and TrainingTransportFactory
// choosing local, followed or SSH by the folder.
#include "app/studio/control/child_process_job.h"
#include "app/studio/control/demo_data_job.h"
#include "app/studio/control/followed_run_transport.h"
#include "app/studio/control/local_process_transport.h"
#include "app/studio/control/metrics_job.h"
#include "app/studio/control/parzen_job.h"
#include "app/studio/control/remote_run_record.h"
#include "app/studio/control/remote_run_transport.h"
#include "app/studio/control/training_transport_factory.h"
#include "tests/support/status_check.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace streetgan::studio;
using namespace streetgan::test;

namespace {

// The smallest job: runs a stand-in program, records the progress lines it is given, and ends
// ok on exit code 0, otherwise with the failure's reason.
class ScriptJob : public ChildProcessJob {
public:
  explicit ScriptJob(const QString& program) : ChildProcessJob(program) {}
  streetgan::Status start() { return startProcess({"--progress"}); }
  QStringList lines;  // "task done/total detail" of each line onProgress() was given

protected:
  Outcome outcome(int exit_code, int) override { return {exit_code == 0, exit_code == 0 ? QString() : failureReason(exit_code)}; }
  void onProgress(const streetgan::ProgressLine& line) override {
    lines << QString("%1 %2/%3 %4").arg(QString::fromStdString(line.task)).arg(qint64(line.done)).arg(qint64(line.total))
                 .arg(QString::fromStdString(line.detail));
  }
};

}  // namespace

class TestStudioJobs : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void parzenArguments_data();
  void parzenArguments();
  void parzenOnACheckpoint();
  void parzenOnAMissingCheckpoint();
  void parzenCancelled();
  void parzenRefusesOneHeldOutFolder();
  void parzenWithoutTheProgram();
  void metricsArguments_data();
  void metricsArguments();
  void metricsOnACheckpoint();
  void metricsOnAMissingCheckpoint();
  void metricsCancelled();
  void demoData();
  void demoDataIntoAFile();
  void jobProgressLines();
  void jobFailureReasonWithoutProgress();
  void transportChoice();

private:
  QString latestCheckpoint() const {
    const QDir checkpoints(run_ + "/checkpoints");
    return checkpoints.absoluteFilePath(checkpoints.entryList({"*.pt"}, QDir::Files, QDir::Name).last());
  }

  QTemporaryDir dir_;
  QString data_, run_;
};

void TestStudioJobs::initTestCase() {
  data_ = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("runs/tiny");
  const auto trained = runCli(tinyTrainArgs(data_, run_, 1) << "--holdout-fraction" << "0.3");
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
}

void TestStudioJobs::parzenArguments_data() {
  QTest::addColumn<bool>("every");
  QTest::addColumn<QString>("valid");
  QTest::addColumn<QString>("test");
  QTest::addColumn<QStringList>("expected");
  const QStringList sizes{"parzen", "--json", "--progress", "--save", "--n-samples", "64", "--n-valid", "4", "--n-test", "5"};
  QTest::newRow("one checkpoint") << false << QString() << QString() << (sizes + QStringList{"--checkpoint", "/r/checkpoints/c.pt"});
  QTest::newRow("every checkpoint") << true << QString() << QString() << (sizes + QStringList{"--run", "/r"});
  QTest::newRow("held-out folders") << false << "/v" << "/t"
                                    << (sizes + QStringList{"--checkpoint", "/r/checkpoints/c.pt", "--valid", "/v", "--test", "/t"});
}

void TestStudioJobs::parzenArguments() {
  QFETCH(bool, every);
  QFETCH(QString, valid);
  QFETCH(QString, test);
  QFETCH(QStringList, expected);
  ParzenRequest request;
  request.run_dir = "/r";
  request.checkpoint = "/r/checkpoints/c.pt";
  request.every = every;
  request.samples = 64;
  request.valid = 4;
  request.test = 5;
  request.valid_dir = valid;
  request.test_dir = test;
  QCOMPARE(request.arguments(), expected);
}

void TestStudioJobs::parzenOnACheckpoint() {
  ParzenJob job(STREETGAN_CLI);
  QSignalSpy progress(&job, &ParzenJob::progressChanged);
  QSignalSpy reported(&job, &ChildProcessJob::progressReported);
  QSignalSpy done(&job, &ParzenJob::finished);
  ParzenRequest request;
  request.run_dir = run_;
  request.checkpoint = latestCheckpoint();
  request.samples = 64;
  request.valid = 4;
  request.test = 4;
  QString error;
  QVERIFY2(succeeded(job.start(request), &error), qPrintable(error));
  QVERIFY(job.isRunning());
  QString second_error;
  QVERIFY(!succeeded(job.start(request), &second_error));
  QCOMPARE(second_error, QString("A Parzen estimate is already running."));
  QVERIFY(done.wait(120000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QVERIFY(!job.isRunning());
  QVERIFY(!progress.isEmpty());
  for (const auto& point : progress) QVERIFY(point.first().toInt() >= 0 && point.first().toInt() <= 100);
  // Each percentage came as a progress line (docs/events.md): task "parzen-estimate", of 100.
  QCOMPARE(reported.size(), progress.size());
  for (const auto& line : reported) {
    QCOMPARE(line.at(0).toString(), QString("parzen-estimate"));
    QCOMPARE(line.at(2).toLongLong(), qlonglong(100));
  }
  QCOMPARE(job.result().value("kind", std::string()), std::string("checkpoint"));
  QCOMPARE(job.result().value("n_samples", 0), 64);
  QVERIFY(job.result().contains("mean_ll"));
  const QString saved = run_ + "/evaluations/parzen-" + QFileInfo(request.checkpoint).completeBaseName() + ".json";
  QVERIFY2(QFile::exists(saved), qPrintable(saved));
}

void TestStudioJobs::parzenOnAMissingCheckpoint() {
  ParzenJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &ParzenJob::finished);
  ParzenRequest request;
  request.run_dir = run_;
  request.checkpoint = dir_.filePath("no-such.pt");
  QString error;
  QVERIFY2(succeeded(job.start(request), &error), qPrintable(error));
  QVERIFY(done.wait(60000));
  QCOMPARE(done.first().first().toBool(), false);
  const QString message = done.first().last().toString();
  QVERIFY2(message.startsWith("Parzen estimate failed: "), qPrintable(message));
  QVERIFY2(message.contains("no-such.pt"), qPrintable(message));
}

void TestStudioJobs::parzenCancelled() {
  ParzenJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &ParzenJob::finished);
  ParzenRequest request;
  request.run_dir = run_;
  request.checkpoint = latestCheckpoint();
  request.samples = 400000;  // long enough to be cancelled while sampling (as tst_studio_evaluate)
  request.valid = 4;
  request.test = 4;
  const QStringList before = QDir(run_ + "/evaluations").entryList(QDir::Files);
  QString error;
  QVERIFY2(succeeded(job.start(request), &error), qPrintable(error));
  QTest::qWait(300);
  job.cancel();
  QVERIFY(done.wait(30000));
  QCOMPARE(done.first().first().toBool(), false);
  QCOMPARE(done.first().last().toString(), QString("Parzen estimate failed: cancelled"));
  QCOMPARE(QDir(run_ + "/evaluations").entryList(QDir::Files), before);
}

void TestStudioJobs::parzenRefusesOneHeldOutFolder() {
  ParzenJob job(STREETGAN_CLI);
  ParzenRequest request;
  request.run_dir = run_;
  request.checkpoint = latestCheckpoint();
  request.valid_dir = data_;
  QString error;
  QVERIFY(!succeeded(job.start(request), &error));
  QCOMPARE(error, QString("Give both a validation and a test folder, or neither (the run's held-out split)."));
  QVERIFY(!job.isRunning());
}

void TestStudioJobs::parzenWithoutTheProgram() {
  const QString missing = dir_.filePath("no-streetgan");
  ParzenJob job(missing);
  ParzenRequest request;
  request.run_dir = run_;
  request.checkpoint = latestCheckpoint();
  QString error;
  QVERIFY(!succeeded(job.start(request), &error));
  QVERIFY2(error.startsWith("Cannot start " + missing + ": "), qPrintable(error));
  QVERIFY(!job.isRunning());
}

void TestStudioJobs::metricsArguments_data() {
  QTest::addColumn<bool>("every");
  QTest::addColumn<QStringList>("only");
  QTest::addColumn<QStringList>("expected");
  const QStringList sizes{"metrics", "--json", "--progress", "--save", "--n", "64", "--n-train", "32"};
  QTest::newRow("one checkpoint") << false << QStringList() << (sizes + QStringList{"--checkpoint", "/r/checkpoints/c.pt"});
  QTest::newRow("every checkpoint") << true << QStringList() << (sizes + QStringList{"--run", "/r", "--every-checkpoint"});
  QTest::newRow("some metrics") << false << QStringList{"swd", "msssim"}
                                << (sizes + QStringList{"--checkpoint", "/r/checkpoints/c.pt", "--only", "swd,msssim"});
}

void TestStudioJobs::metricsArguments() {
  QFETCH(bool, every);
  QFETCH(QStringList, only);
  QFETCH(QStringList, expected);
  MetricsRequest request;
  request.run_dir = "/r";
  request.checkpoint = "/r/checkpoints/c.pt";
  request.every = every;
  request.samples = 64;
  request.train = 32;
  request.only = only;
  QCOMPARE(request.arguments(), expected);
}

void TestStudioJobs::metricsOnACheckpoint() {
  MetricsJob job(STREETGAN_CLI);
  QSignalSpy progress(&job, &MetricsJob::progressChanged);
  QSignalSpy stages(&job, &MetricsJob::stageChanged);
  QSignalSpy reported(&job, &ChildProcessJob::progressReported);
  QSignalSpy done(&job, &MetricsJob::finished);
  MetricsRequest request;
  request.run_dir = run_;
  request.checkpoint = latestCheckpoint();
  request.samples = 16;  // the tiny data set has 32 images: metrics that need no more
  request.train = 16;
  request.only = QStringList{"swd", "msssim", "memorisation"};
  QString error;
  QVERIFY2(succeeded(job.start(request), &error), qPrintable(error));
  QVERIFY(job.isRunning());
  QString second_error;
  QVERIFY(!succeeded(job.start(request), &second_error));
  QCOMPARE(second_error, QString("Quality metrics are already running."));
  QVERIFY(done.wait(120000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QVERIFY(!job.isRunning());
  // One line as each of the three stages starts, and the last when all are done.
  QCOMPARE(reported.size(), 4);
  for (const auto& line : reported) QCOMPARE(line.at(0).toString(), QString("metrics"));
  QCOMPARE(progress.size(), reported.size());
  QCOMPARE(progress.last().first().toInt(), 100);
  for (const auto& point : progress) QVERIFY(point.first().toInt() >= 0 && point.first().toInt() <= 100);
  QCOMPARE(stages.size(), 3);
  QCOMPARE(stages.first().first().toString(), QString("sliced Wasserstein distance"));
  const nlohmann::json& result = job.result();
  QVERIFY(result.is_object());
  QCOMPARE(result.value("n_samples", 0), 16);
  QCOMPARE(result.value("n_train", 0), 16);
  for (const char* figure : {"swd_e3", "msssim_samples", "msssim_train", "copy_rate"})
    QVERIFY2(result.at("metrics").contains(figure), figure);
  QVERIFY(!result.at("metrics").contains("fid"));
  const QString saved = run_ + "/evaluations/metrics-" + QFileInfo(request.checkpoint).completeBaseName() + ".json";
  QVERIFY2(QFile::exists(saved), qPrintable(saved));
}

void TestStudioJobs::metricsOnAMissingCheckpoint() {
  MetricsJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &MetricsJob::finished);
  MetricsRequest request;
  request.run_dir = run_;
  QString error;
  QVERIFY(!succeeded(job.start(request), &error));  // no checkpoint given
  QCOMPARE(error, QString("Choose a run with a checkpoint first."));
  request.checkpoint = dir_.filePath("no-such.pt");
  QVERIFY2(succeeded(job.start(request), &error), qPrintable(error));
  QVERIFY(done.wait(60000));
  QCOMPARE(done.first().first().toBool(), false);
  const QString message = done.first().last().toString();
  QVERIFY2(message.startsWith("Quality metrics failed: "), qPrintable(message));
  QVERIFY2(message.contains("no-such.pt"), qPrintable(message));
}

void TestStudioJobs::metricsCancelled() {
  MetricsJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &MetricsJob::finished);
  MetricsRequest request;
  request.run_dir = run_;
  request.checkpoint = latestCheckpoint();
  request.samples = 150000;  // long enough to be cancelled while sampling, under the suite's 8 GiB
  request.train = 16;
  request.only = QStringList{"swd"};
  const QStringList before = QDir(run_ + "/evaluations").entryList(QDir::Files);
  QString error;
  QVERIFY2(succeeded(job.start(request), &error), qPrintable(error));
  QTest::qWait(300);
  job.cancel();
  QVERIFY(done.wait(30000));
  QCOMPARE(done.first().first().toBool(), false);
  const QString message = done.first().last().toString();
  QVERIFY2(message.startsWith("Quality metrics failed: ") && message.contains("cancelled"), qPrintable(message));
  QCOMPARE(QDir(run_ + "/evaluations").entryList(QDir::Files), before);
}

void TestStudioJobs::demoData() {
  const QString folder = dir_.filePath("nested/demo");
  QVERIFY(!DemoDataJob::isRendered(folder));
  DemoDataJob job(STREETGAN_CLI);
  QSignalSpy progress(&job, &DemoDataJob::progressChanged);
  QSignalSpy reported(&job, &ChildProcessJob::progressReported);
  QSignalSpy done(&job, &DemoDataJob::finished);
  QString error;
  QVERIFY2(succeeded(job.start(folder + "/"), &error), qPrintable(error));
  QVERIFY(job.isRunning());
  QVERIFY(done.wait(300000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QCOMPARE(done.first().last().toString(), QDir::cleanPath(folder));
  QVERIFY(DemoDataJob::isRendered(folder));
  QVERIFY(!progress.isEmpty());
  const QList<QVariant> last = progress.last();
  QCOMPARE(last.at(0).toInt(), last.at(1).toInt());  // every image rendered
  QCOMPARE(last.at(1).toInt(), 1000);  // 4 cities × 10 sequences × 25 frames
  // The counts came as progress lines of task "demo-data".
  QCOMPARE(reported.size(), progress.size());
  QCOMPARE(reported.last().at(0).toString(), QString("demo-data"));
  QCOMPARE(reported.last().at(1).toLongLong(), qlonglong(1000));
  QCOMPARE(reported.last().at(2).toLongLong(), qlonglong(1000));
}

void TestStudioJobs::jobProgressLines() {
  // A line cut across two writes, a diagnostic between progress lines, a line of another version
  // and a malformed one: two progress lines arrive, and the reason is the last other line.
  const QString program = dir_.filePath("progress-script");
  QVERIFY(writeScript(program,
                      "printf 'progress/1 {\"task\":\"t\",\"done\":1,\"total\":3}\\n' >&2\n"
                      "printf 'progress/1 {\"task\":\"t\",\"do' >&2\n"
                      "sleep 0.2\n"
                      "printf 'ne\":2,\"total\":3,\"detail\":\"two\"}\\nwarning: skipped x\\n' >&2\n"
                      "printf 'progress/2 {\"task\":\"t\",\"done\":3,\"total\":3}\\n' >&2\n"
                      "printf 'progress/1 {\"task\":\"t\",\"done\":4,\"total\":3}\\n' >&2\n"
                      "echo 'streetgan t: it failed' >&2\n"
                      "exit 1\n"));
  ScriptJob job(program);
  QSignalSpy reported(&job, &ChildProcessJob::progressReported);
  QSignalSpy done(&job, &ChildProcessJob::finished);
  QString error;
  QVERIFY2(succeeded(job.start(), &error), qPrintable(error));
  QVERIFY(done.wait(30000));
  QCOMPARE(job.lines, (QStringList{"t 1/3 ", "t 2/3 two"}));
  QCOMPARE(reported.size(), 2);
  QCOMPARE(reported.last().at(3).toString(), QString("two"));
  QCOMPARE(done.first().first().toBool(), false);
  QCOMPARE(done.first().last().toString(), QString("streetgan t: it failed"));
  QVERIFY(!job.isRunning());
}

void TestStudioJobs::jobFailureReasonWithoutProgress() {
  // A command that ends with a progress line and no error line: the reason is its exit code, never
  // the progress line; a last line without its newline is still read.
  const QString program = dir_.filePath("progress-exit-script");
  QVERIFY(writeScript(program, "printf 'progress/1 {\"task\":\"t\",\"done\":3,\"total\":3}' >&2\nexit 3\n"));
  ScriptJob job(program);
  QSignalSpy done(&job, &ChildProcessJob::finished);
  QString error;
  QVERIFY2(succeeded(job.start(), &error), qPrintable(error));
  QVERIFY(done.wait(30000));
  QCOMPARE(job.lines, QStringList{"t 3/3 "});
  QCOMPARE(done.first().last().toString(), QString("exit code 3"));
}

void TestStudioJobs::demoDataIntoAFile() {
  // Its folder's parent is a file: the program says why, and the job passes that on.
  const QString file = dir_.filePath("a-file");
  QVERIFY(writeScript(file, "not a folder\n"));
  DemoDataJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &DemoDataJob::finished);
  QString error;
  QVERIFY2(succeeded(job.start(file + "/demo"), &error), qPrintable(error));  // the program starts, then fails
  QVERIFY(done.wait(60000));
  QCOMPARE(done.first().first().toBool(), false);
  const QString reason = done.first().last().toString();
  QVERIFY2(reason.contains(file), qPrintable(reason));
  QVERIFY(!DemoDataJob::isRendered(file + "/demo"));
}

void TestStudioJobs::transportChoice() {
  TrainingTransportFactory factory(STREETGAN_CLI);
  const QString local = dir_.filePath("runs/local");
  QVERIFY(QDir().mkpath(local));
  auto started = factory.forRun(local, false);
  QVERIFY(qobject_cast<LocalProcessTransport*>(started.get()));
  auto opened = factory.forRun(local, true);
  QVERIFY(qobject_cast<FollowedRunTransport*>(opened.get()));

  HostProfile host;
  host.name = "gpu-box";
  host.host = "gpu.example";
  RemoteRunRecord record{host, RemoteRunRecord::remoteRunDirFor(host, "remote"), dir_.filePath("runs/remote")};
  QCOMPARE(record.write(), QString());
  for (const bool attach : {false, true}) {
    auto remote = factory.forRun(record.local_run_dir, attach);
    QVERIFY(qobject_cast<RemoteRunTransport*>(remote.get()));
    QVERIFY2(remote->where().contains("gpu"), qPrintable(remote->where()));
  }
}

STREETGAN_TEST_GUILESS_MAIN(TestStudioJobs)
#include "tst_studio_jobs.moc"
