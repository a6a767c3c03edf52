// plainText: what another process sent, made safe for a terminal and an event; one row per kind
// of byte sequence.
#include "core/util/plain_text.h"
#include "tests/support/test_suite.h"

#include <QTest>

using namespace streetgan;

class PlainTextTest : public QObject {
  Q_OBJECT

private slots:
  void plain_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("max_bytes");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("ascii") << QByteArray("rank 1 failed: no data") << 100 << QByteArray("rank 1 failed: no data");
    QTest::newRow("utf-8 kept") << QByteArray("Zürich €") << 100 << QByteArray("Zürich €");
    QTest::newRow("escape sequence") << QByteArray("a\x1b[2Jb") << 100 << QByteArray("a?[2Jb");
    QTest::newRow("newline and tab") << QByteArray("a\nb\tc\r") << 100 << QByteArray("a b c ");
    QTest::newRow("NUL and DEL") << QByteArray("a\0b\x7f", 4) << 100 << QByteArray("a?b?");
    QTest::newRow("C1 CSI") << QByteArray("a\xc2\x9b" "31mb") << 100 << QByteArray("a?31mb");
    QTest::newRow("invalid byte") << QByteArray("a\xff" "b") << 100 << QByteArray("a?b");
    QTest::newRow("overlong slash") << QByteArray("\xc0\xaf") << 100 << QByteArray("??");
    QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << 100 << QByteArray("???");
    QTest::newRow("truncated character") << QByteArray("ab\xe2\x82") << 100 << QByteArray("ab??");
    QTest::newRow("cut at the limit") << QByteArray("abcdef") << 4 << QByteArray("abcd...");
    QTest::newRow("cut before a character") << QByteArray("abc€") << 4 << QByteArray("abc...");
    QTest::newRow("exactly the limit") << QByteArray("abcd") << 4 << QByteArray("abcd");
    QTest::newRow("empty") << QByteArray() << 4 << QByteArray();
  }
  void plain() {
    QFETCH(QByteArray, bytes);
    QFETCH(int, max_bytes);
    QFETCH(QByteArray, expected);
    const std::string out = plainText(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())),
                                      static_cast<std::size_t>(max_bytes));
    QCOMPARE(QByteArray::fromStdString(out), expected);
  }
};

STREETGAN_TEST_APPLESS_MAIN(PlainTextTest)
#include "tst_plain_text.moc"
