// The include rules of docs/architecture.md, as cmake/check_layering.cmake enforces them: the
// tree as it is passes, and each rule broken in a copy of the tree (one include added to one
// file) fails the check with a line naming the file, the include and the rule.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

class TestLayering : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void treeAsItIs();
  void brokenRule_data();
  void brokenRule();
  void fileOutsideADomainFolder();

private:
  /// Runs the check on the copy: exit code and what it printed.
  QPair<int, QString> check() const;

  QTemporaryDir copy_;
};

void TestLayering::initTestCase() {
  QVERIFY(copy_.isValid());
  // The code folders of the repository (what the check reads), sources only.
  const QDir source(STREETGAN_SOURCE_DIR);
  int copied = 0;
  for (const char* top : {"core", "widgets", "app", "tests", "cmake"}) {
    QDirIterator it(source.filePath(top), {"*.h", "*.cpp", "*.cmake"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString path = it.next();
      const QString target = copy_.filePath(source.relativeFilePath(path));
      QVERIFY(QDir().mkpath(QFileInfo(target).absolutePath()));
      QVERIFY2(QFile::copy(path, target), qPrintable(target));
      ++copied;
    }
  }
  QVERIFY2(copied > 200, qPrintable(QString::number(copied)));
}

QPair<int, QString> TestLayering::check() const {
  QProcess cmake;
  cmake.setProcessChannelMode(QProcess::MergedChannels);
  cmake.start(STREETGAN_CMAKE, {"-DSOURCE_DIR=" + copy_.path(), "-DQTCORE_INCLUDE_DIR=" STREETGAN_QTCORE_INCLUDE_DIR,
                                "-P", QDir(STREETGAN_SOURCE_DIR).filePath("cmake/check_layering.cmake")});
  if (!cmake.waitForFinished(60000)) return {-1, "cmake did not finish: " + cmake.errorString()};
  return {cmake.exitStatus() == QProcess::NormalExit ? cmake.exitCode() : -1, QString::fromUtf8(cmake.readAll())};
}

void TestLayering::treeAsItIs() {
  const auto [code, output] = check();
  QVERIFY2(code == 0, qPrintable(output));
}

void TestLayering::brokenRule_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<QString>("include");
  QTest::addColumn<QString>("message");
  const QString only = ", but %1 may include only %2";
  QTest::newRow("util includes nothing of ours")
      << "core/util/crc32.h" << "\"core/config/train_config.h\""
      << "core/util/crc32.h: includes core/config/train_config.h" + only.arg("core/util", "core/util");
  QTest::newRow("model never includes data")
      << "core/model/generator.cpp" << "\"core/data/image_dataset.h\""
      << "core/model/generator.cpp: includes core/data/image_dataset.h" + only.arg("core/model", "core/util, core/model");
  QTest::newRow("model never includes runs")
      << "core/model/discriminator.cpp" << "\"core/runs/event_log.h\"" << "core/model/discriminator.cpp: includes core/runs/event_log.h, but";
  QTest::newRow("model never includes video")
      << "core/model/weight_init.cpp" << "\"core/video/video_encoder.h\"" << "core/model/weight_init.cpp: includes core/video/video_encoder.h, but";
  QTest::newRow("data never includes train")
      << "core/data/batch_loader.cpp" << "\"core/train/trainer.h\"" << "core/data/batch_loader.cpp: includes core/train/trainer.h, but";
  QTest::newRow("eval never includes train")
      << "core/eval/parzen_estimator.cpp" << "\"core/train/checkpoint.h\"" << "core/eval/parzen_estimator.cpp: includes core/train/checkpoint.h, but";
  QTest::newRow("latent includes train only in LatentExplorer")
      << "core/latent/walk_renderer.cpp" << "\"core/train/checkpoint.h\"" << "core/latent/walk_renderer.cpp: includes core/train/checkpoint.h, but";
  QTest::newRow("train never includes latent")
      << "core/train/trainer.cpp" << "\"core/latent/latent_walk.h\"" << "core/train/trainer.cpp: includes core/latent/latent_walk.h, but";
  QTest::newRow("runs never includes data")
      << "core/runs/run_summary.cpp" << "\"core/data/image_grid.h\"" << "core/runs/run_summary.cpp: includes core/data/image_grid.h, but";
  QTest::newRow("core never includes widgets")
      << "core/train/trainer.cpp" << "\"widgets/training_chart.h\"" << "core/train/trainer.cpp: includes widgets/training_chart.h, but";
  QTest::newRow("core has no Qt") << "core/runs/event_log.cpp" << "<QString>"
                                  << "core/runs/event_log.cpp: includes <QString>, but core and the CLI have no Qt";
  QTest::newRow("the CLI has no Qt") << "app/cli/main.cpp" << "<QCoreApplication>"
                                     << "app/cli/main.cpp: includes <QCoreApplication>, but core and the CLI have no Qt";
  QTest::newRow("the CLI never includes the studio")
      << "app/cli/main.cpp" << "\"app/studio/control/child_process.h\"" << "app/cli/main.cpp: includes app/studio/control/child_process.h, but";
  QTest::newRow("libav internals stay in video")
      << "core/latent/walk_exporter.cpp" << "\"core/video/internal/libav_handles.h\""
      << "core/latent/walk_exporter.cpp: includes core/video/internal/libav_handles.h, a libav internal of core/video";
  QTest::newRow("widgets never include the studio")
      << "widgets/seed_grid.cpp" << "\"app/studio/control/child_process.h\""
      << "widgets/seed_grid.cpp: includes app/studio/control/child_process.h" + only.arg("widgets", "core, widgets");
  QTest::newRow("widgets never start processes")
      << "widgets/seed_grid.cpp" << "<QProcess>" << "widgets/seed_grid.cpp: includes <QProcess>, but views and tabs never start processes";
  QTest::newRow("tabs never start processes")
      << "app/studio/train_tab.cpp" << "<QProcess>" << "app/studio/train_tab.cpp: includes <QProcess>, but views and tabs never start processes";
  QTest::newRow("controllers never include widgets")
      << "app/studio/control/parzen_job.cpp" << "\"widgets/seed_grid.h\""
      << "app/studio/control/parzen_job.cpp: includes widgets/seed_grid.h" + only.arg("app/studio/control", "core, app/studio/control");
  QTest::newRow("controllers never include tabs")
      << "app/studio/control/training_session.cpp" << "\"app/studio/train_tab.h\""
      << "app/studio/control/training_session.cpp: includes app/studio/train_tab.h, but";
  QTest::newRow("controllers use Qt Core only: Widgets")
      << "app/studio/control/parzen_job.h" << "<QWidget>"
      << "app/studio/control/parzen_job.h: includes <QWidget>, which is not Qt Core; app/studio/control uses Qt Core only";
  QTest::newRow("controllers use Qt Core only: Gui")
      << "app/studio/control/demo_data_job.cpp" << "<QImage>" << "app/studio/control/demo_data_job.cpp: includes <QImage>, which is not Qt Core";
  QTest::newRow("controllers use Qt Core only: a module path")
      << "app/studio/control/child_process.cpp" << "<QtConcurrent/QtConcurrentRun>"
      << "app/studio/control/child_process.cpp: includes <QtConcurrent/QtConcurrentRun>, which is not Qt Core";
  QTest::newRow("includes name the layer")
      << "core/train/trainer.cpp" << "\"result.h\"" << "core/train/trainer.cpp: includes \"result.h\" without its layer";
  QTest::newRow("includes name a file that exists")
      << "core/train/trainer.cpp" << "\"core/util/no_such_file.h\"" << "core/train/trainer.cpp: includes core/util/no_such_file.h, which does not exist";
}

