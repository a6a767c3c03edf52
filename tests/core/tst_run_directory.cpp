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

  // Paths as typed, from `cwd` (relative to a folder holding runs/first/checkpoints/, a folder
  // notrun/ with a link into that checkpoints/ folder, and exports/); the run expected, relative
  // to that folder, or "" for none.
  void ofCheckpoint_data() {
    QTest::addColumn<QString>("cwd");
    QTest::addColumn<QString>("checkpoint");
    QTest::addColumn<QString>("run");
    QTest::newRow("a run's checkpoint") << "." << "runs/first/checkpoints/step-0000000096.pt" << "runs/first";
    QTest::newRow("absolute") << "." << "@/runs/first/checkpoints/step-0000000096.pt" << "runs/first";
    QTest::newRow("from inside the run") << "runs/first" << "checkpoints/step-0000000096.pt" << "runs/first";
    QTest::newRow("from inside checkpoints/") << "runs/first/checkpoints" << "step-0000000096.pt" << "runs/first";
    QTest::newRow("from inside, with ./") << "runs/first/checkpoints" << "./step-0000000096.pt" << "runs/first";
    QTest::newRow("dots on the way") << "." << "runs/./first/../first/checkpoints/x.pt" << "runs/first";
    QTest::newRow(".. after a link leaves the link's target")
        << "." << "notrun/link/../checkpoints/step-0000000096.pt" << "runs/first";
    QTest::newRow("through the link") << "." << "notrun/link/step-0000000096.pt" << "runs/first";
    QTest::newRow("kept elsewhere") << "." << "exports/step-0000000096.pt" << "";
    QTest::newRow("a folder named like it") << "." << "runs/first/checkpoints-old/x.pt" << "";
    QTest::newRow("a bare file name") << "." << "x.pt" << "";
  }
  void ofCheckpoint() {
    QFETCH(QString, cwd);
    QFETCH(QString, checkpoint);
    QFETCH(QString, run);
    const QString base = dir_.filePath("of-checkpoint");
    QVERIFY(QDir().mkpath(base + "/runs/first/checkpoints") && QDir().mkpath(base + "/notrun") &&
            QDir().mkpath(base + "/exports"));
    QFile::link(base + "/runs/first/checkpoints", base + "/notrun/link");
    const QString root = QDir(base).canonicalPath();
    const QString here = QDir::currentPath();
    QVERIFY(QDir::setCurrent(root + "/" + cwd));
    const auto found = RunDirectory::ofCheckpoint(checkpoint.replace("@", root).toStdString());
    QVERIFY(QDir::setCurrent(here));
    QCOMPARE(found.has_value(), !run.isEmpty());
    if (found) QCOMPARE(QString::fromStdString(found->path()), root + "/" + run);
  }

  void noRunAboveTheRoot() { QVERIFY(!RunDirectory::ofCheckpoint("/checkpoints/x.pt").has_value()); }

  // What a folder holds of isRun()'s list, as train's refusal names it.
  void contents() {
    const QString folder = dir_.filePath("contents");
    QVERIFY(QDir().mkpath(folder + "/checkpoints"));
    const RunDirectory run(folder.toStdString());
    QCOMPARE(QString::fromStdString(run.contents()), QString("checkpoints/ without a finished checkpoint"));
    QFile config(folder + "/config.json");
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.close();
    QFile checkpoint(folder + "/checkpoints/step-0000000008.pt");
    QVERIFY(checkpoint.open(QIODevice::WriteOnly));
    checkpoint.close();
    QCOMPARE(QString::fromStdString(run.contents()), QString("config.json, checkpoints/"));
    QCOMPARE(QString::fromStdString(RunDirectory(dir_.filePath("none").toStdString()).contents()), QString());
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
