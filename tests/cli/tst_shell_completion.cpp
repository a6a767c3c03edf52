// The bash completion (packaging/completion/streetgan.bash, installed by the .deb) loaded in a
// real bash: commands, subcommands, each command's options (read from the program's --help),
// presets, --device values, files and folders, as one data table; and `streetgan --help`'s
// examples, each of which must be a line of the README's "Using the CLI".
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan::test;

namespace {

const QString kCompletion = QStringLiteral(STREETGAN_SOURCE_DIR "/packaging/completion/streetgan.bash");

// What the completion offers for the command line `line` (the cursor at its end), one per line,
// sorted; `error` gets bash's stderr.
QStringList complete(const QString& line, const QString& cwd, QString* error) {
  // COMP_WORDS as bash splits the line: a trailing space starts an empty word.
  QStringList words = line.split(' ');
  words[0] = STREETGAN_CLI;
  QString array;
  for (const QString& word : words) array += " '" + word + "'";
  QProcess bash;
  bash.setWorkingDirectory(cwd);
  bash.start("bash", {"--norc", "--noprofile", "-c",
                      "set -u; source '" + kCompletion + "' && COMP_WORDS=(" + array + ") && COMP_CWORD=" +
                          QString::number(words.size() - 1) + " && _streetgan && printf '%s\\n' \"${COMPREPLY[@]}\""});
  bash.waitForFinished(120000);
  *error = QString::fromUtf8(bash.readAllStandardError());
  QStringList offered = QString::fromUtf8(bash.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
  offered.sort();
  return offered;
}

QStringList sorted(QStringList list) {
  list.sort();
  return list;
}

}  // namespace

class TestShellCompletion : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QVERIFY(QDir().mkpath(dir_.path() + "/runs/first/checkpoints"));
    QVERIFY(QDir().mkpath(dir_.path() + "/rundata"));
    QFile file(dir_.path() + "/runs.txt");
    QVERIFY(file.open(QIODevice::WriteOnly));
  }

  void completes_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QStringList>("offered");
    QTest::newRow("a command") << "streetgan tr" << QStringList{"train"};
    QTest::newRow("every command")
        << "streetgan " << sorted({"train", "sample", "info", "demo-data", "data", "cache", "walk", "directions", "project",
                                   "metrics", "nearest", "parzen", "tensorboard", "import", "export", "serve", "publish", "bench",
                                   "remote", "--help", "--version"});
    QTest::newRow("a subcommand") << "streetgan cache b" << QStringList{"build"};
    QTest::newRow("bench's subcommands") << "streetgan bench " << sorted({"train", "data", "explore", "metrics", "allreduce", "--help"});
    QTest::newRow("an option") << "streetgan train --pre" << sorted({"--preset", "--prefetch", "--precision"});
    QTest::newRow("a new option") << "streetgan train --progress-" << QStringList{"--progress-every"};
    QTest::newRow("a subcommand's option") << "streetgan cache build --o" << QStringList{"--out"};
    QTest::newRow("the presets") << "streetgan train --preset " << sorted({"naive-64", "safe-64", "safe-128", "demo", "modern-64", "modern-128"});
    QTest::newRow("a preset") << "streetgan info --preset sa" << sorted({"safe-64", "safe-128"});
    QTest::newRow("devices") << "streetgan sample --device " << sorted({"auto", "cpu", "cuda", "cuda:0", "cuda:1", "cuda:2", "cuda:3", "hpu"});
    QTest::newRow("precisions") << "streetgan train --precision " << sorted({"auto", "fp32", "fp16", "bf16"});
    QTest::newRow("export's formats") << "streetgan export --format " << sorted({"pytorch", "onnx"});
    QTest::newRow("walk's formats") << "streetgan walk --format g" << QStringList{"gif"};
    QTest::newRow("generators") << "streetgan export --generator " << sorted({"ema", "raw"});
    QTest::newRow("latents: files and folders") << "streetgan sample --latents run" << sorted({"runs", "rundata", "runs.txt"});
    QTest::newRow("checkpoint: files and folders") << "streetgan sample --checkpoint run" << sorted({"runs", "rundata", "runs.txt"});
    QTest::newRow("dataroot: folders only") << "streetgan train --dataroot run" << sorted({"runs", "rundata"});
    QTest::newRow("inside a run") << "streetgan walk --checkpoint runs/first/c" << QStringList{"runs/first/checkpoints"};
    QTest::newRow("publish's --preview is a flag") << "streetgan publish --preview --p" << sorted({"--port", "--preview"});
    QTest::newRow("nothing for an unknown option") << "streetgan train --nope" << QStringList{};
  }
  void completes() {
    QFETCH(QString, line);
    QFETCH(QStringList, offered);
    QString error;
    QCOMPARE(complete(line, dir_.path(), &error), offered);
    QCOMPARE(error, QString());
  }

  // Each command's options, as offered after "--", are its --help's.
  void optionsFollowTheHelp() {
    for (const QString command : {"train", "sample", "walk", "parzen", "metrics", "serve", "export", "publish", "demo-data"}) {
      const auto help = runCli({command, "--help"});
      QStringList options;
      for (const auto& m : QRegularExpression(R"(^  (-[-a-zA-Z0-9]+))", QRegularExpression::MultilineOption).globalMatch(help.out))
        options << m.captured(1);
      options.removeDuplicates();
      QString error;
      const QStringList offered = complete("streetgan " + command + " -", dir_.path(), &error);
      for (const QString& option : options) QVERIFY2(offered.contains(option), qPrintable(command + ": " + option));
      QVERIFY2(offered.size() >= 3, qPrintable(offered.join(' ')));
    }
  }

  // `streetgan --help`'s examples are lines of the README's "Using the CLI" (comments aside).
  void helpExamplesAreInTheReadme() {
    QFile readme(STREETGAN_SOURCE_DIR "/README.md");
    QVERIFY(readme.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(readme.readAll());
    const int start = text.indexOf("## Using the CLI");
    QVERIFY(start >= 0);
    QStringList readme_lines;
    for (const QString& line : text.mid(start).section("\n## ", 0, 0).split('\n'))
      readme_lines << line.section('#', 0, 0).trimmed();
    const auto help = runCli({"--help"});
    QCOMPARE(help.exit_code, 0);
    const QString examples = help.out.section("Examples", 1).section("\n\n", 0, 0);
    int count = 0;
    for (const QString& line : examples.split('\n')) {
      if (!line.startsWith("  streetgan ")) continue;
      QVERIFY2(readme_lines.contains(line.trimmed()), qPrintable("not in the README: " + line));
      ++count;
    }
    QVERIFY2(count >= 6, qPrintable(help.out));
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestShellCompletion)
#include "tst_shell_completion.moc"
