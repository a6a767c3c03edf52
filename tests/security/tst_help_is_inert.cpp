// `streetgan CMD [SUB] --help` only prints help: exit 0, and nothing is created or started, for
// every command and subcommand the shell completion knows (packaging/completion/streetgan.bash
// asks each for its --help while the user presses TAB; `remote launch --help` once took "--help"
// for a run folder and started a training there). Run in an empty folder with an empty HOME;
// for remote's subcommands `--help` also comes after the run folder, as a user may add it at the
// end of a line.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace streetgan::test;

namespace {

// The words of `name="..."` or `name) subcommands="..."` in the completion script.
QStringList completionWords(const QString& script, const QString& pattern) {
  const auto match = QRegularExpression(pattern).match(script);
  return match.hasMatch() ? match.captured(1).split(' ', Qt::SkipEmptyParts) : QStringList();
}

}  // namespace

class HelpIsInertTest : public QObject {
  Q_OBJECT

private slots:
  void helpActsOnNothing_data() {
    QTest::addColumn<QStringList>("args");
    QFile file(QStringLiteral(STREETGAN_SOURCE_DIR) + "/packaging/completion/streetgan.bash");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString script = QString::fromUtf8(file.readAll());
    const QStringList commands = completionWords(script, "local commands=\"([^\"]*)\"");
    QVERIFY(commands.size() >= 10);
    for (const QString& command : commands) {
      QTest::newRow(qPrintable(command + " --help")) << QStringList{command, "--help"};
      const QStringList subcommands = completionWords(script, "\\n\\s*" + command + "\\) subcommands=\"([^\"]*)\"");
      for (const QString& sub : subcommands) {
        QTest::newRow(qPrintable(command + " " + sub + " --help")) << QStringList{command, sub, "--help"};
        // remote's subcommands take a run folder first; --help after it prints help too.
        if (command == "remote")
          QTest::newRow(qPrintable(command + " " + sub + " run --help")) << QStringList{command, sub, "run", "--help"};
      }
    }
  }

  void helpActsOnNothing() {
    QFETCH(QStringList, args);
    QTemporaryDir cwd, home;
    QProcess process;
    process.setWorkingDirectory(cwd.path());
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("HOME", home.path());
    environment.insert("XDG_CONFIG_HOME", home.path() + "/.config");
    environment.insert("XDG_CACHE_HOME", home.path() + "/.cache");
    process.setProcessEnvironment(environment);
    process.start(STREETGAN_CLI, args);
    QVERIFY2(process.waitForFinished(60000), "streetgan --help did not end within 60 s");
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QVERIFY2(process.exitCode() == 0, qPrintable(QString::fromUtf8(process.readAllStandardError())));
    QVERIFY(process.readAllStandardOutput().contains("Usage:"));
    QCOMPARE(QDir(cwd.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
    QCOMPARE(QDir(home.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
  }
};

STREETGAN_TEST_GUILESS_MAIN(HelpIsInertTest)
#include "tst_help_is_inert.moc"
