// shellQuote / remoteCommandLine: every word comes back out of a real shell exactly as it went in,
// and nothing in it runs (each table row is run through /bin/sh and bash).
#include "core/runs/shell_quote.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan;

class ShellQuoteTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;

  // Runs `line` in `shell` with cwd dir_ and returns what it printed.
  QByteArray runIn(const QString& shell, const std::string& line) {
    QProcess process;
    process.setWorkingDirectory(dir_.path());
    process.start(shell, {"-c", QString::fromStdString(line)});
    process.waitForFinished(10000);
    return process.readAllStandardOutput();
  }

private slots:
  void quoted_data() {
    QTest::addColumn<QString>("word");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << "abc" << "'abc'";
    QTest::newRow("empty") << "" << "''";
    QTest::newRow("quote") << "it's" << "'it'\\''s'";
    QTest::newRow("spaces") << "a b  c" << "'a b  c'";
    QTest::newRow("substitution") << "$(touch PWNED)" << "'$(touch PWNED)'";
  }
  void quoted() {
    QFETCH(QString, word);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(shellQuote(word.toStdString())), expected);
  }

  void roundTrip_data() {
    QTest::addColumn<QString>("word");
    QTest::newRow("spaces") << "a run with spaces";
    QTest::newRow("single quotes") << "it's 'quoted'";
    QTest::newRow("double quotes") << "say \"hi\"";
    QTest::newRow("semicolon") << "x; touch PWNED; y";
    QTest::newRow("substitution") << "$(touch PWNED)";
    QTest::newRow("backquotes") << "`touch PWNED`";
    QTest::newRow("variables") << "$HOME ${PATH} $0";
    QTest::newRow("newline") << "first\nsecond; touch PWNED";
    QTest::newRow("glob and tilde") << "~ * ? [a-z]";
    QTest::newRow("backslashes") << "a\\b\\\\c\\";
    QTest::newRow("redirections") << "> PWNED < /etc/passwd | cat &";
    QTest::newRow("leading dash") << "-n -e";
    QTest::newRow("utf-8") << "Zürich straße 東京";
    QTest::newRow("empty") << "";
  }
  void roundTrip() {
    QFETCH(QString, word);
    for (const QString shell : {"/bin/sh", "/bin/bash"}) {
      const std::string line = remoteCommandLine("", "printf", {"%s|", word.toStdString()});
      QCOMPARE(QString::fromUtf8(runIn(shell, line)), word + "|");
      QVERIFY2(!QFile::exists(dir_.filePath("PWNED")), qPrintable(shell));
    }
  }

  void homePaths_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");
    QTest::newRow("home") << "~" << QDir::homePath();
    QTest::newRow("under home") << "~/runs/a b" << QDir::homePath() + "/runs/a b";
    QTest::newRow("absolute") << "/opt/x y" << "/opt/x y";
    QTest::newRow("tilde later") << "a/~/b" << "a/~/b";
    QTest::newRow("other user") << "~root/x" << "~root/x";
  }
  void homePaths() {
    QFETCH(QString, path);
    QFETCH(QString, expected);
    const std::string line = "printf %s " + shellQuotePath(path.toStdString());
    QCOMPARE(QString::fromUtf8(runIn("/bin/sh", line)), expected);
  }

  void environmentLineComesFirstAndOnStderr() {
    QProcess process;
    process.start("/bin/sh", {"-c", QString::fromStdString(remoteCommandLine("echo banner; X=42; export X", "sh",
                                                                              {"-c", "printf %s \"$X\""}))});
    process.waitForFinished(10000);
    QCOMPARE(process.readAllStandardOutput(), QByteArray("42"));
    QVERIFY(process.readAllStandardError().contains("banner"));

    process.start("/bin/sh", {"-c", QString::fromStdString(remoteCommandLine("false", "printf", {"ran"}))});
    process.waitForFinished(10000);
    QCOMPARE(process.exitCode(), kEnvironmentLineFailed);
    QCOMPARE(process.readAllStandardOutput(), QByteArray());
    QVERIFY(process.readAllStandardError().contains("environment line failed"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(ShellQuoteTest)
#include "tst_shell_quote.moc"
