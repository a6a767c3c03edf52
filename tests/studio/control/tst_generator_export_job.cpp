// GeneratorExportJob on a real tiny run: the format a file name asks for, an ONNX model and a
// PyTorch state dict (with its sidecar) written by the real `streetgan export`, and a failure
// carrying the program's one line.
#include "app/studio/control/generator_export_job.h"
#include "tests/support/status_check.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::studio;
using namespace streetgan::test;

class TestGeneratorExportJob : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void formatOf_data();
  void formatOf();
  void writes_data();
  void writes();
  void failureNamesTheFile();

private:
  QTemporaryDir dir_;
  QString run_;
};

void TestGeneratorExportJob::initTestCase() {
  const QString data = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("runs/tiny");
  const auto trained = runCli(tinyTrainArgs(data, run_, 1));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
}

void TestGeneratorExportJob::formatOf_data() {
  QTest::addColumn<QString>("path");
  QTest::addColumn<bool>("onnx");
  QTest::newRow("onnx") << "/a/G.onnx" << true;
  QTest::newRow("upper case") << "/a/G.ONNX" << true;
  QTest::newRow("pt") << "/a/G.pt" << false;
  QTest::newRow("no extension") << "/a/G" << false;
  QTest::newRow("onnx in the folder") << "/a.onnx/G.pt" << false;
}

void TestGeneratorExportJob::formatOf() {
  QFETCH(QString, path);
  QFETCH(bool, onnx);
  QCOMPARE(GeneratorExportJob::formatOf(path) == GeneratorExportJob::Format::Onnx, onnx);
}

void TestGeneratorExportJob::writes_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<bool>("onnx");
  QTest::addColumn<QString>("generator");
  QTest::newRow("ONNX") << "G.onnx" << true << "";
  QTest::newRow("ONNX under another name") << "G.model" << true << "raw";
  QTest::newRow("PyTorch") << "G.pt" << false << "";
}

void TestGeneratorExportJob::writes() {
  QFETCH(QString, name);
  QFETCH(bool, onnx);
  QFETCH(QString, generator);
  const QString out = dir_.filePath(name);
  GeneratorExportJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &GeneratorExportJob::finished);
  QString error;
  QVERIFY2(succeeded(job.start(run_, out, onnx ? GeneratorExportJob::Format::Onnx : GeneratorExportJob::Format::PyTorch, generator), &error),
           qPrintable(error));
  QVERIFY(done.wait(120000));
  QVERIFY2(done.first().first().toBool(), qPrintable(done.first().last().toString()));
  QCOMPARE(done.first().last().toString(), out);
  const QByteArray bytes = readFileBytes(out);
  // An ONNX model's ModelProto begins with its ir_version (field 1, varint); torch.save's zip with "PK".
  QVERIFY(bytes.size() > 1000);
  QCOMPARE(bytes.startsWith("PK"), !onnx);
  if (onnx) QCOMPARE(bytes.at(0), char(0x08));
  QCOMPARE(QFile::exists(dir_.filePath("G.json")), !onnx || QFile::exists(dir_.filePath("G.pt")));
}

void TestGeneratorExportJob::failureNamesTheFile() {
  GeneratorExportJob job(STREETGAN_CLI);
  QSignalSpy done(&job, &GeneratorExportJob::finished);
  const QString out = dir_.filePath("no-such-folder/G.onnx");
  QString error;
  QVERIFY2(succeeded(job.start(run_, out, GeneratorExportJob::Format::Onnx), &error), qPrintable(error));
  QVERIFY(done.wait(120000));
  QCOMPARE(done.first().first().toBool(), false);
  QVERIFY2(done.first().last().toString().contains(out), qPrintable(done.first().last().toString()));
  QVERIFY(!QFile::exists(out));
}

STREETGAN_TEST_GUILESS_MAIN(TestGeneratorExportJob)
#include "tst_generator_export_job.moc"
