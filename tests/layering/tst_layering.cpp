// The include rules of docs/architecture.md, as cmake/check_layering.cmake enforces them: the
// tree as it is passes, and each rule broken in a copy of the tree (one include added to one
// file) fails the check with a line naming the file, the include and the rule.
#include "tests/support/test_suite.h"

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
  void eventNameLiteral_data();
  void eventNameLiteral();
  void fileWrittenOutsideItsOwner_data();
  void fileWrittenOutsideItsOwner();
  void runFileNameLiteral_data();
  void runFileNameLiteral();

private:
  /// Runs the check on the copy: exit code and what it printed.
  QPair<int, QString> check() const;
  /// check() with `line` appended to `file` of the copy, which is restored afterwards; the check
  /// reads text, not what compiles.
  QPair<int, QString> checkWithLineAppended(const QString& file, const QString& line) const;

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
  QTest::newRow("runs never includes eval")
      << "core/runs/run_summary.cpp" << "\"core/eval/quality_suite.h\""
      << "core/runs/run_summary.cpp: includes core/eval/quality_suite.h" + only.arg("core/runs", "core/util, core/runs");
  QTest::newRow("latent reaches runs only for RunDirectory")
      << "core/latent/walk_renderer.cpp" << "\"core/runs/event_log.h\""
      << "core/latent/walk_renderer.cpp: includes core/runs/event_log.h, but";
  QTest::newRow("runs never includes data")
      << "core/runs/run_summary.cpp" << "\"core/data/image_grid.h\"" << "core/runs/run_summary.cpp: includes core/data/image_grid.h, but";
  QTest::newRow("util never includes formats")
      << "core/util/sha256.cpp" << "\"core/formats/pickle_reader.h\""
      << "core/util/sha256.cpp: includes core/formats/pickle_reader.h" + only.arg("core/util", "core/util");
  QTest::newRow("formats read files, never a model")
      << "core/formats/zip_directory.cpp" << "\"core/model/generator.h\""
      << "core/formats/zip_directory.cpp: includes core/model/generator.h" + only.arg("core/formats", "core/util, core/formats");
  QTest::newRow("distributed never includes train")
      << "core/distributed/rank_group.cpp" << "\"core/train/dcgan_step.h\""
      << "core/distributed/rank_group.cpp: includes core/train/dcgan_step.h" + only.arg("core/distributed", "core/util, core/distributed");
  QTest::newRow("train never includes interop")
      << "core/train/trainer.cpp" << "\"core/interop/checkpoint_import.h\""
      << "core/train/trainer.cpp: includes core/interop/checkpoint_import.h, but";
  QTest::newRow("interop never includes eval")
      << "core/interop/generator_export.cpp" << "\"core/eval/quality_suite.h\""
      << "core/interop/generator_export.cpp: includes core/eval/quality_suite.h, but";
  QTest::newRow("eval never includes distributed")
      << "core/eval/quality_suite.cpp" << "\"core/distributed/rank_group.h\""
      << "core/eval/quality_suite.cpp: includes core/distributed/rank_group.h, but";
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
  QTest::newRow("paths are normalised before matching")
      << "core/data/batch_loader.cpp" << "\"core/data/../train/trainer.h\""
      << "core/data/batch_loader.cpp: includes core/data/../train/trainer.h (that is core/train/trainer.h)" +
             only.arg("core/data", "core/util, core/config, core/data");
  QTest::newRow("a normalised path still names a file that exists")
      << "core/train/trainer.cpp" << "\"core/train/./../util/no_such_file.h\""
      << "core/train/trainer.cpp: includes core/train/./../util/no_such_file.h (that is core/util/no_such_file.h), which does not exist";
  const QString video = ", which only core/video, tests/support/decoded_video may include";
  QTest::newRow("libavformat only in video")
      << "core/latent/walk_exporter.cpp" << "<libavformat/avformat.h>" << "core/latent/walk_exporter.cpp: includes <libavformat/avformat.h>" + video;
  QTest::newRow("libswscale only in video")
      << "core/data/image_grid.cpp" << "<libswscale/swscale.h>" << "core/data/image_grid.cpp: includes <libswscale/swscale.h>" + video;
  const QString torch = ", which only core, app/cli, app/serve, tests/core, tests/cli, tests/support/test_device, tests/support/python_reference may include";
  QTest::newRow("no LibTorch in a widget")
      << "widgets/seed_grid.cpp" << "<torch/torch.h>" << "widgets/seed_grid.cpp: includes <torch/torch.h>" + torch;
  QTest::newRow("no ATen in a tab")
      << "app/studio/explore_tab.cpp" << "<ATen/Tensor.h>" << "app/studio/explore_tab.cpp: includes <ATen/Tensor.h>" + torch;
  QTest::newRow("no c10 in a controller")
      << "app/studio/control/parzen_job.cpp" << "<c10/core/Device.h>" << "app/studio/control/parzen_job.cpp: includes <c10/core/Device.h>" + torch;
  QTest::newRow("httplib only in the gallery library")
      << "app/cli/main.cpp" << "<httplib.h>" << "app/cli/main.cpp: includes <httplib.h>, which only app/serve may include";
  QTest::newRow("OpenCV only where the table says")
      << "core/model/generator.cpp" << "<opencv2/core.hpp>"
      << "core/model/generator.cpp: includes <opencv2/core.hpp>, which only core/data, core/util/exception_message, tests/core may include";
  QTest::newRow("core has no Qt: lower-case spelling")
      << "core/runs/event_log.cpp" << "<qstring.h>" << "core/runs/event_log.cpp: includes <qstring.h>, but core and the CLI have no Qt";
  const QString processes = ", but views and tabs never start processes";
  QTest::newRow("widgets never start processes: qprocess.h")
      << "widgets/seed_grid.cpp" << "<QtCore/qprocess.h>" << "widgets/seed_grid.cpp: includes <QtCore/qprocess.h>" + processes;
  QTest::newRow("tabs never start processes: lower case")
      << "app/studio/runs_tab.cpp" << "<qprocess.h>" << "app/studio/runs_tab.cpp: includes <qprocess.h>" + processes;
  QTest::newRow("tabs never start processes: QtCore/QProcess")
      << "app/studio/runs_tab.cpp" << "<QtCore/QProcess>" << "app/studio/runs_tab.cpp: includes <QtCore/QProcess>" + processes;
  QTest::newRow("widgets never include Qt Core's umbrella")
      << "widgets/seed_grid.cpp" << "<QtCore>" << "widgets/seed_grid.cpp: includes <QtCore>" + processes;
  QTest::newRow("tabs never include the child process")
      << "app/studio/train_tab.cpp" << "\"app/studio/control/child_process.h\""
      << "app/studio/train_tab.cpp: includes app/studio/control/child_process.h" + processes;
  QTest::newRow("controllers use Qt Core only: lower case")
      << "app/studio/control/parzen_job.cpp" << "<qwidget.h>"
      << "app/studio/control/parzen_job.cpp: includes <qwidget.h>, which is not Qt Core";
  QTest::newRow("widgets never include a Qt umbrella header")
      << "widgets/seed_grid.cpp" << "<QtWidgets>" << "widgets/seed_grid.cpp: includes <QtWidgets>" + processes;
  QTest::newRow("tabs never include a module's umbrella by its path")
      << "app/studio/runs_tab.cpp" << "<QtGui/QtGui>" << "app/studio/runs_tab.cpp: includes <QtGui/QtGui>" + processes;
  QTest::newRow("tabs never include what includes QProcess")
      << "app/studio/runs_tab.cpp" << "<QProcessEnvironment>" << "app/studio/runs_tab.cpp: includes <QProcessEnvironment>" + processes;
  QTest::newRow("Qt's own folder above QtCore")
      << "widgets/seed_grid.cpp" << "<qt6/QtCore/QProcess>" << "widgets/seed_grid.cpp: includes <qt6/QtCore/QProcess>" + processes;
  QTest::newRow("OpenCV through its versioned folder")
      << "core/latent/walk_exporter.cpp" << "<opencv4/opencv2/core.hpp>"
      << "core/latent/walk_exporter.cpp: includes <opencv4/opencv2/core.hpp>, which only core/data, core/util/exception_message, tests/core may include";
  QTest::newRow("libav through the multiarch folder")
      << "core/latent/walk_exporter.cpp" << "<x86_64-linux-gnu/libavformat/avformat.h>"
      << "core/latent/walk_exporter.cpp: includes <x86_64-linux-gnu/libavformat/avformat.h>" + video;
  QTest::newRow("no computed includes")
      << "core/train/trainer.cpp" << "STREETGAN_HEADER"
      << "core/train/trainer.cpp: includes STREETGAN_HEADER, a computed include";
  QTest::newRow("the gallery has no Qt") << "app/serve/gallery_page.cpp" << "<QString>"
                                        << "app/serve/gallery_page.cpp: includes <QString>, but core and the CLI have no Qt";
  QTest::newRow("the gallery never includes the CLI")
      << "app/serve/gallery_page.cpp" << "\"app/cli/command_line.h\""
      << "app/serve/gallery_page.cpp: includes app/cli/command_line.h" + only.arg("app/serve", "core, app/serve");
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

