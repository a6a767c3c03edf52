// Remote training over SSH, through a real sshd on 127.0.0.1 (SshdFixture) and the real CLI as
// the remote `streetgan`: host keys, test connection, a run to completion with its samples and
// checkpoints fetched, connections killed mid-run (the ssh client, then sshd itself) with every
// event arriving exactly once, re-attaching with a new session, stop and resume, hostile names.
#include "app/studio/control/host_connection_check.h"
#include "app/studio/control/host_key_check.h"
#include "app/studio/control/remote_run_transport.h"
#include "app/studio/control/training_session.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

using namespace streetgan::studio;
using namespace streetgan::test;

namespace {

// What a session handed on, one compact JSON text per event.
struct EventRecorder {
  QStringList events;
  QList<SessionState> states;
  void attach(TrainingSession& session) {
    QObject::connect(&session, &TrainingSession::eventsReceived, [this](const std::vector<streetgan::StreamEvent>& list) {
      for (const auto& event : list) events << QString::fromStdString(event.body.dump());
    });
    QObject::connect(&session, &TrainingSession::stateChanged, [this](SessionState state) { states << state; });
  }
};

QStringList linesOf(const QByteArray& log) {
  QStringList lines;
  for (const QByteArray& line : log.split('\n'))
    if (!line.trimmed().isEmpty()) lines << QString::fromStdString(nlohmann::json::parse(line.toStdString()).dump());
  return lines;
}

qint64 masterPid(const SshConnection& connection) {
  QProcess process;
  process.start("ssh", connection.controlArguments("check"));
  process.waitForFinished(60000);
  const QString said = QString::fromUtf8(process.readAllStandardError());
  const int at = said.indexOf("pid=");
  return at < 0 ? 0 : said.mid(at + 4).section(')', 0, 0).toLongLong();
}

}  // namespace

class RemoteTrainingTest : public QObject {
  Q_OBJECT

private:
  QString dir_, data_, config_file_;
  std::unique_ptr<SshdFixture> sshd_;

  RemoteRunRecord recordFor(const QString& name) const {
    RemoteRunRecord run;
    run.host = sshd_->profile();
    run.remote_run_dir = RemoteRunRecord::remoteRunDirFor(run.host, name);
    run.local_run_dir = dir_ + "/local-runs/" + name;
    return run;
  }

  TrainingRequest requestFor(const RemoteRunRecord& run, int epochs) const {
    TrainingRequest request;
    request.run_dir = run.local_run_dir;
    request.dataroot = data_;
    request.config_file = config_file_;
    request.extra_arguments = {"--epochs", QString::number(epochs), "--seed", "7", "--threads", testThreadsText()};
    return request;
  }

  std::unique_ptr<TrainingSession> sessionFor(const RemoteRunRecord& run, RemoteRunTransport** transport_out = nullptr,
                                              bool attach = false) {
    auto transport = std::make_unique<RemoteRunTransport>(run, sshd_->controlDir());
    transport->setRetryDelays(200, 2000);
    transport->setAttachOnStart(attach);
    if (transport_out) *transport_out = transport.get();
    return std::make_unique<TrainingSession>(std::move(transport));
  }

  static bool waitForEnd(TrainingSession& session, int timeout_ms = 180000) {
    QElapsedTimer clock;
    clock.start();
    while (session.isActive() && clock.elapsed() < timeout_ms) QTest::qWait(50);
    return !session.isActive();
  }

  static bool waitForSteps(const EventRecorder& recorder, int steps, int timeout_ms = 60000) {
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeout_ms) {
      if (recorder.events.filter("\"type\":\"step\"").size() >= steps) return true;
      QTest::qWait(20);
    }
    return false;
  }

  // The mirror equals the host's log byte for byte and the session saw each of its events once.
  void compareWithRemote(const RemoteRunRecord& run, const EventRecorder& recorder) {
    const QByteArray remote = readFileBytes(run.remote_run_dir + "/events.jsonl");
    QVERIFY(!remote.isEmpty());
    QCOMPARE(readFileBytes(run.local_run_dir + "/events.jsonl"), remote);
    const QStringList expected = linesOf(remote);
    QCOMPARE(recorder.events.size(), expected.size());
    QCOMPARE(recorder.events, expected);
  }

