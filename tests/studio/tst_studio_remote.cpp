// The studio's side of remote training, offscreen, through a real sshd (SshdFixture): the host
// dialog's Test Connection with the host-key question (refused, then accepted), a run on the host
// from the Train tab with its samples shown and a checkpoint fetched, the Runs tab's Host column,
// and re-opening the run in a new Train tab (re-attach). Screenshots of each.
#include "app/studio/control/remote_run_record.h"
#include "app/studio/host_dialog.h"
#include "app/studio/host_key_prompt.h"
#include "app/studio/run_dashboard.h"
#include "app/studio/run_list_model.h"
#include "app/studio/train_tab.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/test_support.h"
#include "widgets/dataset_picker.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
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

QTEST_MAIN(TestStudioRemote)
#include "tst_studio_remote.moc"
