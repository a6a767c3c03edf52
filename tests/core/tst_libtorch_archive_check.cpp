// checkLibTorchArchive on a real checkpoint, and on copies whose code/__torch__.py is each row's
// text: a class may only declare typed attributes (one row per kind of line LibTorch writes, and
// per kind of code it must never see).
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "core/formats/libtorch_archive_check.h"
#include "tests/support/test_suite.h"
#include "tests/support/tiny_train_config.h"

#include <QTemporaryDir>
#include <QtTest>

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>
#include <fstream>
#include <sstream>

using namespace streetgan;

namespace {

ArchiveReader readerOf(const std::string& bytes) {
  return [&bytes](std::uint64_t offset, void* out, std::size_t n) -> std::size_t {
    if (offset >= bytes.size()) return 0;
    n = std::min<std::size_t>(n, bytes.size() - static_cast<std::size_t>(offset));
    std::memcpy(out, bytes.data() + offset, n);
    return n;
  };
}

// `archive` with the record `name` ("code/__torch__.py") holding `text`; added when it is not there.
std::string withRecord(const std::string& archive, const std::string& name, const std::string& text) {
  std::istringstream in(archive);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&out](const void* data, std::size_t n) {
    out.append(static_cast<const char*>(data), n);
    return n;
  });
  bool replaced = false;
  for (const std::string& record : reader.getAllRecords()) {
    if (record == "version" || record == ".data/version") continue;  // the writer writes its own
    if (record == name) {
      writer.writeRecord(record, text.data(), text.size());
      replaced = true;
      continue;
    }
    auto [data, size] = reader.getRecord(record);
    writer.writeRecord(record, data.get(), size);
  }
  if (!replaced) writer.writeRecord(name, text.data(), text.size());
  writer.writeEndOfFile();
  return out;
}

}  // namespace

class LibTorchArchiveCheckTest : public QObject {
  Q_OBJECT

private:
  std::string checkpoint_;  // the bytes of a real checkpoint

private slots:
  void initTestCase() {
    QTemporaryDir dir;
    const TrainConfig config = test::tinyTrainConfig();
    DcganStep model(config, torch::kCPU, Precision::Fp32);
    CheckpointState state;
    state.fixed_noise = torch::randn({4, 16, 1, 1});
    state.noise_rng_state = torch::zeros({5056}, torch::kUInt8);
    state.config = config;
    const std::string path = dir.filePath("step.pt").toStdString();
    QVERIFY(saveCheckpoint(path, model, state).ok());
    std::ifstream in(path, std::ios::binary);
    checkpoint_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    QVERIFY(!checkpoint_.empty());
  }

  void realCheckpointPasses() {
    const Status checked = checkLibTorchArchive(readerOf(checkpoint_), checkpoint_.size());
    QVERIFY2(checked.ok(), checked.error().c_str());
  }

  void codeFile_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("error");  // empty: accepted
    const QString head = "class Module(Module):\n  __parameters__ = []\n  __buffers__ = []\n";
    QTest::newRow("as LibTorch writes it") << head + "  main : __torch__.___torch_mangle_1.Module\n" << "";
    QTest::newRow("parameters and buffers")
        << "class Module(Module):\n  __parameters__ = [\"weight\", \"bias\", ]\n  __buffers__ = [\"running_mean\", ]\n"
           "  weight : Tensor\n  bias : Tensor\n  running_mean : Tensor\n" << "";
    QTest::newRow("annotations")
        << head + "  __annotations__ = []\n  __annotations__[\"params/0\"] = str\n  betas : Tuple[float, float]\n" << "";
    QTest::newRow("empty file") << "" << "";
    QTest::newRow("a method") << head + "  def forward(self) -> None:\n    return None\n" << "line 4 is not an attribute";
    QTest::newRow("a decorator") << head + "  @torch.jit.export\n" << "line 4 is not an attribute";
    QTest::newRow("an import") << "import os\n" + head << "line 1 is not an attribute";
    QTest::newRow("a value") << head + "  x : int = 1\n" << "line 4 is not an attribute";
    QTest::newRow("a call in a type") << head + "  x : Tuple[open(\"f\")]\n" << "line 4 is not an attribute";
    QTest::newRow("an escaped name") << head + "  __annotations__[\"a\\\"b\"] = str\n" << "line 4 is not an attribute";
    QTest::newRow("four deep") << head + "  x : List[List[List[int]]]\n" << "";
    QTest::newRow("five deep") << head + "  x : List[List[List[List[int]]]]\n" << "line 4 is not an attribute";
    QTest::newRow("attribute outside a class") << "  x : int\n" << "line 1 is not an attribute";
    QTest::newRow("not a module") << "class Module(object):\n" << "line 1 declares a class that is not a module";
    QTest::newRow("holds itself") << head + "  again : __torch__.Module\n" << "its class __torch__.module holds itself";
    QTest::newRow("holds itself in a list") << head + "  again : List[__torch__.Module]\n"
                                            << "its class __torch__.module holds itself";
  }

  void codeFile() {
    QFETCH(QString, text);
    QFETCH(QString, error);
    const std::string archive = withRecord(checkpoint_, "code/__torch__.py", text.toStdString());
    const Status checked = checkLibTorchArchive(readerOf(archive), archive.size());
    if (error.isEmpty()) {
      QVERIFY2(checked.ok(), checked.error().c_str());
    } else {
      QVERIFY(!checked.ok());
      QVERIFY2(QString::fromStdString(checked.error()).contains(error), checked.error().c_str());
    }
  }

  // Two classes that hold each other: LibTorch's importer would follow them forever.
  void classesHoldingEachOther() {
    std::string archive = withRecord(checkpoint_, "code/__torch__/a.py", "class Module(Module):\n  b : __torch__.b.Module\n");
    archive = withRecord(archive, "code/__torch__/b.py", "class Module(Module):\n  a : __torch__.a.Module\n");
    const Status checked = checkLibTorchArchive(readerOf(archive), archive.size());
    QVERIFY(!checked.ok());
    QVERIFY2(QString::fromStdString(checked.error()).contains("holds itself"), checked.error().c_str());
  }

  void notAZip() {
    const std::string text = "hello, not a checkpoint";
    const Status checked = checkLibTorchArchive(readerOf(text), text.size());
    QCOMPARE(QString::fromStdString(checked.error()), QString("it is not a zip archive, as LibTorch writes its archives"));
  }
};

STREETGAN_TEST_APPLESS_MAIN(LibTorchArchiveCheckTest)
#include "tst_libtorch_archive_check.moc"
