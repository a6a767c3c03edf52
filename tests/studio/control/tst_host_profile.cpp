// HostProfile: every field kept through JSON, QSettings and a remote run's record; profiles saved
// before hosts had their own device and threads load with auto and all cores; the device is
// checked by the config's own rule; and the device and threads a run on the host is given. A
// remote.json is checked by the host dialog's rules before anything of it reaches ssh (a stand-in
// `ssh` on PATH records what it is given), and ssh always gets the destination after "--".
#include "app/studio/control/host_profile.h"
#include "app/studio/control/remote_run_record.h"
#include "app/studio/control/remote_run_transport.h"
#include "app/studio/control/ssh_command.h"
#include "app/studio/control/ssh_connection.h"
#include "app/studio/control/training_transport_factory.h"
#include "tests/support/status_check.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan::studio;
using streetgan::test::succeeded;

namespace {

HostProfile everyField() {
  HostProfile p;
  p.name = "gpu-box";
  p.host = "gpu.example.org";
  p.user = "me";
  p.port = 2222;
  p.jump_host = "me@bastion.example.org";
  p.identity_file = "/home/me/.ssh/id_ed25519";
  p.streetgan_path = "~/bin/streetgan";
  p.runs_root = "/scratch/runs";
  p.environment_line = "source /opt/env.sh";
  p.ssh_config_file = "/home/me/.ssh/other_config";
  p.known_hosts_file = "/home/me/.ssh/other_known_hosts";
  p.device = "cuda:1";
  p.threads = 12;
  p.devices = 8;
  p.cost_per_hour = 2.35;
  return p;
}

// A profile as the studio saved it before hosts had their own device and threads.
QJsonObject oldProfileJson() {
  return {{"name", "old-box"},           {"host", "old.example.org"}, {"user", "me"},
          {"port", 0},                   {"jump_host", ""},           {"identity_file", ""},
          {"streetgan_path", "streetgan"}, {"runs_root", "~/streetgan-runs"},
          {"environment_line", ""},      {"ssh_config_file", ""},     {"known_hosts_file", ""}};
}

}  // namespace

