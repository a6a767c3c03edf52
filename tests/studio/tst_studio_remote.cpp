// The studio's side of remote training, offscreen, through a real sshd (SshdFixture): the host
// dialog's Test Connection with the host-key question (refused, then accepted), a run on the host
// from the Train tab with its samples shown and a checkpoint fetched, the Runs tab's Host column,
// and re-opening the run in a new Train tab (re-attach); the host's own device and CPU threads in the
// dialog and in what a run on it is given (the form's device and threads win when set, this
// computer's Settings never reach the host). Screenshots of each.
#include "app/studio/control/remote_run_record.h"
#include "app/studio/host_dialog.h"
#include "app/studio/host_key_prompt.h"
#include "app/studio/run_dashboard.h"
#include "app/studio/run_list_model.h"
#include "app/studio/train_tab.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"
#include "widgets/dataset_picker.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan::studio;
using namespace streetgan::widgets;
using namespace streetgan::test;

class TestStudioRemote : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;
  QString data_;
  std::unique_ptr<SshdFixture> sshd_;
  QString remote_run_;  // the local copy of the run trained on the host

  void tinyConfig(TrainTab& tab, int epochs) {
    tab.setDataroot(data_);
    for (const auto& [key, value] : tinyFormEntries(epochs)) tab.form().enterText(key, value);
    QVERIFY2(tab.form().isValid(), "the tiny config was refused");
  }

  // Trains one epoch of the tiny config on `profile`'s host from a Train tab whose Settings say
  // cuda:7 and 3 threads (neither may reach the host), with the form's device and threads; returns
  // the config the remote run started with (its run_started event).
  // The run_started event of a 1-epoch run on `profile` (its config under "config").
  QJsonObject remoteRunStarted(const HostProfile& profile, const QString& form_device, const QString& form_threads) {
    TrainTab tab(STREETGAN_CLI, dir_.filePath("runs-device"));
    tab.setSshControlDir(sshd_->controlDir());
    tab.setRunDefaults("cuda:7", 3);
    tab.setHostProfiles({profile});
    if (!tab.setRunOn(profile.label())) return {};
    tinyConfig(tab, 1);
    tab.form().enterText("device", form_device);
    tab.form().enterText("threads", form_threads);
    QSignalSpy finished(&tab, &TrainTab::runFinished);
    if (!tab.startRun()) {
      qWarning("%s", qPrintable(tab.statusText()));
      return {};
    }
    if (!finished.wait(120000) || finished.first().first().value<SessionState>() != SessionState::Completed) {
      qWarning("%s", qPrintable(tab.statusText()));
      return {};
    }
    const auto record = RemoteRunRecord::read(tab.runDirectory());
    if (!record) return {};
    const auto started = eventsOfType(readEvents(record->remote_run_dir), "run_started");
    return started.size() == 1 ? started.first() : QJsonObject();
  }

