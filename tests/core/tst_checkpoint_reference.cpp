// What `--checkpoint` and the studio's Open File… accept (core/runs/checkpoint_reference.h): a
// file as given, a run folder's newest checkpoint, RUN@STEP (the newest at or before STEP) and
// RUN@latest, as one data table over real folders; and every refusal, naming the text given.
#include "core/runs/checkpoint_reference.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan;

class TestCheckpointReference : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString root_;

  void touch(const QString& path, const QByteArray& bytes = "x") {
    QVERIFY(QDir().mkpath(QFileInfo(path).path()));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
  }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    root_ = dir_.path();
    // A run with checkpoints at steps 8, 12 and 96, and what must never be chosen: a write that
    // never finished (.tmp), a name that is not a step, and a folder named like a checkpoint.
    for (const char* name : {"step-0000000008.pt", "step-0000000012.pt", "step-0000000096.pt",
                             "step-0000000200.pt.tmp", "step-12.pt", "notes.pt"})
      touch(root_ + "/runs/first/checkpoints/" + name);
    touch(root_ + "/runs/first/events.jsonl", "{}\n");
    QVERIFY(QDir().mkpath(root_ + "/runs/odd/checkpoints/step-0000000500.pt"));
    touch(root_ + "/runs/odd/checkpoints/step-0000000004.pt");
    QVERIFY(QDir().mkpath(root_ + "/runs/empty/checkpoints"));
    touch(root_ + "/runs/logonly/events.jsonl", "{}\n");
    QVERIFY(QDir().mkpath(root_ + "/notarun/images"));
    touch(root_ + "/file@3");
    touch(root_ + "/runs/first/checkpoints/copy.pt");
    // checkpoints/ that cannot be listed, or holds only a checkpoint's name that is no file.
    QVERIFY(QDir().mkpath(root_ + "/runs/loop"));
    QVERIFY(QFile::link("checkpoints", root_ + "/runs/loop/checkpoints"));
    touch(root_ + "/runs/flat/checkpoints");
    QVERIFY(QDir().mkpath(root_ + "/runs/names/checkpoints/step-0000000001.pt"));
  }

  void resolves_data() {
    QTest::addColumn<QString>("text");  // relative to the root; %R: the root
    QTest::addColumn<QString>("path");  // "" when refused
    QTest::addColumn<bool>("fromRun");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<QString>("error");  // the refusal, with %R for the root

    const QString first = "runs/first/checkpoints/";
    QTest::newRow("a file, as given") << first + "copy.pt" << first + "copy.pt" << false << qint64(-1) << "";
    QTest::newRow("a missing file, as given: its loader says so") << "runs/none.pt" << "runs/none.pt" << false << qint64(-1) << "";
    QTest::newRow("a file whose name has @") << "file@3" << "file@3" << false << qint64(-1) << "";
    QTest::newRow("run folder: newest") << "runs/first" << first + "step-0000000096.pt" << true << qint64(96) << "";
    QTest::newRow("run folder with a slash") << "runs/first/" << first + "step-0000000096.pt" << true << qint64(96) << "";
    QTest::newRow("@latest") << "runs/first@latest" << first + "step-0000000096.pt" << true << qint64(96) << "";
    QTest::newRow("@ a step that has one") << "runs/first@12" << first + "step-0000000012.pt" << true << qint64(12) << "";
    QTest::newRow("@ between two") << "runs/first@95" << first + "step-0000000012.pt" << true << qint64(12) << "";
    QTest::newRow("@ past the last") << "runs/first@9999999999" << first + "step-0000000096.pt" << true << qint64(96) << "";
    QTest::newRow("@ leading zeros") << "runs/first@0000000008" << first + "step-0000000008.pt" << true << qint64(8) << "";
    QTest::newRow("a folder named like a checkpoint is passed over") << "runs/odd" << "runs/odd/checkpoints/step-0000000004.pt" << true << qint64(4) << "";
    QTest::newRow("@ before the first") << "runs/first@7" << "" << false << qint64(-1)
        << "runs/first@7: the run runs/first has no checkpoint at or before step 7 (its first is at step 8)";
    QTest::newRow("empty run") << "runs/empty" << "" << false << qint64(-1)
        << "the run runs/empty has no checkpoint yet (checkpoints/ holds no step-*.pt file); give it time to save one, or give a checkpoint file";
    QTest::newRow("a run with only its log") << "runs/logonly@latest" << "" << false << qint64(-1)
        << "runs/logonly@latest: the run runs/logonly has no checkpoint yet (checkpoints/ holds no step-*.pt file); give it time to save one, or give a checkpoint file";
    QTest::newRow("checkpoints/ a link to itself") << "runs/loop" << "" << false << qint64(-1)
        << "cannot list runs/loop/checkpoints: Too many levels of symbolic links";
    QTest::newRow("checkpoints a file") << "runs/flat@latest" << "" << false << qint64(-1)
        << "runs/flat@latest: runs/flat/checkpoints is not a folder";
    QTest::newRow("only a checkpoint's name") << "runs/names" << "" << false << qint64(-1)
        << "the run runs/names has no checkpoint yet (checkpoints/ holds no step-*.pt file, only 1 name(s) of one that "
           "are not files); give it time to save one, or give a checkpoint file";
    QTest::newRow("missing run @") << "runs/missing@3" << "" << false << qint64(-1) << "runs/missing@3: there is no run folder runs/missing";
    QTest::newRow("a file @") << "runs/first/events.jsonl@3" << "" << false << qint64(-1)
        << "runs/first/events.jsonl@3: there is no run folder runs/first/events.jsonl (it is a file)";
    QTest::newRow("not a run folder") << "notarun" << "" << false << qint64(-1)
        << "notarun is a folder, but not a run folder (it has no config.json, events.jsonl or checkpoints/)";
    QTest::newRow("not a step") << "runs/first@x" << "" << false << qint64(-1)
        << "runs/first@x: 'x' after '@' is not allowed; allowed: a step (0 to 9999999999) or latest";
    QTest::newRow("negative step") << "runs/first@-1" << "" << false << qint64(-1)
        << "runs/first@-1: '-1' after '@' is not allowed; allowed: a step (0 to 9999999999) or latest";
    QTest::newRow("step too long") << "runs/first@99999999999" << "" << false << qint64(-1)
        << "runs/first@99999999999: '99999999999' after '@' is not allowed; allowed: a step (0 to 9999999999) or latest";
    QTest::newRow("nothing after @") << "runs/first@" << "" << false << qint64(-1)
        << "runs/first@: '' after '@' is not allowed; allowed: a step (0 to 9999999999) or latest";
    QTest::newRow("nothing before @") << "@latest" << "" << false << qint64(-1) << "@latest: no run folder before '@'";
    QTest::newRow("empty") << "" << "" << false << qint64(-1)
        << "an empty checkpoint: give a .pt file, a run folder, RUN@STEP or RUN@latest";
  }

  void resolves() {
    QFETCH(QString, text);
    QFETCH(QString, path);
    QFETCH(bool, fromRun);
    QFETCH(qint64, step);
    QFETCH(QString, error);
    // Relative texts, as a researcher types them, from the root.
    const QString here = QDir::currentPath();
    QVERIFY(QDir::setCurrent(root_));
    auto resolved = resolveCheckpointReference(text.toStdString());
    QVERIFY(QDir::setCurrent(here));
    if (error.isEmpty()) {
      QVERIFY2(resolved, resolved ? "" : resolved.error().c_str());
      QCOMPARE(QString::fromStdString(resolved->path), path);
      QCOMPARE(resolved->from_run, fromRun);
      QCOMPARE(qint64(resolved->step), step);
    } else {
      QVERIFY(!resolved);
      QCOMPARE(QString::fromStdString(resolved.error()), error);
    }
  }

  // An absolute run path gives an absolute checkpoint path in the same run.
  void absolutePaths() {
    auto resolved = resolveCheckpointReference((root_ + "/runs/first@12").toStdString());
    QVERIFY(resolved);
    QCOMPARE(QString::fromStdString(resolved->path), root_ + "/runs/first/checkpoints/step-0000000012.pt");
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestCheckpointReference)
#include "tst_checkpoint_reference.moc"
