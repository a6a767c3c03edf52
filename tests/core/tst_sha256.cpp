// SHA-256 against the FIPS 180-4 test vectors, in one piece and fed in awkward pieces, and files;
// HMAC-SHA-256 against RFC 4231's test cases.
#include "core/util/sha256.h"
#include "tests/support/test_suite.h"

#include <QTemporaryDir>
#include <QtTest>

#include <string>

using namespace streetgan;

class TestSha256 : public QObject {
  Q_OBJECT
private slots:
  void vectors_data();
  void vectors();
  void files();
  void hmac_data();
  void hmac();
};

void TestSha256::vectors_data() {
  QTest::addColumn<QByteArray>("message");
  QTest::addColumn<QString>("digest");
  QTest::newRow("empty") << QByteArray() << "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  QTest::newRow("abc") << QByteArray("abc") << "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  QTest::newRow("448 bits") << QByteArray("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                            << "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
  QTest::newRow("896 bits")
      << QByteArray("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")
      << "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
  QTest::newRow("a million a") << QByteArray(1000000, 'a')
                               << "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
}

void TestSha256::vectors() {
  QFETCH(QByteArray, message);
  QFETCH(QString, digest);
  QCOMPARE(QString::fromStdString(Sha256::ofBytes(message.toStdString())), digest);
  Sha256 pieces;  // 1, 2, 3, … bytes at a time: every position of the 64-byte block is a boundary
  int at = 0;
  for (int size = 1; at < message.size(); ++size) {
    const int take = std::min(size % 97 + 1, static_cast<int>(message.size()) - at);
    pieces.update(message.constData() + at, static_cast<std::size_t>(take));
    at += take;
  }
  QCOMPARE(QString::fromStdString(pieces.hexDigest()), digest);
}

void TestSha256::files() {
  QTemporaryDir dir;
  QFile file(dir.filePath("net.pt"));
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(QByteArray(3 << 20, 'a'));  // larger than one read piece
  file.close();
  auto digest = Sha256::ofFile(file.fileName().toStdString());
  QVERIFY2(digest.ok(), digest.error().c_str());
  QCOMPARE(*digest, Sha256::ofBytes(std::string(3 << 20, 'a')));
  auto missing = Sha256::ofFile(dir.filePath("nothing").toStdString());
  QVERIFY(!missing.ok());
  QVERIFY2(QString::fromStdString(missing.error()).contains("nothing: cannot read"), missing.error().c_str());
}


void TestSha256::hmac_data() {
  QTest::addColumn<QByteArray>("key");
  QTest::addColumn<QByteArray>("message");
  QTest::addColumn<QString>("mac");
  QTest::newRow("RFC 4231 case 1") << QByteArray(20, '\x0b') << QByteArray("Hi There")
                                   << "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7";
  QTest::newRow("RFC 4231 case 2") << QByteArray("Jefe") << QByteArray("what do ya want for nothing?")
                                   << "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
  QTest::newRow("RFC 4231 case 3") << QByteArray(20, '\xaa') << QByteArray(50, '\xdd')
                                   << "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe";
  QTest::newRow("RFC 4231 case 6: a key longer than the block")
      << QByteArray(131, '\xaa') << QByteArray("Test Using Larger Than Block-Size Key - Hash Key First")
      << "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";
}

void TestSha256::hmac() {
  QFETCH(QByteArray, key);
  QFETCH(QByteArray, message);
  QFETCH(QString, mac);
  const auto bytes = Sha256::hmac(key.toStdString(), message.toStdString());
  QCOMPARE(QString::fromLatin1(QByteArray(reinterpret_cast<const char*>(bytes.data()), 32).toHex()), mac);
}

STREETGAN_TEST_GUILESS_MAIN(TestSha256)
#include "tst_sha256.moc"
