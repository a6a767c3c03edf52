// PickleReader on pickles Python wrote (pickle.dumps, protocol 2, as torch.save uses): every
// kind of value it reads, a tensor through a persistent id, and what it must refuse — a global
// that could run code, opcodes torch.save never writes, memo and stack misuse, a tensor reaching
// past its storage, and every truncation of a valid pickle (an error each time, never a crash).
#include "core/formats/pickle_reader.h"
#include "core/formats/torch_save_file.h"
#include "core/formats/zip_directory.h"
#include "tests/support/test_suite.h"

#include <QProcess>
#include <cstring>

#include <QTemporaryDir>
#include <fstream>

#include <QtTest>

#include <torch/torch.h>

using namespace streetgan;

namespace {

// pickle.dumps({'a': [1], 'b': -1, 'c': (1.5, None, True), 'd': 'é'}, protocol=2)
const std::string kPlain(
    "\x80\x02\x7d\x71\x00\x28\x58\x01\x00\x00\x00\x61\x71\x01\x5d\x71\x02\x4b\x01\x61\x58\x01\x00\x00\x00\x62\x71\x03"
    "\x4a\xff\xff\xff\xff\x58\x01\x00\x00\x00\x63\x71\x04\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x4e\x88\x87\x71\x05\x58"
    "\x01\x00\x00\x00\x64\x71\x06\x58\x02\x00\x00\x00\xc3\xa9\x71\x07\x75\x2e",
    74);

// {'t': torch.arange(4.).view(2, 2)} pickled as torch.save does: storage ('storage',
// torch.FloatStorage, '0', 'cpu', 4) and torch._utils._rebuild_tensor_v2.
const std::string kTensor(
    "\x80\x02\x7d\x71\x00\x58\x01\x00\x00\x00\x74\x71\x01\x63\x74\x6f\x72\x63\x68\x2e\x5f\x75\x74\x69\x6c\x73\x0a\x5f"
    "\x72\x65\x62\x75\x69\x6c\x64\x5f\x74\x65\x6e\x73\x6f\x72\x5f\x76\x32\x0a\x71\x02\x28\x28\x58\x07\x00\x00\x00\x73"
    "\x74\x6f\x72\x61\x67\x65\x71\x03\x63\x74\x6f\x72\x63\x68\x0a\x46\x6c\x6f\x61\x74\x53\x74\x6f\x72\x61\x67\x65\x0a"
    "\x71\x04\x58\x01\x00\x00\x00\x30\x71\x05\x58\x03\x00\x00\x00\x63\x70\x75\x71\x06\x4b\x04\x74\x71\x07\x51\x4b\x00"
    "\x4b\x02\x4b\x02\x86\x71\x08\x4b\x02\x4b\x01\x86\x71\x09\x89\x63\x63\x6f\x6c\x6c\x65\x63\x74\x69\x6f\x6e\x73\x0a"
    "\x4f\x72\x64\x65\x72\x65\x64\x44\x69\x63\x74\x0a\x71\x0a\x29\x52\x71\x0b\x74\x71\x0c\x52\x71\x0d\x73\x2e",
    166);

// Pickle opcodes for crafted inputs (what an attacker can write, not what torch.save writes).
std::string unicode(const std::string& text) {
  std::string out = "X";
  for (int i = 0; i < 4; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text;
}
std::string long1(std::int64_t value) {  // LONG1 with 8 bytes, two's complement
  std::string out = "\x8a\x08";
  for (int i = 0; i < 8; ++i) out += static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
  return out;
}
std::string intTuple(const std::vector<std::int64_t>& values) {
  std::string out = "(";
  for (auto v : values) out += long1(v);
  return out + "t";
}
// {'t': tensor} as kTensor, over a FloatStorage of 4 elements, with the view given here.
std::string tensorPickle(std::int64_t offset, const std::vector<std::int64_t>& size, const std::vector<std::int64_t>& stride) {
  return std::string("\x80\x02}") + unicode("t") + "ctorch._utils\n_rebuild_tensor_v2\n((" + unicode("storage") +
         "ctorch\nFloatStorage\n" + unicode("0") + unicode("cpu") + "K\x04tQ" + long1(offset) + intTuple(size) +
         intTuple(stride) + "\x89" "ccollections\nOrderedDict\n)RtRs.";
}

PickleReader readerWithStorage(int* calls = nullptr) {
  return PickleReader([calls](const std::string& key, torch::ScalarType dtype, std::int64_t numel) -> Result<torch::Tensor> {
    if (calls) ++*calls;
    if (key != "0" || dtype != torch::kFloat32) return makeError("unexpected storage " + key);
    return torch::arange(numel, torch::kFloat32);
  });
}

}  // namespace

Q_DECLARE_METATYPE(std::string)

class TestPickleReader : public QObject {
  Q_OBJECT
private slots:
  void readsPythonValues();
  void readsATensorThroughItsStorage();
  void refuses_data();
  void refuses();
  void stateDictRoundTrip();
  void memoLookupsShareValues();
  void valueCountIsBounded();
  void largeDictKeepsPythonKeySemantics();
  void deflatedRecordLargerThanTheFileIsRefused_data();
  void deflatedRecordLargerThanTheFileIsRefused();
  void zipDirectoryRefusesMalformed_data();
  void zipDirectoryRefusesMalformed();
  void everyTruncationFails_data();
  void everyTruncationFails();
};

void TestPickleReader::readsPythonValues() {
  auto value = readerWithStorage().read(kPlain);
  QVERIFY2(value.ok(), value.error().c_str());
  QVERIFY(value->isDict());
  QCOMPARE(value->entries().size(), std::size_t{4});
  const PickleValue* a = value->find("a");
  QVERIFY(a && a->kind() == PickleValue::Kind::List);
  QCOMPARE(a->items().size(), std::size_t{1});  // the APPEND that LibTorch 1.13's pickle_load rejects
  QCOMPARE(a->items()[0].toInt(), std::int64_t{1});
  QCOMPARE(value->find("b")->toInt(), std::int64_t{-1});
  const PickleValue* c = value->find("c");
  QVERIFY(c && c->kind() == PickleValue::Kind::Tuple);
  QCOMPARE(c->items()[0].toDouble(), 1.5);
  QVERIFY(c->items()[1].isNone());
  QVERIFY(c->items()[2].kind() == PickleValue::Kind::Bool && c->items()[2].toBool());
  QCOMPARE(QString::fromStdString(value->find("d")->toString()), QString::fromUtf8("é"));
  QVERIFY(value->find("missing") == nullptr);
}

void TestPickleReader::readsATensorThroughItsStorage() {
  int calls = 0;
  auto value = readerWithStorage(&calls).read(kTensor);
  QVERIFY2(value.ok(), value.error().c_str());
  const PickleValue* t = value->find("t");
  QVERIFY(t && t->isTensor());
  QVERIFY(torch::equal(t->toTensor(), torch::tensor({{0.0f, 1.0f}, {2.0f, 3.0f}})));
  QCOMPARE(calls, 1);
  // The crafted pickles of refuses() are well formed: a view that fits reads.
  auto crafted = readerWithStorage().read(tensorPickle(1, {3}, {1}));
  QVERIFY2(crafted.ok(), crafted.error().c_str());
  QVERIFY(torch::equal(crafted->find("t")->toTensor(), torch::tensor({1.0f, 2.0f, 3.0f})));
}

void TestPickleReader::refuses_data() {
  QTest::addColumn<std::string>("bytes");
  QTest::addColumn<QString>("message");
  QTest::newRow("os.system") << std::string("\x80\x02" "cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.", 31)
                             << "os.system, which a checkpoint of tensors and numbers never does; it is refused";
  QTest::newRow("builtins.eval by STACK_GLOBAL")
      << std::string("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93.", 20) << "builtins.eval";
  QTest::newRow("protocol 0 INT") << std::string("\x80\x02I1\n.", 6) << "opcode 0x49";
  QTest::newRow("unstored memo entry") << std::string("\x80\x02h\x05.", 5) << "memo entry 5";
  // LibTorch's unpickler grows its memo table to the index: fuzz_checkpoint found 2^28 (4 GB).
  QTest::newRow("memo entry 2^28") << std::string("\x80\x02K\x01r\x00\x00\x00\x10.", 9)
                                   << "stores memo entry 268435456, past the 1 values it has made";
  QTest::newRow("APPEND to a dict") << std::string("\x80\x02}K\x01" "a.", 7) << "APPEND on a dict";
  QTest::newRow("nothing at STOP") << std::string("\x80\x02.", 3) << "malformed at STOP";
  QTest::newRow("two values at STOP") << std::string("\x80\x02K\x01K\x02.", 7) << "malformed at STOP";
  QTest::newRow("string longer than the file") << std::string("\x80\x02X\xff\xff\xff\x7f", 7) << "truncated";
  QTest::newRow("REDUCE on a number") << std::string("\x80\x02K\x01)R.", 7) << "REDUCE calls a int";
  std::string past_end = kTensor;
  past_end[113] = '\x03';  // size (3, 2) over a storage of 4 elements
  QTest::newRow("tensor past its storage") << past_end << "reaches past the end of its storage";
  // offset + (size-1)*stride wraps int64 to a negative number (LibTorch's own check does too).
  const std::int64_t big = std::int64_t{1} << 62;
  QTest::newRow("stride that wraps int64") << tensorPickle(big + 1000, {2}, {big}) << "reaches past the end";
  QTest::newRow("offset beyond the storage") << tensorPickle(big, {1}, {1}) << "reaches past the end";
  QTest::newRow("zero stride expanding four elements to 2^40")
      << tensorPickle(0, {std::int64_t{1} << 40}, {0}) << "more than its storage holds (4)";
  QTest::newRow("size product past 64 bits")
      << tensorPickle(0, {std::int64_t{1} << 32, std::int64_t{1} << 32}, {0, 0}) << "overflows 64 bits";
  QTest::newRow("negative stride") << tensorPickle(0, {2}, {-1}) << "negative size or stride";
  QTest::newRow("negative offset") << tensorPickle(-1, {1}, {1}) << "negative offset";
  QTest::newRow("too many dimensions") << tensorPickle(0, std::vector<std::int64_t>(17, 1), std::vector<std::int64_t>(17, 1))
                                       << "at most 16 are read";
  QTest::newRow("tuples nested 101 deep")
      << "\x80\x02K\x01" + std::string(101, '\x85') + "." << "more than 100 deep";
  // A million nested one-tuples: before the limit, freeing them recursively overflowed the stack.
  QTest::newRow("tuples nested a million deep")
      << "\x80\x02K\x01" + std::string(1'000'000, '\x85') + "." << "more than 100 deep";
  QTest::newRow("lists nested by APPEND")
      << [] {
           std::string bytes = "\x80\x02";
           for (int i = 0; i < 150; ++i) bytes += "]";
           for (int i = 0; i < 149; ++i) bytes += "a";
           return bytes + ".";
         }()
      << "more than 100 deep";
  QTest::newRow("a list inside itself") << std::string("\x80\x02]q\x00h\x00" "a.", 9) << "a list inside itself";
  QTest::newRow("a dict inside itself") << std::string("\x80\x02}q\x00K\x01h\x00s.", 11) << "a dict inside itself";
  QTest::newRow("a list changed after it was nested")
      << std::string("\x80\x02]q\x00]h\x00" "ah\x00K\x01" "a.", 15) << "changes a list after putting it inside";
  QTest::newRow("DICT with an odd number of items") << std::string("\x80\x02(K\x01" "d.") << "odd number";
}

void TestPickleReader::refuses() {
  QFETCH(std::string, bytes);
  QFETCH(QString, message);
  auto value = readerWithStorage().read(bytes);
  QVERIFY(!value.ok());
  QVERIFY2(QString::fromStdString(value.error()).contains(message), value.error().c_str());
}

// What torchSaveStateDict writes (the exported generator's format) reads back: the names in
// order, each tensor's values and type, a strided view written whole.
void TestPickleReader::stateDictRoundTrip() {
  const std::vector<std::pair<std::string, torch::Tensor>> tensors = {
      {"main.0.weight", torch::randn({3, 4, 2, 2})},
      {"main.1.running_var", torch::rand({4}, torch::kFloat64)},
      {"main.1.num_batches_tracked", torch::tensor(7, torch::kInt64)},
      {"transposed", torch::arange(6, torch::kFloat32).view({2, 3}).t()}};
  auto bytes = torchSaveStateDict(tensors);
  QVERIFY2(bytes.ok(), bytes.error().c_str());
  QTemporaryDir dir;
  const std::string path = dir.filePath("state.pt").toStdString();
  {
    std::ofstream out(path, std::ios::binary);
    out << *bytes;
  }
  auto value = readTorchSaveFile(path);
  QVERIFY2(value.ok(), value.error().c_str());
  QVERIFY(value->isDict());
  QCOMPARE(value->entries().size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    QCOMPARE(value->entries()[i].first.toString(), tensors[i].first);
    const torch::Tensor& read = value->entries()[i].second.toTensor();
    QCOMPARE(read.scalar_type(), tensors[i].second.scalar_type());
    QVERIFY(torch::equal(read, tensors[i].second));
  }
}

// A string stored once and fetched from the memo many times is one string: the review's 1 MB
// file of memo lookups grew to 1.2 GB when each lookup copied it.
void TestPickleReader::memoLookupsShareValues() {
  std::string bytes = "\x80\x02(" + unicode(std::string(1 << 16, 'x')) + "q\x01";
  for (int i = 0; i < 1000; ++i) bytes += "h\x01";
  bytes += "l.";
  auto value = readerWithStorage().read(bytes);
  QVERIFY2(value.ok(), value.error().c_str());
  QCOMPARE(value->items().size(), std::size_t{1001});
  for (const auto& item : value->items()) QCOMPARE(&item.toString(), &value->items()[0].toString());
}

// A list of a million True opcodes is a 1 MB pickle and cost 64 bytes and more a value (1.3 GB
// for 5 MB): the number of values made is bounded (4,194,304 by default; 1,000 here).
void TestPickleReader::valueCountIsBounded() {
  auto listOf = [](int count) { return "\x80\x02](" + std::string(static_cast<std::size_t>(count), '\x88') + "e."; };
  PickleReader::Limits limits;
  limits.max_values = 1000;
  const auto loader = [](const std::string&, torch::ScalarType, std::int64_t) -> Result<torch::Tensor> {
    return makeError("no storage");
  };
  auto fits = PickleReader(loader, limits).read(listOf(999));  // the list and 999 values
  QVERIFY2(fits.ok(), fits.error().c_str());
  QCOMPARE(fits->items().size(), std::size_t{999});
  auto refused = PickleReader(loader, limits).read(listOf(1000));
  QVERIFY(!refused.ok());
  QCOMPARE(QString::fromStdString(refused.error()),
           QString("the pickle makes more than 1000 values, far more than a checkpoint holds; it is not read"));
  // The default holds a loss list of a million floats.
  std::string losses = "\x80\x02](";
  for (int i = 0; i < 1000000; ++i) losses += "G" + std::string(8, '\0');
  losses += "e.";
  auto read = PickleReader(loader).read(losses);
  QVERIFY2(read.ok(), read.error().c_str());
  QCOMPARE(read->items().size(), std::size_t{1000000});
}

// Keys as Python compares them: a later equal key replaces the value in the first key's place,
// 1 and True are one key, other kinds of key are never equal; 100,000 keys (the review's 40,000
// took 2.2 s when each insert scanned every key).
void TestPickleReader::largeDictKeepsPythonKeySemantics() {
  std::string bytes = "\x80\x02}(";
  for (int i = 0; i < 100000; ++i) bytes += unicode("k" + std::to_string(i)) + "J" + std::string(reinterpret_cast<const char*>(&i), 4);
  bytes += unicode("k7") + "K\x63";  // replaces k7 in place
  bytes += "K\x01K\x01\x88K\x02NK\x03NK\x04";  // 1 then True: one key; None twice: two keys
  bytes += "u.";
  auto value = readerWithStorage().read(bytes);
  QVERIFY2(value.ok(), value.error().c_str());
  QCOMPARE(value->entries().size(), std::size_t{100000 + 1 + 2});
  QCOMPARE(value->find("k7")->toInt(), std::int64_t{0x63});
  QCOMPARE(value->entries()[7].second.toInt(), std::int64_t{0x63});
  QCOMPARE(value->find("k99999")->toInt(), std::int64_t{99999});
  QCOMPARE(value->entries()[100000].second.toInt(), std::int64_t{2});  // True replaced 1's value
}

// A data.pkl deflated to a few hundred KB that inflates to 100 MB: torch.save never compresses,
// so a record declaring more than the whole file is refused before it is inflated.
// The records are written in this order; each row's large one is 100 MB of one byte, deflated.
void TestPickleReader::deflatedRecordLargerThanTheFileIsRefused_data() {
  QTest::addColumn<QString>("records");
  QTest::addColumn<QString>("message");
  QTest::newRow("data.pkl") << "('archive/data.pkl', BIG), ('archive/version', b'3\\n')"
                            << "the record data.pkl would inflate to 104857600 bytes";
  // LibTorch reads the version record first, before any of ours was looked at.
  QTest::newRow("version") << "('archive/version', BIG), ('archive/data.pkl', b'N.')"
                           << "the record version would inflate to 104857600 bytes";
  // LibTorch's zip reader finds names whatever their case: DATA.PKL is data.pkl to it.
  QTest::newRow("DATA.PKL beside data.pkl")
      << "('archive/version', b'3\\n'), ('archive/DATA.PKL', BIG), ('archive/data.pkl', b'N.')"
      << "the record data.pkl would inflate to 104857600 bytes";
}

void TestPickleReader::deflatedRecordLargerThanTheFileIsRefused() {
  QFETCH(QString, records);
  QFETCH(QString, message);
  QTemporaryDir dir;
  const QString path = dir.filePath("bomb.pt");
  QProcess python;
  python.start("/usr/bin/python3", {"-c",
                                    "import sys, zipfile\n"
                                    "BIG = b'N' * (100 << 20)\n"
                                    "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
                                    "    for name, data in [" + records + "]:\n"
                                    "        z.writestr(name, data)\n",
                                    path});
  QVERIFY(python.waitForFinished(120000));
  QCOMPARE(python.exitCode(), 0);
  QVERIFY(QFileInfo(path).size() < (1 << 20));
  auto value = readTorchSaveFile(path.toStdString());
  QVERIFY(!value.ok());
  QVERIFY2(QString::fromStdString(value.error()).contains(message), value.error().c_str());
  QVERIFY2(QString::fromStdString(value.error()).startsWith(path), value.error().c_str());
}

void TestPickleReader::zipDirectoryRefusesMalformed_data() {
  QTest::addColumn<std::string>("bytes");
  QTest::addColumn<QString>("message");
  const std::string end = std::string("PK\x05\x06", 4) + std::string(18, '\0');
  QTest::newRow("too short") << std::string("PK\x05") << "too short";
  QTest::newRow("no end record") << std::string(100, 'x') << "no zip end record";
  std::string outside = end;
  outside[10] = 1;  // one entry
  outside[12] = 50;  // a 50-byte directory at 0 in a 22-byte file
  QTest::newRow("directory outside the file") << outside << "outside the file";
  std::string count = end;
  count[10] = 1;
  QTest::newRow("entry missing") << count << "entry 0 is malformed";
  std::string zip64 = end;
  zip64[10] = zip64[11] = '\xff';
  QTest::newRow("ZIP64 without its record") << zip64 << "ZIP64 end record is missing";
}

void TestPickleReader::zipDirectoryRefusesMalformed() {
  QFETCH(std::string, bytes);
  QFETCH(QString, message);
  const ZipByteSource read = [&bytes](std::uint64_t offset, char* out, std::size_t n) {
    if (offset > bytes.size() || n > bytes.size() - offset) return false;
    std::memcpy(out, bytes.data() + offset, n);
    return true;
  };
  auto directory = readZipDirectory(read, bytes.size());
  QVERIFY(!directory.ok());
  QVERIFY2(QString::fromStdString(directory.error()).contains(message), directory.error().c_str());
}

void TestPickleReader::everyTruncationFails_data() {
  QTest::addColumn<std::string>("bytes");
  QTest::newRow("values") << kPlain;
  QTest::newRow("tensor") << kTensor;
}

void TestPickleReader::everyTruncationFails() {
  QFETCH(std::string, bytes);
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    auto value = readerWithStorage().read(bytes.substr(0, length));
    QVERIFY2(!value.ok(), qPrintable(QString("a pickle cut at %1 bytes was read").arg(length)));
  }
}

STREETGAN_TEST_GUILESS_MAIN(TestPickleReader)
#include "tst_pickle_reader.moc"