QPair<int, QString> TestLayering::checkWithLineAppended(const QString& file, const QString& line) const {
  QFile target(copy_.filePath(file));
  if (!target.open(QIODevice::ReadOnly)) return {-1, "cannot read " + target.fileName()};
  const QByteArray original = target.readAll();
  target.close();
  if (!target.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {-1, "cannot write " + target.fileName()};
  target.write(original + line.toUtf8() + "\n");
  target.close();
  const auto result = check();
  if (!target.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {-1, "cannot restore " + target.fileName()};
  target.write(original);
  target.close();
  return result;
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

void TestLayering::eventNameLiteral_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<QString>("line");
  QTest::addColumn<QString>("message");  // empty: the check passes
  const QString named = ": names the event field or type \"%1\" by a string literal";
  QTest::newRow("a tab reads a field by name")
      << "app/studio/run_dashboard.cpp" << "double lossOf(const nlohmann::json& j) { return j.value(\"loss_d\", 0.0); }"
      << "app/studio/run_dashboard.cpp" + named.arg("loss_d");
  QTest::newRow("a controller indexes a field")
      << "app/studio/control/training_session.cpp" << "std::string messageOf(const nlohmann::json& j) { return j[\"message\"]; }"
      << "app/studio/control/training_session.cpp" + named.arg("message");
  QTest::newRow("the trainer writes a field")
      << "core/interop/checkpoint_import.cpp" << "const nlohmann::json written = {{\"images_seen\", 1}};"
      << "core/interop/checkpoint_import.cpp" + named.arg("images_seen");
  QTest::newRow("the trainer emits a type")
      << "core/interop/checkpoint_import.cpp" << "void again(EventLog& log) { (void)log.emit(\"run_finished\"); }"
      << "core/interop/checkpoint_import.cpp" + named.arg("run_finished");
  QTest::newRow("the CLI compares a type")
      << "app/cli/train_command.cpp" << "bool isEnd(const std::string& type) { return type == \"epoch_end\"; }"
      << "app/cli/train_command.cpp" + named.arg("epoch_end");
  QTest::newRow("a tab that sees events through a controller's header")
      << "app/studio/train_tab.cpp" << "double lossOf(const nlohmann::json& j) { return j.value(\"loss_d\", 0.0); }"
      << "app/studio/train_tab.cpp" + named.arg("loss_d");
  QTest::newRow("the second item of a pair")
      << "app/studio/run_dashboard.cpp" << "const auto kTag = std::pair{\"D_loss\", \"loss_d\"};"
      << "app/studio/run_dashboard.cpp" + named.arg("loss_d");
  QTest::newRow("a plain-word field looked up through QStringLiteral")
      << "app/studio/control/training_session.cpp" << "QString pathOf(const QJsonObject& o) { return o.value(QStringLiteral(\"path\")).toString(); }"
      << "app/studio/control/training_session.cpp" + named.arg("path");
  QTest::newRow("a plain-word field as a JSON key")
      << "core/interop/checkpoint_import.cpp" << "const nlohmann::json kMoved = {{\"path\", \"a\"}};"
      << "core/interop/checkpoint_import.cpp" + named.arg("path");
  QTest::newRow("a type compared, literal first, no spaces")
      << "app/cli/train_command.cpp" << "bool isStep(const std::string& type) { return \"step\"==type; }"
      << "app/cli/train_command.cpp" + named.arg("step");
  QTest::newRow("a type compared with strcmp")
      << "app/cli/rank_launcher.cpp" << "bool isWarning(const char* type) { return std::strcmp(type, \"warning\") == 0; }"
      << "app/cli/rank_launcher.cpp" + named.arg("warning");
  QTest::newRow("a comment names nothing")
      << "app/studio/run_dashboard.cpp" << "// the \"loss_d\" series is drawn first" << QString();
  QTest::newRow("a plain word that names no field or type")
      << "app/studio/control/training_session.cpp" << "const char* stateWord() { return \"failed\"; }" << QString();
  QTest::newRow("a file that sees no events may use the same word")
      << "core/data/image_grid.cpp" << "const char* const kWord[] = {\"step\", \"loss_d\"};" << QString();
  QTest::newRow("tests check the bytes on disk")
      << "tests/core/tst_run_history.cpp" << "const char* const kWord[] = {\"loss_d\"};" << QString();
}

void TestLayering::eventNameLiteral() {
  QFETCH(QString, file);
  QFETCH(QString, line);
  QFETCH(QString, message);
  const auto [code, output] = checkWithLineAppended(file, line);
  if (message.isEmpty()) {
    QVERIFY2(code == 0, qPrintable(output));
    return;
  }
  QVERIFY2(code != 0, qPrintable("the check passed:\n" + output));
  QVERIFY2(output.contains(message), qPrintable(output));
  QCOMPARE(output.count(": names the event field"), 1);  // that line alone
}

void TestLayering::fileWrittenOutsideItsOwner_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<QString>("line");
  QTest::addColumn<bool>("refused");
  QTest::newRow("core opens a stream to write")
      << "core/eval/quality_suite.cpp" << "void dump() { std::ofstream out(\"metrics.json\"); }" << true;
  QTest::newRow("the CLI opens with O_CREAT")
      << "app/cli/sample_command.cpp" << "int make() { return ::open(\"grid.png\", O_WRONLY | O_CREAT, 0644); }" << true;
  QTest::newRow("fopen to append")
      << "core/runs/run_directory.cpp" << "std::FILE* log() { return std::fopen(\"events.jsonl\", \"a\"); }" << true;
  QTest::newRow("a tab opens a QFile to write")
      << "app/studio/train_tab.cpp" << "bool save(QFile& file) { return file.open(QIODevice::WriteOnly); }" << true;
  QTest::newRow("torch::save into a run")
      << "core/train/trainer_loop.cpp" << "void keep(const torch::Tensor& t) { torch::save(t, \"run/t.pt\"); }" << true;
  QTest::newRow("a copy of a file")
      << "app/cli/export_command.cpp" << "void copy() { std::filesystem::copy_file(\"a\", \"b\"); }" << true;
  QTest::newRow("fopen to read") << "core/data/image_grid.cpp" << "std::FILE* in() { return std::fopen(\"x\", \"rb\"); }"
                                 << false;
  QTest::newRow("a comment") << "core/eval/quality_suite.cpp" << "// no std::ofstream here: AtomicFile writes it" << false;
  QTest::newRow("the owner") << "core/util/atomic_file.cpp" << "void dump() { std::ofstream out(\"x\"); }" << false;
  QTest::newRow("tests craft files") << "tests/core/tst_sha256.cpp" << "void dump() { std::ofstream out(\"x\"); }" << false;
}

void TestLayering::fileWrittenOutsideItsOwner() {
  QFETCH(QString, file);
  QFETCH(QString, line);
  QFETCH(bool, refused);
  const auto [code, output] = checkWithLineAppended(file, line);
  if (!refused) {
    QVERIFY2(code == 0, qPrintable(output));
    return;
  }
  QVERIFY2(code != 0, qPrintable("the check passed:\n" + output));
  QVERIFY2(output.contains(file + ": opens a file for writing (" + line + "); write through core/util/atomic_file.h"),
           qPrintable(output));
  QCOMPARE(output.count(": opens a file for writing"), 1);  // that line alone
}

void TestLayering::runFileNameLiteral_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<QString>("line");
  QTest::addColumn<QString>("name");  // the name refused; empty: the line passes
  QTest::newRow("the CLI spells the event log") << "app/cli/tensorboard_command.cpp"
                                                << "const char* const kLog = \"events.jsonl\";"
                                                << "events.jsonl";
  QTest::newRow("core/train spells the checkpoints folder")
      << "core/train/trainer_loop.cpp"
      << "std::string folder(const std::string& run) { return run + \"/\" + \"checkpoints\"; }"
      << "checkpoints";
  QTest::newRow("a tab spells the config") << "app/studio/train_tab.cpp"
                                           << "const char* const kConfig = \"config.json\";"
                                           << "config.json";
  QTest::newRow("core/eval spells the checkpoints folder") << "core/eval/quality_suite.cpp"
                                                           << "const char* const kFolder = \"checkpoints\";"
                                                           << "checkpoints";
  QTest::newRow("RunDirectory, their owner") << "core/runs/run_directory.cpp"
                                             << "const char* const kAgain = \"events.jsonl\";" << QString();
  QTest::newRow("tests check the bytes on disk") << "tests/core/tst_run_history.cpp"
                                                 << "const char* const kLog = \"events.jsonl\";" << QString();
  QTest::newRow("the run folder's evaluation files, in core/runs") << "core/runs/parzen_evaluation_file.cpp"
                                                                   << "const char* const kKey = \"checkpoints\";"
                                                                   << QString();
  QTest::newRow("a comment") << "app/cli/train_command.cpp"
                             << "// writes \"events.jsonl\" through RunDirectory" << QString();
  QTest::newRow("help text naming the files")
      << "app/cli/command_lines.cpp"
      << "const char* const kHelp = \"Writes config.json and events.jsonl\";" << QString();
}

void TestLayering::runFileNameLiteral() {
  QFETCH(QString, file);
  QFETCH(QString, line);
  QFETCH(QString, name);
  const auto [code, output] = checkWithLineAppended(file, line);
  if (name.isEmpty()) {
    QVERIFY2(code == 0, qPrintable(output));
    return;
  }
  QVERIFY2(code != 0, qPrintable("the check passed:\n" + output));
  QVERIFY2(output.contains(file + ": names the run folder's " + name + " by a string literal (" + line +
                           "); use RunDirectory (core/runs/run_directory.h)"),
           qPrintable(output));
  QCOMPARE(output.count(": names the run folder's "), 1);  // that line alone
}

STREETGAN_TEST_GUILESS_MAIN(TestLayering)
#include "tst_layering.moc"