private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("StreetGAN-tests");
    QCoreApplication::setApplicationName("tst_studio_remote");
    qRegisterMetaType<HostCheckResult>();
    qputenv("HOME", dir_.path().toUtf8());  // QSettings stays in the test's folder
    sshd_ = std::make_unique<SshdFixture>(dir_.filePath("sshd"));
    QString error;
    QVERIFY2(sshd_->start(&error), qPrintable(error));
    data_ = makeTinyDataset(dir_.filePath("data"));
  }

  void cleanupTestCase() { sshd_.reset(); }

  void hostDialogAsksAboutTheKeyAndTests() {
    HostDialog dialog({sshd_->profile()});
    dialog.setControlDir(sshd_->controlDir());
    dialog.show();
    QList<HostKeyProbe> asked;
    dialog.setHostKeyDecider([&](const HostKeyProbe& probe) {
      asked << probe;
      return false;  // refused: nothing may be trusted
    });
    QSignalSpy tested(&dialog, &HostDialog::testFinished);
    dialog.testConnection();
    QVERIFY(tested.wait(60000));
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.first().fingerprints, QStringList{sshd_->hostKeyFingerprint()});
    QVERIFY2(dialog.testResultText().startsWith("Refused:"), qPrintable(dialog.testResultText()));
    QVERIFY(dialog.testResultText().contains(sshd_->hostKeyFingerprint().section(' ', 1)));
    QVERIFY(!QFile::exists(sshd_->knownHostsFile()));

    // The question as the user sees it.
    std::unique_ptr<QMessageBox> prompt(makeHostKeyPrompt(asked.first(), sshd_->profile().destination(), nullptr));
    prompt->show();
    QVERIFY(prompt->text().contains(sshd_->hostKeyFingerprint()));
    QCOMPARE(prompt->defaultButton()->text(), QString("Refuse"));
    QVERIFY(prompt->grab().save(testOutputDir() + "/studio-host-key-prompt.png"));
    prompt->close();

    dialog.setHostKeyDecider([&](const HostKeyProbe& probe) {
      asked << probe;
      return true;
    });
    dialog.testConnection();
    QVERIFY(tested.wait(60000));
    const auto result = tested.last().first().value<HostCheckResult>();
    QVERIFY2(result.ok(), qPrintable(result.message));
    QVERIFY2(dialog.testResultText().contains("streetgan " STREETGAN_VERSION_TEXT) &&
             dialog.testResultText().contains("devices: cpu"), qPrintable(dialog.testResultText()));
    QVERIFY(QFile::exists(sshd_->knownHostsFile()));
    QVERIFY(dialog.grab().save(testOutputDir() + "/studio-host-dialog.png"));
  }

  void remoteRunFromTheTrainTab() {
    const QString runs = dir_.filePath("runs");
    TrainTab tab(STREETGAN_CLI, runs);
    tab.resize(1400, 860);
    tab.show();
    tab.setSshControlDir(sshd_->controlDir());
    HostProfile profile = sshd_->profile();
    profile.name = "gpu-box";
    tab.setHostProfiles({profile});
    QVERIFY(tab.setRunOn("gpu-box"));
    QVERIFY(!tab.datasetPicker().isEnabled());  // a path on the host
    tinyConfig(tab, 4);
    QSignalSpy shown(&tab.dashboard(), &RunDashboard::sampleShown);
    QSignalSpy finished(&tab, &TrainTab::runFinished);
    QVERIFY2(tab.startRun(), qPrintable(tab.statusText()));
    remote_run_ = tab.runDirectory();
    QVERIFY(tab.statusText().contains("on " + profile.destination()));
    const auto record = RemoteRunRecord::read(remote_run_);
    QVERIFY(record.has_value());
    QCOMPARE(record->host.label(), QString("gpu-box"));
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Completed);
    // Samples were fetched and shown as they arrived.
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toBool(), 30000);
    QVERIFY(!tab.dashboard().shownSample().isNull());
    QCOMPARE(readFileBytes(remote_run_ + "/events.jsonl"), readFileBytes(record->remote_run_dir + "/events.jsonl"));

    QSignalSpy fetched(&tab, &TrainTab::checkpointFetched);
    QVERIFY(tab.fetchLatestCheckpoint());
    QVERIFY(fetched.wait(60000));
    const QString checkpoint = fetched.first().first().toString();
    QVERIFY(checkpoint.startsWith(remote_run_ + "/checkpoints/"));
    QCOMPARE(readFileBytes(checkpoint), readFileBytes(record->remote_run_dir + checkpoint.mid(remote_run_.size())));
    QVERIFY2(tab.statusText().contains("the Explore tab can open it"), qPrintable(tab.statusText()));
    QVERIFY(tab.grab().save(testOutputDir() + "/studio-remote-run.png"));
  }

  void hostDialogKeepsDeviceAndThreads() {
    HostProfile gpu = sshd_->profile();
    gpu.name = "gpu";
    gpu.device = "cuda:1";
    gpu.threads = 6;
    gpu.devices = 4;
    HostProfile plain = sshd_->profile();
    plain.name = "plain";
    HostDialog dialog({gpu, plain});
    dialog.show();
    auto* device = dialog.findChild<QComboBox*>("device");
    auto* threads = dialog.findChild<QSpinBox*>("threads");
    auto* devices = dialog.findChild<QSpinBox*>("devices");
    QVERIFY(device && threads && devices);
    QVERIFY(device->isEditable());
    for (const char* item : {"auto", "cpu", "cuda", "cuda:0", "hpu"}) QVERIFY(device->findText(item) >= 0);
    QCOMPARE(device->currentText(), QString("cuda:1"));
    QCOMPARE(threads->value(), 6);
    QCOMPARE(devices->value(), 4);
    dialog.selectProfile(1);
    QCOMPARE(device->currentText(), QString("auto"));
    QCOMPARE(threads->text(), QString("All cores"));
    QCOMPARE(devices->value(), 1);
    device->setCurrentText("cpu");
    threads->setValue(2);
    devices->setValue(2);
    dialog.selectProfile(0);  // stores the fields of the one left
    QCOMPARE(device->currentText(), QString("cuda:1"));
    QVERIFY(dialog.grab().save(testOutputDir() + "/studio-host-dialog-device.png"));
    device->setCurrentText("tpu");
    auto* save = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save);
    save->click();  // refused: tpu is no device
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    QVERIFY2(dialog.testResultText().contains("Device: \"tpu\" is not allowed"), qPrintable(dialog.testResultText()));
    device->setCurrentText("cuda");
    save->click();
    QCOMPARE(dialog.result(), int(QDialog::Accepted));
    const QList<HostProfile> saved = loadHostProfiles();
    QCOMPARE(saved.size(), 2);
    QCOMPARE(saved[0].device, QString("cuda"));
    QCOMPARE(saved[0].threads, 6);
    QCOMPARE(saved[0].devices, 4);
    QCOMPARE(saved[1].device, QString("cpu"));
    QCOMPARE(saved[1].threads, 2);
    QCOMPARE(saved[1].devices, 2);
  }

  void remoteRunUsesTheHostsDeviceAndThreads() {
    HostProfile profile = sshd_->profile();
    profile.name = "cpu-box";
    profile.device = "cpu";
    profile.threads = 1;
    // The form leaves both to the host (auto, 0).
    const QJsonObject config = remoteRunStarted(profile, "auto", "0").value("config").toObject();
    QCOMPARE(config.value("device").toString(), QString("cpu"));
    QCOMPARE(config.value("threads").toInt(), 1);
  }

  // "Devices to use" 2: the run on the host starts with --nproc 2, over the real sshd.
  void hostDevicesStartRanks() {
    HostProfile profile = sshd_->profile();
    profile.name = "two-ranks";
    profile.device = "cpu";
    profile.threads = 1;
    profile.devices = 2;
    const QJsonObject started = remoteRunStarted(profile, "auto", "0");
    QCOMPARE(started.value("world_size").toInt(), 2);
    QCOMPARE(started.value("backend").toString(), QString("gloo"));
  }

  void formDeviceAndThreadsWinOnTheHost() {
    HostProfile profile = sshd_->profile();
    profile.name = "cuda-box";
    profile.device = "cuda";  // this host has no CUDA: the run would fail with it
    profile.threads = 1;
    const QJsonObject config = remoteRunStarted(profile, "cpu", "2").value("config").toObject();
    QCOMPARE(config.value("device").toString(), QString("cpu"));
    QCOMPARE(config.value("threads").toInt(), 2);
  }

  // A run on two hosts (two sshd on loopback: the studio reaches every node over SSH as it would
  // real hosts; the ranks meet at node 0's 127.0.0.1, which both "hosts" share). The multi-node
  // engine over a real network between namespaces is tests/cli/tst_multi_node; here, the studio's
  // part: "Also on", one launch per host, the Runs tab's "2 hosts × 1 rank", Stop reaching both.
  void runOnTwoHostsFromTheTrainTab() {
    SshdFixture second(dir_.filePath("sshd-2"));
    QString error;
    QVERIFY2(second.start(&error), qPrintable(error));
    QVERIFY2(second.trustHostKey(&error), qPrintable(error));
    QVERIFY2(sshd_->trustHostKey(&error), qPrintable(error));
    HostProfile first = sshd_->profile(), other = second.profile();
    first.name = "node-a";
    other.name = "node-b";
    for (HostProfile* profile : {&first, &other}) {
      profile->device = "cpu";
      profile->threads = 1;
    }
    const QString runs = dir_.filePath("runs-two-hosts");
    TrainTab tab(STREETGAN_CLI, runs);
    tab.resize(1400, 860);
    tab.show();
    tab.setSshControlDir(sshd_->controlDir());
    tab.setHostProfiles({first, other});
    QVERIFY(tab.alsoOnHosts().isEmpty());
    QVERIFY(!tab.setAlsoOn({"node-b"}));  // this computer in Run on: no other node
    QVERIFY(tab.setRunOn("node-a"));
    QVERIFY(!tab.setAlsoOn({"node-a"}));  // the Run on host is node 0 already
    QVERIFY(tab.setAlsoOn({"node-b"}));
    QCOMPARE(tab.alsoOnHosts().size(), 1);
    tinyConfig(tab, 2);
    QSignalSpy finished(&tab, &TrainTab::runFinished);
    QSignalSpy shown(&tab.dashboard(), &RunDashboard::sampleShown);
    QVERIFY2(tab.startRun(), qPrintable(tab.statusText()));
    const auto record = RemoteRunRecord::read(tab.runDirectory());
    QVERIFY(record.has_value());
    QCOMPARE(record->nodeCount(), 2);
    QCOMPARE(record->more_hosts.first().label(), QString("node-b"));
    QVERIFY(finished.wait(180000));
    QVERIFY2(finished.first().first().value<SessionState>() == SessionState::Completed, qPrintable(tab.statusText()));
    const auto started = eventsOfType(readEvents(record->remote_run_dir), "run_started");
    QCOMPARE(started.size(), 1);
    QCOMPARE(started.first().value("world_size").toInt(), 2);
    QCOMPARE(started.first().value("nodes").toInt(), 2);
    QVERIFY(record->remoteRunDirOn(1).startsWith(second.remoteRunsRoot()));
    QVERIFY(!QFile::exists(record->remoteRunDirOn(1) + "/events.jsonl"));  // rank 0 alone writes
    // The last sample grid fetched from node 0 and shown, for the screenshot.
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toBool(), 30000);
    QVERIFY(tab.grab().save(testOutputDir() + "/studio-remote-two-hosts.png"));

    RunListModel model;
    QSignalSpy refreshed(&model, &RunListModel::refreshed);
    model.setRoot(runs);
    QVERIFY(refreshed.wait(30000));
    const int row = model.rowOf(tab.runDirectory());
    QVERIFY(row >= 0);
    QCOMPARE(model.data(model.index(row, RunListModel::Device), Qt::DisplayRole).toString(),
             QString::fromUtf8("cpu, 2 hosts × 1 rank, gloo"));
    QCOMPARE(model.data(model.index(row, RunListModel::Host), Qt::DisplayRole).toString(), QString("node-a"));

    // Stop reaches both hosts: both launchers end, the run stopped with a checkpoint.
    tinyConfig(tab, 400);
    QSignalSpy stopped(&tab, &TrainTab::runFinished);
    QVERIFY2(tab.startRun(), qPrintable(tab.statusText()));
    const auto long_run = RemoteRunRecord::read(tab.runDirectory());
    QVERIFY(long_run.has_value());
    QTRY_VERIFY_WITH_TIMEOUT(!eventsOfType(readEvents(long_run->remote_run_dir), "checkpoint").isEmpty(), 120000);
    tab.stopRun();
    QVERIFY(stopped.wait(120000));
    QVERIFY2(stopped.first().first().value<SessionState>() == SessionState::Stopped, qPrintable(tab.statusText()));
    // No process of node 1's run is left (its launcher and rank ended with the stop).
    const auto node1Running = [&] {
      for (const QString& pid : QDir("/proc").entryList(QDir::Dirs))
        if (readFileBytes("/proc/" + pid + "/cmdline").contains(long_run->remoteRunDirOn(1).toUtf8())) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(!node1Running(), 60000);
  }

  void runsTabShowsTheHostAndReopens() {
    QVERIFY(!remote_run_.isEmpty());
    RunListModel model;
    QSignalSpy refreshed(&model, &RunListModel::refreshed);
    model.setRoot(QFileInfo(remote_run_).absolutePath());
    model.refresh();
    QVERIFY(refreshed.wait(30000));
    const int row = model.rowOf(remote_run_);
    QVERIFY(row >= 0);
    QCOMPARE(model.data(model.index(row, RunListModel::Host), Qt::DisplayRole).toString(), QString("gpu-box"));
    QCOMPARE(model.data(model.index(row, RunListModel::State), Qt::DisplayRole).toString(), QString("completed"));

    // A new Train tab (a restarted studio) opens it: the history from the copy, the host asked
    // for the rest, the same events once.
    TrainTab tab(STREETGAN_CLI, QFileInfo(remote_run_).absolutePath());
    tab.setSshControlDir(sshd_->controlDir());
    QSignalSpy finished(&tab, &TrainTab::runFinished);
    QVERIFY(tab.openRun(remote_run_));
    QVERIFY(finished.wait(60000));
    QCOMPARE(finished.first().first().value<SessionState>(), SessionState::Completed);
    qint64 lines = 0;
    for (const QByteArray& line : readFileBytes(remote_run_ + "/events.jsonl").split('\n')) lines += !line.trimmed().isEmpty();
    QCOMPARE(tab.session()->eventCount(), lines);
  }
};

STREETGAN_TEST_MAIN(TestStudioRemote)
#include "tst_studio_remote.moc"