void TestLayering::brokenRule() {
  QFETCH(QString, file);
  QFETCH(QString, include);
  QFETCH(QString, message);
  QFile target(copy_.filePath(file));
  QVERIFY2(target.open(QIODevice::ReadOnly), qPrintable(target.fileName()));
  const QByteArray original = target.readAll();
  target.close();
  // After the file's first line (#pragma once, or its own header), as a person would add it.
  const int eol = original.indexOf('\n') + 1;
  QVERIFY(target.open(QIODevice::WriteOnly | QIODevice::Truncate));
  target.write(original.left(eol) + "#include " + include.toUtf8() + "\n" + original.mid(eol));
  target.close();
  const auto [code, output] = check();
  QVERIFY(target.open(QIODevice::WriteOnly | QIODevice::Truncate));
  target.write(original);
  target.close();
  QVERIFY2(code != 0, qPrintable("the check passed:\n" + output));
  QVERIFY2(output.contains(message), qPrintable(output));
  QCOMPARE(output.count(": includes "), 1);  // that include alone
}

void TestLayering::fileOutsideADomainFolder() {
  QFile loose(copy_.filePath("core/loose.h"));
  QVERIFY(loose.open(QIODevice::WriteOnly));
  loose.write("#pragma once\n");
  loose.close();
  const auto [code, output] = check();
  loose.remove();
  QVERIFY(code != 0);
  QVERIFY2(output.contains("core/loose.h: not in a domain folder of core/"), qPrintable(output));
  QCOMPARE(check().first, 0);
}

QTEST_GUILESS_MAIN(TestLayering)
#include "tst_layering.moc"