private slots:
  void initTestCase() {
    qRegisterMetaType<SshResult>();
    qRegisterMetaType<HostCheckResult>();
    dir_ = QDir::tempPath() + "/streetgan-tst-remote-" + QString::number(QCoreApplication::applicationPid());
    sshd_ = std::make_unique<SshdFixture>(dir_ + "/sshd");
    QString error;
    QVERIFY2(sshd_->start(&error), qPrintable(error));
    data_ = makeTinyDataset(dir_);
    config_file_ = dir_ + "/config.json";
    QFile config(config_file_);
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"log_frequency":3,"save_frequency":1,"keep_checkpoints":10})");
  }

  void cleanupTestCase() {
    sshd_.reset();
    QDir(dir_).removeRecursively();
  }

  // Before the key is accepted nothing connects, the probe shows the server's real fingerprint
  // and writes nothing; after it, commands run. A changed key is refused again, with the new one.
  void unknownHostKeyIsRefusedUntilAccepted() {
    const SshConnection connection(sshd_->profile(), sshd_->controlDir());
    SshResult result = SshCommand::runAndWait(connection, {"--version"});
    QCOMPARE(result.failure, SshFailure::HostKeyUnknown);
    QVERIFY2(result.message.contains("not known"), qPrintable(result.message));
    QVERIFY(!QFile::exists(sshd_->knownHostsFile()));

    HostKeyProbe probe = HostKeyCheck::probe(connection, false);
    QVERIFY2(probe.status.ok(), qPrintable(errorText(probe.status)));
    QCOMPARE(probe.fingerprints, QStringList{sshd_->hostKeyFingerprint()});
    QCOMPARE(probe.known_hosts_file, sshd_->knownHostsFile());
    QCOMPARE(probe.host_key_name, QString("[127.0.0.1]:%1").arg(sshd_->port()));
    QVERIFY(!QFile::exists(sshd_->knownHostsFile()));  // the probe trusted nothing
    QCOMPARE(SshCommand::runAndWait(connection, {"--version"}).failure, SshFailure::HostKeyUnknown);

    QCOMPARE(HostKeyCheck::accept(probe), QString());
    result = SshCommand::runAndWait(connection, {"--version"});
    QVERIFY2(result.ok(), qPrintable(result.message));
    QCOMPARE(QString::fromUtf8(result.output).trimmed(), QString("streetgan " STREETGAN_VERSION_TEXT));

    // The host is reinstalled: a new key on the same address.
    connection.closeMaster();
    sshd_->stop();
    QString error;
    QVERIFY2(sshd_->regenerateHostKey(&error), qPrintable(error));
    QVERIFY2(sshd_->start(&error), qPrintable(error));
    result = SshCommand::runAndWait(connection, {"--version"});
    QCOMPARE(result.failure, SshFailure::HostKeyChanged);
    QVERIFY2(result.message.contains("CHANGED"), qPrintable(result.message));
    probe = HostKeyCheck::probe(connection, true);
    QCOMPARE(probe.fingerprints, QStringList{sshd_->hostKeyFingerprint()});
    QCOMPARE(SshCommand::runAndWait(connection, {"--version"}).failure, SshFailure::HostKeyChanged);
    QCOMPARE(HostKeyCheck::accept(probe), QString());
    result = SshCommand::runAndWait(connection, {"--version"});
    QVERIFY2(result.ok(), qPrintable(result.message));
  }

  // Connection sharing never uses a socket folder another user could have made or opened.
  void controlFolderMustBePrivate() {
    const QByteArray saved = qgetenv("XDG_RUNTIME_DIR");
    QTemporaryDir runtime;
    qputenv("XDG_RUNTIME_DIR", runtime.path().toUtf8());
    const QString expected = runtime.filePath("streetgan-ssh-" + QString::number(::getuid()));
    QCOMPARE(SshConnection::defaultControlDir(), expected);
    QCOMPARE(QFileInfo(expected).permissions() & (QFile::ReadOther | QFile::WriteOther | QFile::ReadGroup | QFile::WriteGroup),
             QFileDevice::Permissions());
    QVERIFY(SshConnection(sshd_->profile(), expected).sshArguments().contains("ControlPath=" + expected + "/%C"));
    ::chmod(QFile::encodeName(expected).constData(), 0777);  // opened to others
    QCOMPARE(SshConnection::defaultControlDir(), QString());
    QVERIFY(QDir(expected).removeRecursively());
    QVERIFY(QFile::link(runtime.path(), expected));  // a link
    QCOMPARE(SshConnection::defaultControlDir(), QString());
    const QStringList unshared = SshConnection(sshd_->profile()).sshArguments();
    QVERIFY(unshared.contains("ControlPath=none") && unshared.contains("ControlMaster=no"));
    if (saved.isEmpty()) qunsetenv("XDG_RUNTIME_DIR");
    else qputenv("XDG_RUNTIME_DIR", saved);
  }

  void testConnectionReportsVersionAndDevices() {
    HostConnectionCheck test;
    QSignalSpy done(&test, &HostConnectionCheck::finished);
    test.start(sshd_->profile(), sshd_->controlDir());
    QVERIFY(done.wait(60000));
    const auto result = done.first().first().value<HostCheckResult>();
    QVERIFY2(result.ok(), qPrintable(result.message));
    QCOMPARE(result.version, QString("streetgan " STREETGAN_VERSION_TEXT));
    QVERIFY(result.devices.contains("cpu"));
    QVERIFY(result.threads > 0);
    QVERIFY2(result.message.contains("devices: cpu"), qPrintable(result.message));
  }

  void missingRemoteProgramIsNamed() {
    HostProfile profile = sshd_->profile();
    profile.streetgan_path = "/opt/nowhere/streetgan";
    HostConnectionCheck test;
    QSignalSpy done(&test, &HostConnectionCheck::finished);
    test.start(profile, sshd_->controlDir());
    QVERIFY(done.wait(60000));
    const auto result = done.first().first().value<HostCheckResult>();
    QCOMPARE(result.failure, SshFailure::ProgramMissing);
    QVERIFY2(result.message.contains("streetgan was not found on") && result.message.contains("/opt/nowhere/streetgan"),
             qPrintable(result.message));

    // The same for a run: it fails at once with that message, and no run starts.
    RemoteRunRecord run = recordFor("no-program");
    run.host = profile;
    auto session = sessionFor(run);
    QVERIFY(session->start(requestFor(run, 1)));
    QVERIFY(waitForEnd(*session));
    QCOMPARE(session->state(), SessionState::Failed);
    QVERIFY2(session->stderrTail().contains("streetgan was not found on"), qPrintable(session->stderrTail()));
    QVERIFY(!QFile::exists(run.remote_run_dir));
  }

  void environmentLineRunsFirst() {
    HostProfile profile = sshd_->profile();
    profile.environment_line = "echo this banner must not reach stdout; export STREETGAN_ENV_MARK=1";
    SshResult result = SshCommand::runAndWait(SshConnection(profile, sshd_->controlDir()), {"--version"});
    QVERIFY2(result.ok(), qPrintable(result.message));
    QCOMPARE(QString::fromUtf8(result.output).trimmed(), QString("streetgan " STREETGAN_VERSION_TEXT));
    QVERIFY(result.error_output.contains("this banner"));
    profile.environment_line = "false";
    result = SshCommand::runAndWait(SshConnection(profile, sshd_->controlDir()), {"--version"});
    QCOMPARE(result.failure, SshFailure::EnvironmentFailed);
    QVERIFY2(result.message.contains("environment line failed"), qPrintable(result.message));
  }

  // The jump host is held to the same rules as the host: its key must be in the profile's
  // known-hosts file (no prompt, no trust on first use, not ~/.ssh/known_hosts), and once it is,
  // commands run through it. The fixture's sshd is the jump host too, named "localhost" so that
  // its key has a name of its own.
  void jumpHostGetsTheSameProtections() {
    HostProfile profile = sshd_->profile();
    profile.jump_host = "localhost:" + QString::number(sshd_->port());
    QTemporaryDir control;  // a master of its own: the host's shared one would skip the jump
    const SshConnection connection(profile, control.path());
    SshResult result = SshCommand::runAndWait(connection, {"--version"});
    QVERIFY(!result.ok());
    QVERIFY2(result.message.contains("through the jump host " + profile.jump_host) &&
                 result.message.contains(sshd_->knownHostsFile()),
             qPrintable(result.message));
    QFile known(sshd_->knownHostsFile());
    QVERIFY(known.open(QIODevice::ReadWrite | QIODevice::Append));
    const QByteArray line = readFileBytes(sshd_->knownHostsFile()).split('\n').first();
    known.write("[localhost]:" + QByteArray::number(sshd_->port()) + line.mid(line.indexOf(' ')) + "\n");
    known.close();
    result = SshCommand::runAndWait(connection, {"--version"});
    QVERIFY2(result.ok(), qPrintable(result.message));
    QCOMPARE(QString::fromUtf8(result.output).trimmed(), QString("streetgan " STREETGAN_VERSION_TEXT));
    connection.closeMaster();
  }

  void remoteRunCompletesWithSamplesAndCheckpoint() {
    const RemoteRunRecord run = recordFor("complete");
    RemoteRunTransport* transport = nullptr;
    auto session = sessionFor(run, &transport);
    EventRecorder recorder;
    recorder.attach(*session);
    QSignalSpy fetched(transport, &RemoteRunTransport::fileFetched);
    QSignalSpy launched(transport, &RemoteRunTransport::launched);
    QVERIFY(session->start(requestFor(run, 3)));
    QVERIFY(waitForEnd(*session));
    QVERIFY2(session->state() == SessionState::Completed, qPrintable(session->stderrTail()));
    compareWithRemote(run, recorder);
    QCOMPARE(launched.size(), 1);
    QVERIFY(launched.first().first().toLongLong() > 0);
    // The config sent is the run's config.
    const auto config = nlohmann::json::parse(readFileBytes(run.remote_run_dir + "/config.json").toStdString());
    QCOMPARE(config.value("batch_size", 0), 8);
    QCOMPARE(config.value("ngf", 0), 8);
    QVERIFY(RemoteRunRecord::read(run.local_run_dir).has_value());
    QCOMPARE(RemoteRunRecord::read(run.local_run_dir)->remote_run_dir, run.remote_run_dir);

    // Every sample grid arrives in the mirror, the same bytes.
    const auto samples = eventsOfType(readEvents(run.remote_run_dir), "samples");
    QVERIFY(!samples.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(fetched.size(), samples.size(), 30000);
    for (const auto& event : samples) {
      const QString path = event.value("path").toString();
      QCOMPARE(readFileBytes(run.local_run_dir + "/" + path), readFileBytes(run.remote_run_dir + "/" + path));
    }

    // A checkpoint on demand, with progress, over the same connection.
    const QString checkpoint = eventsOfType(readEvents(run.remote_run_dir), "checkpoint").last().value("path").toString();
    QVERIFY(!checkpoint.isEmpty());
    QSignalSpy progress(transport, &RemoteRunTransport::fetchProgress);
    transport->fetchFile(checkpoint);
    QTRY_COMPARE_WITH_TIMEOUT(fetched.size(), samples.size() + 1, 30000);
    QVERIFY(!progress.isEmpty());
    QCOMPARE(progress.last().at(1).toLongLong(), progress.last().at(2).toLongLong());
    QCOMPARE(readFileBytes(run.local_run_dir + "/" + checkpoint), readFileBytes(run.remote_run_dir + "/" + checkpoint));
  }

  void remotePathsStayInsideTheRun() {
    const RemoteRunRecord run = recordFor("complete");
    QVERIFY(QFile::link("/etc/hostname", run.remote_run_dir + "/samples/escape.png"));
    RemoteRunTransport transport(run, sshd_->controlDir());
    QSignalSpy failed(&transport, &RemoteRunTransport::fetchFailed);
    transport.fetchFile("../other-run/events.jsonl");
    transport.fetchFile("/etc/passwd");
    transport.fetchFile("samples/escape.png");
    QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 3, 30000);
    QVERIFY2(failed[0].at(1).toString().contains("climbs out"), qPrintable(failed[0].at(1).toString()));
    QVERIFY2(failed[1].at(1).toString().contains("absolute"), qPrintable(failed[1].at(1).toString()));
    QVERIFY2(failed[2].at(1).toString().contains("leads out of the run directory"), qPrintable(failed[2].at(1).toString()));
    QVERIFY(!QFile::exists(run.local_run_dir + "/samples/escape.png"));
  }

  // The local ssh client dies twice mid-run (the stream's client, then the shared master): the
  // session says it reconnects, and ends with every event once, in order.
  void killedSshClientLosesNoEvent() {
    const RemoteRunRecord run = recordFor("killed-client");
    RemoteRunTransport* transport = nullptr;
    auto session = sessionFor(run, &transport);
    EventRecorder recorder;
    recorder.attach(*session);
    QVERIFY(session->start(requestFor(run, 40)));
    QVERIFY(waitForSteps(recorder, 10));
    QTRY_VERIFY(transport->followClientPid() > 0);
    ::kill(static_cast<pid_t>(transport->followClientPid()), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(recorder.states.contains(SessionState::Reconnecting), 60000);
    QTRY_COMPARE_WITH_TIMEOUT(session->state(), SessionState::Running, 30000);
    const int before = recorder.events.size();
    QVERIFY(waitForSteps(recorder, recorder.events.filter("\"type\":\"step\"").size() + 5));
    const qint64 master = masterPid(transport->connection());
    QVERIFY(master > 0);
    ::kill(static_cast<pid_t>(master), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(recorder.states.count(SessionState::Reconnecting) >= 2, 60000);
    QVERIFY(waitForEnd(*session));
    QVERIFY2(session->state() == SessionState::Completed, qPrintable(session->stderrTail()));
    QVERIFY(recorder.events.size() > before);
    compareWithRemote(run, recorder);
  }

  // sshd and all its sessions go down mid-run, stay down past a few retries, and come back.
  void sshdRestartLosesNoEvent() {
    const RemoteRunRecord run = recordFor("sshd-restart");
    auto session = sessionFor(run);
    EventRecorder recorder;
    recorder.attach(*session);
    QSignalSpy link(session.get(), &TrainingSession::connectionChanged);
    QVERIFY(session->start(requestFor(run, 40)));
    QVERIFY(waitForSteps(recorder, 10));
    sshd_->stop();
    QTRY_COMPARE_WITH_TIMEOUT(session->state(), SessionState::Reconnecting, 60000);
    QVERIFY2(session->connectionMessage().contains("Reconnecting (attempt"), qPrintable(session->connectionMessage()));
    QTest::qWait(2000);  // the run trains on while the host is unreachable
    QString error;
    QVERIFY2(sshd_->start(&error), qPrintable(error));
    QVERIFY2(waitForEnd(*session), qPrintable(session->connectionMessage()));
    QVERIFY2(session->state() == SessionState::Completed, qPrintable(session->stderrTail()));
    QVERIFY(link.size() >= 2);
    QCOMPARE(link.last().first().toBool(), true);
    compareWithRemote(run, recorder);
  }

  // The studio closes mid-run (the session and its transport are destroyed); a new session
  // re-attaches from the mirror alone and sees the whole run once.
  void reattachAfterTheSessionIsGone() {
    const RemoteRunRecord run = recordFor("reattach");
    {
      auto session = sessionFor(run);
      EventRecorder first;
      first.attach(*session);
      QVERIFY(session->start(requestFor(run, 30)));
      QVERIFY(waitForSteps(first, 8));
      session->detach();
    }
    const auto record = RemoteRunRecord::read(run.local_run_dir);
    QVERIFY(record.has_value());
    QVERIFY(QFileInfo(run.local_run_dir + "/events.jsonl").size() > 0);
    auto session = sessionFor(*record, nullptr, true);
    EventRecorder recorder;
    recorder.attach(*session);
    TrainingRequest request;
    request.run_dir = record->local_run_dir;
    QVERIFY(session->start(request));
    QVERIFY(waitForEnd(*session));
    QVERIFY2(session->state() == SessionState::Completed, qPrintable(session->stderrTail()));
    compareWithRemote(run, recorder);
    // Sample grids the first session had not fetched come now, those it had are not fetched again.
    for (const auto& event : eventsOfType(readEvents(run.remote_run_dir), "samples")) {
      const QString path = event.value("path").toString();
      QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(run.local_run_dir + "/" + path), 30000);
      QCOMPARE(readFileBytes(run.local_run_dir + "/" + path), readFileBytes(run.remote_run_dir + "/" + path));
    }
  }

  // Stop pressed while the host is unreachable: the stop is sent once the connection is back.
  void stopWhileReconnecting() {
    const RemoteRunRecord run = recordFor("stop-while-down");
    auto session = sessionFor(run);
    EventRecorder recorder;
    recorder.attach(*session);
    QVERIFY(session->start(requestFor(run, 200)));
    QVERIFY(waitForSteps(recorder, 6));
    sshd_->stop();
    QTRY_COMPARE_WITH_TIMEOUT(session->state(), SessionState::Reconnecting, 60000);
    session->stop();
    QTest::qWait(1000);
    QString error;
    QVERIFY2(sshd_->start(&error), qPrintable(error));
    QVERIFY(waitForEnd(*session));
    QVERIFY2(session->state() == SessionState::Stopped, qPrintable(session->stderrTail()));
    QVERIFY(eventsOfType(readEvents(run.remote_run_dir), "epoch_end").size() < 200);
    compareWithRemote(run, recorder);
  }

  void stopAndResumeARemoteRun() {
    const RemoteRunRecord run = recordFor("stop-resume");
    auto session = sessionFor(run);
    EventRecorder recorder;
    recorder.attach(*session);
    QVERIFY(session->start(requestFor(run, 40)));
    QVERIFY(waitForSteps(recorder, 6));
    session->stop();
    QVERIFY(waitForEnd(*session));
    QVERIFY2(session->state() == SessionState::Stopped, qPrintable(session->stderrTail()));
    compareWithRemote(run, recorder);

    auto resumed = sessionFor(run);
    EventRecorder after;
    after.attach(*resumed);
    TrainingRequest request;
    request.run_dir = run.local_run_dir;
    request.resume = true;
    request.extra_arguments = {"--epochs", "12", "--threads", testThreadsText()};
    QVERIFY(resumed->start(request));
    QVERIFY(waitForEnd(*resumed));
    QVERIFY2(resumed->state() == SessionState::Completed, qPrintable(resumed->stderrTail()));
    // The mirror is still the whole log, both processes, byte for byte.
    QCOMPARE(readFileBytes(run.local_run_dir + "/events.jsonl"), readFileBytes(run.remote_run_dir + "/events.jsonl"));
    QCOMPARE(recorder.events + after.events, linesOf(readFileBytes(run.remote_run_dir + "/events.jsonl")));
    QCOMPARE(eventsOfType(readEvents(run.remote_run_dir), "run_started").size(), 2);
  }

  void hostileRunNamesStayData() {
    // Remote commands start in the remote home; so would anything a name managed to run.
    const QString canary = "streetgan-test-PWNED-" + QString::number(QCoreApplication::applicationPid());
    const QString home_canary = QDir::home().filePath(canary);
    QFile::remove(home_canary);
    const QStringList names{
        "a run with spaces",
        "it's \"quoted\"",
        "semi;touch " + canary + ";x",
        "dollar $(touch " + canary + ")",
        "back `touch " + canary + "`",
        "new\nline; touch " + canary,
        "-starts-with-dash",
        "tilde ~ and * glob ?",
    };
    for (const QString& name : names) {
      const RemoteRunRecord run = recordFor(name);
      auto session = sessionFor(run);
      EventRecorder recorder;
      recorder.attach(*session);
      QVERIFY(session->start(requestFor(run, 1)));
      QVERIFY(waitForEnd(*session));
      QVERIFY2(session->state() == SessionState::Completed, qPrintable(name + ": " + session->stderrTail()));
      QVERIFY2(QFile::exists(run.remote_run_dir + "/events.jsonl"), qPrintable(name));
      compareWithRemote(run, recorder);
    }
    QVERIFY(!QFile::exists(home_canary));
    QVERIFY(!QFile::exists(canary));
    // Nothing else appeared beside the runs: one folder per name, named exactly so.
    const QStringList entries = QDir(sshd_->remoteRunsRoot()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QSet<QString> folders(entries.begin(), entries.end());
    folders.subtract({"complete", "killed-client", "sshd-restart", "reattach", "stop-while-down", "stop-resume"});
    QCOMPARE(folders, QSet<QString>(names.begin(), names.end()));
  }
};

STREETGAN_TEST_MAIN(RemoteTrainingTest)
#include "tst_remote_training.moc"
