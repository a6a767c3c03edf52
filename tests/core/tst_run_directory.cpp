// RunDirectory's two rules on real folders: which folder is a run (isRun), and which run a
// checkpoint file belongs to (ofCheckpoint); and the paths it names.
#include "core/runs/run_directory.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace streetgan;

class RunDirectoryTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;

private slots:
  void isRun_data() {
    QTest::addColumn<QStringList>("files");  // made in the folder; a name ending in "/" is a folder
    QTest::addColumn<QString>("link");       // a name made a dangling symbolic link, or ""
    QTest::addColumn<bool>("run");
    QTest::newRow("empty") << QStringList{} << "" << false;
    QTest::newRow("config.json") << QStringList{"config.json"} << "" << true;
    QTest::newRow("events.jsonl") << QStringList{"events.jsonl"} << "" << true;
    QTest::newRow("an empty checkpoints/") << QStringList{"checkpoints/"} << "" << true;
    QTest::newRow("checkpoints/, a dangling link") << QStringList{} << "checkpoints" << true;
    QTest::newRow("samples/ alone") << QStringList{"samples/"} << "" << false;
    QTest::newRow("other files") << QStringList{"notes.txt", "launch/"} << "" << false;
  }
  void isRun() {
    QFETCH(QStringList, files);
    QFETCH(QString, link);
    QFETCH(bool, run);
    const QString folder = dir_.filePath(QString("is-run-%1").arg(QTest::currentDataTag()).replace('/', '_'));
    QVERIFY(QDir().mkpath(folder));
    for (const QString& name : files) {
      if (name.endsWith('/')) {
        QVERIFY(QDir(folder).mkpath(name));
      } else {
        QFile file(folder + "/" + name);
        QVERIFY(file.open(QIODevice::WriteOnly));
      }
    }
    if (!link.isEmpty()) QVERIFY(QFile::link(folder + "/no-such-target", folder + "/" + link));
    QCOMPARE(RunDirectory::isRun(folder.toStdString()), run);
    QCOMPARE(RunDirectory(folder.toStdString()).holdsRun(), run);
  }

  void ofCheckpoint_data() {
    QTest::addColumn<QString>("checkpoint");
    QTest::addColumn<bool>("in_run");
    QTest::addColumn<QString>("run");
    QTest::newRow("a run's checkpoint") << "runs/first/checkpoints/step-0000000096.pt" << true << "runs/first";
    QTest::newRow("absolute") << "/data/runs/first/checkpoints/step-0000000096.pt" << true << "/data/runs/first";
    QTest::newRow("from inside the run") << "checkpoints/step-0000000096.pt" << true << ".";
    QTest::newRow("dots on the way") << "runs/./first/../first/checkpoints/x.pt" << true << "runs/first";
    QTest::newRow("kept elsewhere") << "exports/step-0000000096.pt" << false << "";
    QTest::newRow("a folder named like it") << "runs/first/checkpoints-old/x.pt" << false << "";
    QTest::newRow("checkpoints/ at the root") << "/checkpoints/x.pt" << false << "";
    QTest::newRow("a bare file name") << "x.pt" << false << "";
  }
  void ofCheckpoint() {
    QFETCH(QString, checkpoint);
    QFETCH(bool, in_run);
    QFETCH(QString, run);
    const auto found = RunDirectory::ofCheckpoint(checkpoint.toStdString());
    QCOMPARE(found.has_value(), in_run);
    if (found) QCOMPARE(QString::fromStdString(found->path()), run);
  }

  void name_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("name");
    QTest::newRow("relative") << "runs/first"
                              << "first";
    QTest::newRow("a trailing slash") << "runs/first/"
                                      << "first";
    QTest::newRow("absolute") << "/data/runs/first"
                              << "first";
  }
  void name() {
    QFETCH(QString, path);
    QFETCH(QString, name);
    QCOMPARE(QString::fromStdString(RunDirectory(path.toStdString()).name()), name);
  }

  void nameOfTheCurrentFolder() {
    const QString here = QDir::currentPath();
    QVERIFY(QDir::setCurrent(dir_.path()));
    const std::string name = RunDirectory(".").name();
    QVERIFY(QDir::setCurrent(here));
    QCOMPARE(QString::fromStdString(name), QDir(dir_.path()).dirName());
  }

  // Every path sits in the run folder under the name docs/events.md gives it.
  void paths_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");
    const RunDirectory run("runs/first");
    QTest::newRow("config") << QString::fromStdString(run.configPath()) << "runs/first/config.json";
    QTest::newRow("events") << QString::fromStdString(run.eventsPath()) << "runs/first/events.jsonl";
    QTest::newRow("checkpoints") << QString::fromStdString(run.checkpointsDir()) << "runs/first/checkpoints";
    QTest::newRow("a checkpoint") << QString::fromStdString(run.checkpointPath(96))
                                  << "runs/first/checkpoints/step-0000000096.pt";
    QTest::newRow("samples") << QString::fromStdString(run.samplesDir()) << "runs/first/samples";
    QTest::newRow("a sample grid") << QString::fromStdString(run.sampleRelativePath(96))
                                   << "samples/step-0000000096.png";
    QTest::newRow("evaluations") << QString::fromStdString(run.evaluationsDir()) << "runs/first/evaluations";
    QTest::newRow("tensorboard") << QString::fromStdString(run.tensorboardDir()) << "runs/first/tensorboard";
    QTest::newRow("directions") << QString::fromStdString(run.directionsDir()) << "runs/first/directions";
    QTest::newRow("launch") << QString::fromStdString(run.launchDir()) << "runs/first/launch";
  }
  void paths() {
    QFETCH(QString, path);
    QFETCH(QString, expected);
    QCOMPARE(path, expected);
  }
};

STREETGAN_TEST_GUILESS_MAIN(RunDirectoryTest)
#include "tst_run_directory.moc"
