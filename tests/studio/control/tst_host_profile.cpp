// HostProfile: every field kept through JSON, QSettings and a remote run's record; profiles saved
// before hosts had their own device and threads load with auto and all cores; the device is
// checked by the config's own rule; and the device and threads a run on the host is given.
#include "app/studio/control/host_profile.h"
#include "app/studio/control/remote_run_record.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan::studio;

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

private:
  QTemporaryDir home_;
};

QTEST_GUILESS_MAIN(TestHostProfile)
#include "tst_host_profile.moc"