class TestHostProfile : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    qputenv("HOME", home_.path().toUtf8());  // QSettings stays in the test's folder
    qputenv("XDG_CONFIG_HOME", home_.filePath(".config").toUtf8());
    QCoreApplication::setOrganizationName("StreetGAN-tests");
    QCoreApplication::setApplicationName("tst_host_profile");
    // A stand-in ssh, first on PATH: it writes its arguments one a line and answers like
    // `streetgan --version`.
    const QString bin = home_.filePath("bin");
    QVERIFY(QDir().mkpath(bin));
    QFile ssh(bin + "/ssh");
    QVERIFY(ssh.open(QIODevice::WriteOnly));
    ssh.write("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$STREETGAN_TEST_SSH_LOG\"\necho 'streetgan 0'\n");
    ssh.close();
    QVERIFY(ssh.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    ssh_log_ = home_.filePath("ssh-arguments");
    qputenv("STREETGAN_TEST_SSH_LOG", ssh_log_.toUtf8());
    qputenv("PATH", bin.toUtf8() + ":" + qgetenv("PATH"));
  }

  void newProfileDefaults() {
    const HostProfile p;
    QCOMPARE(p.device, QString("auto"));
    QCOMPARE(p.threads, 0);
  }

  void jsonRoundTrip() {
    const HostProfile p = everyField();
    const QJsonObject json = p.toJson();
    QCOMPARE(json.value("device").toString(), QString("cuda:1"));
    QCOMPARE(json.value("threads").toInt(), 12);
    const HostProfile back = HostProfile::fromJson(json);
    QVERIFY(back == p);
    QCOMPARE(back.device, QString("cuda:1"));
    QCOMPARE(back.threads, 12);
    QCOMPARE(json.value("devices").toInt(), 8);
    QCOMPARE(back.devices, 8);
    QCOMPARE(json.value("cost_per_hour").toDouble(), 2.35);
    QCOMPARE(back.cost_per_hour, 2.35);
  }

  void oldProfileLoadsWithDefaults() {
    const HostProfile old = HostProfile::fromJson(oldProfileJson());
    QCOMPARE(old.host, QString("old.example.org"));
    QCOMPARE(old.device, QString("auto"));
    QCOMPARE(old.threads, 0);
    QCOMPARE(old.devices, 1);
    QCOMPARE(old.cost_per_hour, 0.0);  // not known
    QVERIFY2(old.validate().isEmpty(), qPrintable(old.validate()));
  }

  void settingsRoundTripWithAnOldProfile() {
    // What an older studio left in the settings, then saved and loaded again by this one.
    {
      QSettings settings;
      settings.setValue("hosts/profiles", QJsonDocument(QJsonArray{oldProfileJson()}).toJson(QJsonDocument::Compact));
    }
    QList<HostProfile> loaded = loadHostProfiles();
    QCOMPARE(loaded.size(), 1);
    QCOMPARE(loaded.first().device, QString("auto"));
    QCOMPARE(loaded.first().threads, 0);
    loaded.push_back(everyField());
    saveHostProfiles(loaded);
    const QList<HostProfile> again = loadHostProfiles();
    QCOMPARE(again.size(), 2);
    QVERIFY(again[0] == loaded[0]);
    QVERIFY(again[1] == loaded[1]);
    QCOMPARE(again[1].device, QString("cuda:1"));
    QCOMPARE(again[1].threads, 12);
  }

  void remoteRunRecordKeepsThem() {
    QTemporaryDir run;
    const RemoteRunRecord record{everyField(), "/scratch/runs/x", run.path()};
    QCOMPARE(record.write(), QString());
    const auto read = RemoteRunRecord::read(run.path());
    QVERIFY(read.has_value());
    QCOMPARE(read->host.device, QString("cuda:1"));
    QCOMPARE(read->host.threads, 12);
    QCOMPARE(read->host.devices, 8);
    QCOMPARE(read->host.cost_per_hour, 2.35);
  }

  // A run on several hosts keeps its other hosts and where they meet; a hostile remote.json's
  // bad master address or port, or a bad host among them, is named and nothing reaches ssh.
  void remoteRunRecordOnSeveralHosts_data() {
    QTest::addColumn<QString>("master_addr");
    QTest::addColumn<int>("master_port");
    QTest::addColumn<QString>("second_host");
    QTest::addColumn<QString>("message");
    QTest::newRow("valid") << "10.0.0.1" << 29500 << "gpu2.example.org" << "";
    QTest::newRow("node 0's host name") << "" << 29501 << "gpu2.example.org" << "";
    QTest::newRow("address as an option") << "-oProxyCommand=x" << 29500 << "gpu2.example.org"
                                          << "master_addr '-oProxyCommand=x' is not a host name or address.";
    QTest::newRow("address with a space") << "a b" << 29500 << "gpu2.example.org"
                                          << "master_addr 'a b' is not a host name or address.";
    QTest::newRow("port 0") << "10.0.0.1" << 0 << "gpu2.example.org"
                            << "master_port 0 is not allowed; allowed: 1 to 65535.";
    QTest::newRow("port too large") << "10.0.0.1" << 70000 << "gpu2.example.org"
                                    << "master_port 70000 is not allowed; allowed: 1 to 65535.";
    QTest::newRow("bad second host") << "10.0.0.1" << 29500 << "-oProxyCommand=x" << "more_hosts[0]: ";
  }

  void remoteRunRecordOnSeveralHosts() {
    QFETCH(QString, master_addr);
    QFETCH(int, master_port);
    QFETCH(QString, second_host);
    QFETCH(QString, message);
    QTemporaryDir run;
    RemoteRunRecord record{everyField(), "/scratch/runs/x", run.path()};
    HostProfile second = everyField();
    second.host = second_host;
    second.runs_root = "/data/runs";
    record.more_hosts = {second};
    record.master_addr = master_addr;
    record.master_port = master_port;
    QCOMPARE(record.write(), QString());
    const auto read = RemoteRunRecord::read(run.path());
    QVERIFY(read.has_value());
    QCOMPARE(read->nodeCount(), 2);
    QCOMPARE(read->more_hosts.first().host, second_host);
    QCOMPARE(read->master_port, master_port);
    QCOMPARE(read->masterAddress(), master_addr.isEmpty() ? everyField().host : master_addr);
    QCOMPARE(read->remoteRunDirOn(1), QString("/data/runs/x"));
    QCOMPARE(read->remoteRunDirOn(0), QString("/scratch/runs/x"));
    const QString problem = read->validate();
    if (message.isEmpty()) {
      QCOMPARE(problem, QString());
      return;
    }
    const QString file = QDir(run.path()).filePath("remote.json");
    QVERIFY2(problem.startsWith(file + ": " + message), qPrintable(problem));
    QFile::remove(ssh_log_);
    const TrainingTransportFactory factory("streetgan");
    auto transport = factory.forRun(run.path(), false);
    QString error;
    QVERIFY(!succeeded(transport->start({"train", "--run-dir", run.path(), "--resume"}), &error));
    QCOMPARE(error, problem);
    QVERIFY2(!QFile::exists(ssh_log_), "ssh was started");
  }

  void validate_data() {
    QTest::addColumn<QString>("device");
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("devices");
    QTest::addColumn<double>("cost");
    QTest::addColumn<QString>("message");
    QTest::newRow("auto") << "auto" << 0 << 1 << 2.35 << "";
    QTest::newRow("cpu, 4 threads") << "cpu" << 4 << 1 << 2.35 << "";
    QTest::newRow("cuda") << "cuda" << 0 << 1 << 2.35 << "";
    QTest::newRow("cuda:3") << "cuda:3" << 1024 << 1 << 2.35 << "";
    QTest::newRow("unknown device") << "tpu" << 0 << 1 << 2.35 << "Device: \"tpu\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu.";
    QTest::newRow("cuda:x") << "cuda:x" << 0 << 1 << 2.35 << "Device: \"cuda:x\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu.";
    QTest::newRow("negative threads") << "auto" << -1 << 1 << 2.35 << "CPU threads: -1 is not allowed (0 for all cores, or 1–1024).";
    QTest::newRow("too many threads") << "auto" << 1025 << 1 << 2.35 << "CPU threads: 1025 is not allowed (0 for all cores, or 1–1024).";
    QTest::newRow("hpu") << "hpu" << 0 << 1 << 2.35 << "";
    QTest::newRow("8 devices") << "cuda" << 0 << 8 << 2.35 << "";
    QTest::newRow("no devices") << "cuda" << 0 << 0 << 2.35 << "Devices to use: 0 is not allowed (1–1024).";
    QTest::newRow("no cost given") << "auto" << 0 << 1 << 0.0 << "";
    QTest::newRow("negative cost") << "auto" << 0 << 1 << -1.0 << "Cost per hour: -1 is not allowed (0 for not known, up to 100000 dollars).";
  }

  void validate() {
    QFETCH(QString, device);
    QFETCH(int, threads);
    QFETCH(int, devices);
    QFETCH(double, cost);
    QFETCH(QString, message);
    HostProfile p = everyField();
    p.device = device;
    p.threads = threads;
    p.devices = devices;
    p.cost_per_hour = cost;
    QCOMPARE(p.validate(), message);
  }

  void deviceArguments_data() {
    QTest::addColumn<QString>("hostDevice");
    QTest::addColumn<int>("hostThreads");
    QTest::addColumn<QString>("configDevice");
    QTest::addColumn<int>("configThreads");
    QTest::addColumn<int>("devices");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("defaults") << "auto" << 0 << "auto" << 0 << 1 << QStringList{"--device", "auto", "--threads", "0"};
    QTest::newRow("the host's") << "cuda:1" << 8 << "auto" << 0 << 1 << QStringList{"--device", "cuda:1", "--threads", "8"};
    QTest::newRow("the config's device wins") << "cuda:1" << 8 << "cpu" << 0 << 1 << QStringList{"--threads", "8"};
    QTest::newRow("the config's threads win") << "cuda:1" << 8 << "auto" << 2 << 1 << QStringList{"--device", "cuda:1"};
    QTest::newRow("the config's both") << "cuda:1" << 8 << "cuda:0" << 2 << 1 << QStringList{};
    QTest::newRow("8 devices: 8 ranks") << "cuda" << 0 << "auto" << 0 << 8
                                        << QStringList{"--device", "cuda", "--threads", "0", "--nproc", "8"};
  }

  void deviceArguments() {
    QFETCH(QString, hostDevice);
    QFETCH(int, hostThreads);
    QFETCH(QString, configDevice);
    QFETCH(int, configThreads);
    QFETCH(int, devices);
    QFETCH(QStringList, expected);
    HostProfile p = everyField();
    p.device = hostDevice;
    p.threads = hostThreads;
    p.devices = devices;
    QCOMPARE(p.deviceArguments(configDevice, configThreads), expected);
  }

  // ssh reads its options up to "--": the destination comes after it, whatever it holds; the
  // remote command after the destination; a control command's -O among the options.
  void destinationFollowsDoubleDash() {
    const SshConnection connection(everyField(), home_.filePath("control"));
    const QStringList args = connection.sshArguments();
    QCOMPARE(args.mid(args.size() - 3), (QStringList{"-T", "--", "gpu.example.org"}));
    QCOMPARE(args.count("--"), qsizetype(1));
    const QStringList command = connection.streetganCommand({"--version"});
    QCOMPARE(command.mid(command.size() - 4, 3), (QStringList{"-T", "--", "gpu.example.org"}));
    QVERIFY2(command.last().endsWith(" '--version'"), qPrintable(command.last()));
    const QStringList control = connection.controlArguments("check");
    QCOMPARE(control.mid(control.size() - 5), (QStringList{"-O", "check", "-T", "--", "gpu.example.org"}));

    // What ssh itself is given.
    QFile::remove(ssh_log_);
    const SshResult result = SshCommand::runAndWait(connection, {"--version"});
    QVERIFY2(result.ok(), qPrintable(result.message));
    const QStringList given = QString::fromUtf8(readAll(ssh_log_)).split('\n');
    const qsizetype host = given.indexOf("gpu.example.org");
    QVERIFY(host >= 2);
    QCOMPARE(given[host - 1], QString("--"));
    QCOMPARE(given[host - 2], QString("-T"));
    QFile::remove(ssh_log_);
  }

  // A remote.json edited or copied from elsewhere: it is still read (the run is listed as remote),
  // but validate() names what the host dialog would refuse, and neither opening the run nor
  // resuming it (nor any ssh command with its profile) starts ssh.
  void hostileRecordsAreRefused_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");  // after "<run>/remote.json: "; empty: accepted
    QTest::newRow("as written") << "name" << "gpu-box" << "";
    // The environment line is shell by design (docs/remote.md: "yours and runs as written"), run
    // on the host as the profile's user: accepted as it is.
    QTest::newRow("environment line is shell") << "environment_line" << "source /opt/env.sh; export A=1" << "";
    QTest::newRow("host is an option") << "host" << "-oProxyCommand=touch /tmp/streetgan-test-pwned"
                                       << "Host: '-oProxyCommand=touch /tmp/streetgan-test-pwned' cannot start with '-'.";
    QTest::newRow("user is an option") << "user" << "-oProxyCommand=x" << "User: '-oProxyCommand=x' cannot start with '-'.";
    QTest::newRow("jump host is an option") << "jump_host" << "-oProxyCommand=x"
                                            << "Jump host: '-oProxyCommand=x' cannot start with '-'.";
    QTest::newRow("two jump hosts") << "jump_host" << "a.example.org,b.example.org"
                                    << "Jump host: 'a.example.org,b.example.org' is not one host as [user@]host[:port].";
    QTest::newRow("jump host port past 65535") << "jump_host" << "me@bastion:70000"
                                               << "Jump host: 'me@bastion:70000' is not one host as [user@]host[:port].";
    QTest::newRow("host with an option after it") << "host" << "gpu.example.org -oProxyCommand=x"
                                                  << "Host: 'gpu.example.org -oProxyCommand=x' cannot contain spaces or control characters.";
    QTest::newRow("port too high") << "port" << "70000" << "Port: 70000 is not a port (1–65535, or 0 for ssh's default).";
    QTest::newRow("negative port") << "port" << "-22" << "Port: -22 is not a port (1–65535, or 0 for ssh's default).";
    QTest::newRow("program is an option") << "streetgan_path" << "-c" << "streetgan path: '-c' cannot start with '-'.";
    QTest::newRow("program with a line break") << "streetgan_path" << "streetgan\ntouch x"
                                               << "The remote paths cannot contain control characters.";
    QTest::newRow("key file with a line break") << "identity_file" << "/k\nProxyCommand touch x"
                                                << "Key file: the path cannot contain control characters.";
    QTest::newRow("ssh config with a line break") << "ssh_config_file" << "/c\nProxyCommand touch x"
                                                  << "ssh config file: the path cannot contain control characters.";
    QTest::newRow("known hosts with a line break") << "known_hosts_file" << "/k\nProxyCommand touch x"
                                                   << "Known hosts file: the path cannot contain control characters.";
    QTest::newRow("unknown device") << "device" << "tpu" << "Device: \"tpu\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu.";
    QTest::newRow("run directory is an option") << "remote_run_dir" << "--help"
                                                << "the remote run directory '--help' cannot start with '-'.";
  }

  void hostileRecordsAreRefused() {
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, message);
    QTemporaryDir run;
    QJsonObject host = everyField().toJson();
    QString remote_run_dir = "/scratch/runs/x";
    if (field == "remote_run_dir") remote_run_dir = value;
    else if (field == "port") host[field] = value.toInt();
    else host[field] = value;
    QFile file(QDir(run.path()).filePath("remote.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QJsonDocument(QJsonObject{{"host", host}, {"remote_run_dir", remote_run_dir}}).toJson());
    file.close();

    const auto record = RemoteRunRecord::read(run.path());
    QVERIFY(record.has_value());
    const QString expected = message.isEmpty() ? QString() : file.fileName() + ": " + message;
    QCOMPARE(record->validate(), expected);
    if (message.isEmpty()) return;
    QFile::remove(ssh_log_);
    const TrainingTransportFactory factory("streetgan");
    for (const bool attach : {true, false}) {  // the run opened from the Runs tab, or resumed
      auto transport = factory.forRun(run.path(), attach);
      QVERIFY(qobject_cast<RemoteRunTransport*>(transport.get()));
      QString error;
      QVERIFY(!succeeded(transport->start({"train", "--run-dir", run.path(), "--resume"}), &error));
      QCOMPARE(error, expected);
    }
    if (field != "remote_run_dir" && field != "device") {  // the profile itself cannot reach ssh
      const SshResult result = SshCommand::runAndWait(SshConnection(record->host, home_.filePath("control")), {"--version"});
      QVERIFY(!result.ok());
      QCOMPARE(result.message, "The host profile " + record->host.label() + " cannot be used: " + message);
    }
    QVERIFY2(!QFile::exists(ssh_log_), "ssh was started");
  }

  // A run named "-x" right in the remote home is "./-x" there, never an option.
  void remoteRunDirNeverStartsWithADash() {
    HostProfile p = everyField();
    p.runs_root = "~/";
    QCOMPARE(RemoteRunRecord::remoteRunDirFor(p, "-x"), QString("./-x"));
    QCOMPARE(RemoteRunRecord::remoteRunDirFor(p, "x"), QString("x"));
    p.runs_root = "~";
    QCOMPARE(RemoteRunRecord::remoteRunDirFor(p, "-x"), QString("./-x"));
  }

private:
  static QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
  }

  QTemporaryDir home_;
  QString ssh_log_;
};

STREETGAN_TEST_GUILESS_MAIN(TestHostProfile)
#include "tst_host_profile.moc"
