// NpyArray: our .npy bytes read by NumPy (Debian's python3-numpy) and NumPy's read by us, and the
// reader's refusals of malformed files, each with its one line.
#include "core/formats/npy_array.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan;
using namespace streetgan::test;

namespace {

std::string header(const std::string& dict, char major = 1) {
  std::string text = dict + "\n";
  std::string bytes = std::string("\x93NUMPY", 6) + major + '\0';
  bytes.push_back(static_cast<char>(text.size() & 0xff));
  bytes.push_back(static_cast<char>(text.size() >> 8));
  if (major > 1) bytes += std::string(2, '\0');
  return bytes + text;
}

std::string floats(int count) { return std::string(static_cast<std::size_t>(count) * 4, '\0'); }

}  // namespace

class TestNpyArray : public QObject {
  Q_OBJECT
private slots:
  void numpyReadsOurs();
  void oursReadsNumpy();
  void refused_data();
  void refused();
};

void TestNpyArray::numpyReadsOurs() {
  QTemporaryDir dir;
  const std::vector<float> values = {1.5f, -2.f, 0.25f, 3.f, 4.f, 5.f};
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{6}, {2, 3}, {1, 2, 3}}) {
    const std::string bytes = NpyArray::toBytes(shape, values.data(), values.size());
    QFile file(dir.filePath("a.npy"));
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size()));
    file.close();
    const CliResult r = runProgram("/usr/bin/python3", {"-c", "import sys, numpy; a = numpy.load(sys.argv[1]); "
                                                              "print(a.dtype, a.shape, a.ravel().tolist())", file.fileName()});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QString expected = "(" + QString::number(shape[0]);
    for (std::size_t i = 1; i < shape.size(); ++i) expected += ", " + QString::number(shape[i]);
    expected += shape.size() == 1 ? ",)" : ")";
    QCOMPARE(r.out.trimmed(), "float32 " + expected + " [1.5, -2.0, 0.25, 3.0, 4.0, 5.0]");
  }
}

void TestNpyArray::oursReadsNumpy() {
  QTemporaryDir dir;
  const QString path = dir.filePath("b.npy");
  const CliResult r = runProgram("/usr/bin/python3", {"-c", "import sys, numpy; numpy.save(sys.argv[1], "
                                                            "numpy.arange(24, dtype='<f4').reshape(2, 3, 4) / 8)", path});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  const QByteArray bytes = readFileBytes(path);
  auto array = NpyArray::fromBytes(bytes.toStdString());
  QVERIFY2(array, array.error().c_str());
  QCOMPARE(array->shape, (std::vector<std::int64_t>{2, 3, 4}));
  QCOMPARE(array->values.size(), std::size_t(24));
  for (int i = 0; i < 24; ++i) QCOMPARE(array->values[i], i / 8.f);
}

void TestNpyArray::refused_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<QString>("message");
  const auto row = [](const char* name, const std::string& bytes, const char* message) {
    QTest::newRow(name) << QByteArray(bytes.data(), qsizetype(bytes.size())) << QString(message);
  };
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  row("empty", "", "not a NumPy .npy file (no \\x93NUMPY at its start)");
  row("version 4", header(good, 4) + floats(6), "NumPy format version 4 is not one this reader knows (1, 2 or 3)");
  row("header past the end", header(good).substr(0, 30), "the file ends inside its header");
  row("float64", header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }") + floats(4),
      "the array's type is '<f8'; only little-endian float32 ('<f4') is read");
  row("Fortran order", header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }") + floats(6),
      "the array is in Fortran order; only C order is read");
  row("too few values", header(good) + floats(5), "the header's shape needs more values than the file's 5");
  row("too many values", header(good) + floats(7), "the file holds 28 bytes of data; its shape needs 24");
  row("huge shape", header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }") + floats(1),
      "the header's shape needs more values than the file's 1");
  row("dimension past int64", header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
      "the header's shape has a dimension too large");
  row("nine dimensions", header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }") + floats(1),
      "the array has more than 8 dimensions");
  row("negative dimension", header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
      "the header's shape is not a tuple of integers");
  row("no shape", header("{'descr': '<f4', 'fortran_order': False, }"), "the header has no 'shape'");
  row("key twice", header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (), }") + floats(1),
      "the header names 'descr' twice");
  row("unclosed dict", header("{'descr': '<f4'"), "the header's dict is not closed");
  row("unclosed string", header("{'descr: <f4}"), "the header has a string that is not closed");
  row("text after", header(good + " x") + floats(6), "the header has text after its dict");
  row("not a dict", header("['<f4']"), "the header is not a Python dict");
}

void TestNpyArray::refused() {
  QFETCH(QByteArray, bytes);
  QFETCH(QString, message);
  auto array = NpyArray::fromBytes(bytes.toStdString());
  QVERIFY(!array);
  QCOMPARE(QString::fromStdString(array.error()), message);
}

STREETGAN_TEST_APPLESS_MAIN(TestNpyArray)
#include "tst_npy_array.moc"
