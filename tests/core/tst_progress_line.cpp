// The progress line of long commands (core/util/progress_line.h): which lines parse and to what
// (good lines, malformed ones, overlong ones, missing or out-of-range fields, as one data table),
// the writer's exact text, the commands' tasks, and that every line the writer makes parses back
// to what it was given.
#include "core/util/progress_line.h"
#include "tests/support/test_suite.h"

#include <QByteArray>
#include <QTest>

#include <limits>
#include <string>

using namespace streetgan;

namespace {

// A valid line whose detail is padding ('a'), around it the line's other bytes.
const QByteArray kPaddedHead = QByteArray(kProgressLinePrefix.data(), static_cast<int>(kProgressLinePrefix.size())) +
                               "{\"task\":\"t\",\"done\":0,\"total\":1,\"detail\":\"";
const QByteArray kPaddedTail = "\"}";

// The padding of a line of `bytes` bytes.
int paddingFor(int bytes) { return bytes - static_cast<int>(kPaddedHead.size() + kPaddedTail.size()); }

// A valid line of exactly `bytes` bytes.
QByteArray lineOfSize(int bytes) { return kPaddedHead + QByteArray(paddingFor(bytes), 'a') + kPaddedTail; }

}  // namespace

class ProgressLineTest : public QObject {
  Q_OBJECT

private slots:
  void parse_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<QString>("task");
    QTest::addColumn<qint64>("done");
    QTest::addColumn<qint64>("total");
    QTest::addColumn<QString>("detail");
    const qint64 max = std::numeric_limits<qint64>::max();
    auto good = [](const char* name, const QByteArray& text, const QString& task, qint64 done, qint64 total,
                   const QString& detail = {}) {
      QTest::newRow(name) << text << true << task << done << total << detail;
    };
    auto bad = [](const char* name, const QByteArray& text) {
      QTest::newRow(name) << text << false << QString() << qint64(0) << qint64(0) << QString();
    };
    // Good lines.
    good("parzen percent", R"(progress/1 {"task":"parzen-estimate","done":42,"total":100})", "parzen-estimate", 42, 100);
    good("with a detail", R"(progress/1 {"task":"parzen-run","done":2,"total":10,"detail":"runs/a/checkpoints/step-30.pt"})",
         "parzen-run", 2, 10, "runs/a/checkpoints/step-30.pt");
    good("newline", "progress/1 {\"task\":\"demo-data\",\"done\":16,\"total\":1000}\n", "demo-data", 16, 1000);
    good("crlf", "progress/1 {\"task\":\"demo-data\",\"done\":16,\"total\":1000}\r\n", "demo-data", 16, 1000);
    good("fields in another order", R"(progress/1 {"total":3,"detail":"x","done":3,"task":"import"})", "import", 3, 3, "x");
    good("unknown field ignored", R"(progress/1 {"task":"cache-build","done":0,"total":1,"eta_s":12.5,"more":{"a":[1]}})",
         "cache-build", 0, 1);
    good("largest total", R"(progress/1 {"task":"t","done":9223372036854775807,"total":9223372036854775807})", "t", max, max);
    good("utf-8 detail", R"(progress/1 {"task":"t","done":1,"total":2,"detail":"Zürich \u00e9 \n"})", "t", 1, 2,
         QString::fromUtf8("Zürich é \n"));
    good("spaces in the JSON", R"(progress/1 { "task" : "t" , "done" : 1 , "total" : 2 } )", "t", 1, 2);
    const int limit = static_cast<int>(kMaxProgressLineBytes);
    good("at the length limit", lineOfSize(limit), "t", 0, 1, QString(paddingFor(limit), 'a'));
    good("at the limit with its newline", lineOfSize(limit) + "\n", "t", 0, 1, QString(paddingFor(limit), 'a'));
    // Malformed.
    bad("empty", "");
    bad("human progress", "Parzen estimate: 42%");
    bad("no prefix", R"({"task":"t","done":1,"total":2})");
    bad("another version", R"(progress/2 {"task":"t","done":1,"total":2})");
    bad("no space after the prefix", R"(progress/1{"task":"t","done":1,"total":2})");
    bad("leading space", R"( progress/1 {"task":"t","done":1,"total":2})");
    bad("prefix only", "progress/1 ");
    bad("cut JSON", R"(progress/1 {"task":"t","done":1,)");
    bad("array body", R"(progress/1 [1,2])");
    bad("string body", "progress/1 \"t\"");
    bad("text after the object", R"(progress/1 {"task":"t","done":1,"total":2} x)");
    bad("two lines", "progress/1 {\"task\":\"t\",\"done\":1,\"total\":2}\nprogress/1 {\"task\":\"t\",\"done\":2,\"total\":2}");
    bad("raw newline in a string", "progress/1 {\"task\":\"t\",\"done\":1,\"total\":2,\"detail\":\"a\nb\"}");
    bad("invalid UTF-8", "progress/1 {\"task\":\"t\",\"done\":1,\"total\":2,\"detail\":\"\xff\xfe\"}");
    bad("NUL in the line", QByteArray("progress/1 {\"task\":\"t\",") + '\0' + "\"done\":1,\"total\":2}");
    bad("NUL after the object", QByteArray("progress/1 {\"task\":\"t\",\"done\":1,\"total\":2}") + '\0' + "x");
    // Overlong.
    bad("one byte over the limit", lineOfSize(limit + 1));
    bad("64 KiB", lineOfSize(65536));
    // Missing fields.
    bad("no task", R"(progress/1 {"done":1,"total":2})");
    bad("no done", R"(progress/1 {"task":"t","total":2})");
    bad("no total", R"(progress/1 {"task":"t","done":1})");
    bad("empty object", R"(progress/1 {})");
    // Fields of the wrong type or out of range.
    bad("done over total", R"(progress/1 {"task":"t","done":3,"total":2})");
    bad("total zero", R"(progress/1 {"task":"t","done":0,"total":0})");
    bad("negative done", R"(progress/1 {"task":"t","done":-1,"total":2})");
    bad("done a float", R"(progress/1 {"task":"t","done":1.0,"total":2})");
    bad("done a string", R"(progress/1 {"task":"t","done":"1","total":2})");
    bad("total past int64", R"(progress/1 {"task":"t","done":1,"total":9223372036854775808})");
    bad("total huge float", R"(progress/1 {"task":"t","done":1,"total":1e400})");
    bad("task a number", R"(progress/1 {"task":7,"done":1,"total":2})");
    bad("task empty", R"(progress/1 {"task":"","done":1,"total":2})");
    bad("task upper case", R"(progress/1 {"task":"Parzen","done":1,"total":2})");
    bad("task with a space", R"(progress/1 {"task":"a b","done":1,"total":2})");
    bad("task too long", "progress/1 {\"task\":\"" + QByteArray(65, 't') + "\",\"done\":1,\"total\":2}");
    bad("detail a number", R"(progress/1 {"task":"t","done":1,"total":2,"detail":3})");
    bad("detail null", R"(progress/1 {"task":"t","done":1,"total":2,"detail":null})");
  }
  void parse() {
    QFETCH(QByteArray, text);
    QFETCH(bool, valid);
    const auto line = parseProgressLine(std::string_view(text.constData(), static_cast<std::size_t>(text.size())));
    QCOMPARE(line.has_value(), valid);
    if (!valid) return;
    QFETCH(QString, task);
    QFETCH(qint64, done);
    QFETCH(qint64, total);
    QFETCH(QString, detail);
    QCOMPARE(QString::fromStdString(line->task), task);
    QCOMPARE(qint64(line->done), done);
    QCOMPARE(qint64(line->total), total);
    QCOMPARE(QString::fromStdString(line->detail), detail);
  }

  void format_data() {
    QTest::addColumn<QString>("task");
    QTest::addColumn<qint64>("done");
    QTest::addColumn<qint64>("total");
    QTest::addColumn<QString>("detail");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no detail") << "parzen-estimate" << qint64(3) << qint64(100) << QString()
                               << R"(progress/1 {"task":"parzen-estimate","done":3,"total":100})";
    QTest::newRow("detail") << "parzen-run" << qint64(0) << qint64(2) << "a \"b\"\n"
                            << "progress/1 {\"task\":\"parzen-run\",\"done\":0,\"total\":2,\"detail\":\"a \\\"b\\\"\\n\"}";  // not raw: moc loses its place in a raw string holding \"
    QTest::newRow("done clamped") << "t" << qint64(5) << qint64(2) << QString()
                                  << R"(progress/1 {"task":"t","done":2,"total":2})";
    QTest::newRow("negative done") << "t" << qint64(-5) << qint64(2) << QString()
                                   << R"(progress/1 {"task":"t","done":0,"total":2})";
    QTest::newRow("total zero") << "t" << qint64(0) << qint64(0) << QString()
                                << R"(progress/1 {"task":"t","done":0,"total":1})";
  }
  void format() {
    QFETCH(QString, task);
    QFETCH(qint64, done);
    QFETCH(qint64, total);
    QFETCH(QString, detail);
    QFETCH(QString, expected);
    const std::string text = formatProgressLine({task.toStdString(), done, total, detail.toStdString()});
    QCOMPARE(QString::fromStdString(text), expected);
  }

  // The commands' tasks follow the rule, so their lines parse.
  void everyCommandTaskParses() {
    for (const char* task : {kProgressTaskParzen, kProgressTaskParzenRun, kProgressTaskCacheBuild, kProgressTaskDemoData,
                             kProgressTaskImport}) {
      const auto line = parseProgressLine(formatProgressLine({task, 1, 2, "x"}));
      QVERIFY2(line.has_value(), task);
      QCOMPARE(QString::fromStdString(line->task), QString(task));
    }
  }

  void roundTrip_data() {
    QTest::addColumn<QByteArray>("detail");
    QTest::addColumn<QByteArray>("expected");  // the detail as it parses back
    QTest::newRow("empty") << QByteArray() << QByteArray();
    QTest::newRow("path") << QByteArray("/runs/a b/checkpoints/step-0000000030.pt")
                          << QByteArray("/runs/a b/checkpoints/step-0000000030.pt");
    QTest::newRow("control characters") << QByteArray("a\tb\rc\x01") << QByteArray("a\tb\rc\x01");
    // Not UTF-8: each bad byte becomes U+FFFD, still one valid line.
    QTest::newRow("not utf-8") << QByteArray("a\xff" "b") << QByteArray("a\xef\xbf\xbd" "b");
    // Over the detail's limit: cut to it, ending with "…".
    const QByteArray long_ascii(2000, 'x');
    QTest::newRow("long") << long_ascii << QByteArray(static_cast<int>(kMaxProgressDetailBytes) - 3, 'x') + "\xe2\x80\xa6";
    // Cut through a two-byte character: the cut goes back to its start.
    const QByteArray umlauts = QByteArray(1000, 'u').replace("uu", "\xc3\xbc");  // "ü" × 500
    QTest::newRow("long utf-8") << umlauts << QByteArray(static_cast<int>(kMaxProgressDetailBytes) - 4, 'u').replace("uu", "\xc3\xbc") + "\xe2\x80\xa6";
    // The worst case for escaping (6 bytes each) still fits the line.
    QTest::newRow("long control characters") << QByteArray(2000, '\x01')
                                             << QByteArray(static_cast<int>(kMaxProgressDetailBytes) - 3, '\x01') + "\xe2\x80\xa6";
  }
  void roundTrip() {
    QFETCH(QByteArray, detail);
    QFETCH(QByteArray, expected);
    const std::string text = formatProgressLine({"cache-build", 7, 9, detail.toStdString()});
    QVERIFY(text.size() <= kMaxProgressLineBytes);
    QVERIFY(text.find('\n') == std::string::npos);
    const auto line = parseProgressLine(text);
    QVERIFY2(line.has_value(), text.c_str());
    QCOMPARE(QString::fromStdString(line->task), QString("cache-build"));
    QCOMPARE(qint64(line->done), qint64(7));
    QCOMPARE(qint64(line->total), qint64(9));
    QCOMPARE(QByteArray::fromStdString(line->detail), expected);
  }
};

STREETGAN_TEST_GUILESS_MAIN(ProgressLineTest)
#include "tst_progress_line.moc"
