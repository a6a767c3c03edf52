// `--checkpoint` of every command that takes one, given a run folder, RUN@STEP and RUN@latest
// (core/runs/checkpoint_reference.h, applied in CommandLine::parseOrExit): the command says which
// file it uses ("using …" on stderr) and, where it writes something a test can compare, writes
// exactly what it writes given that file; every command refuses an empty run, a missing run, a
// step before the first checkpoint and a bad step, in one line, exit 2, writing nothing.
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan::test;

namespace {

// The commands: their arguments with %C for the checkpoint and %D for a fresh output folder;
// `output`: what to compare ("stdout", a file under %D, or "" when the command is only checked
// up to the error of a later option, `refused`, because it serves or takes minutes).
struct CommandCase {
  const char* name;
  QStringList args;
  QString output;
  QString refused = {};
};

const QList<CommandCase>& commandCases() {
  static const QList<CommandCase> cases = {
      {"sample", {"sample", "--checkpoint", "%C", "--out", "%D/grid.png", "--n", "4", "--seed", "3"}, "grid.png"},
      {"walk", {"walk", "--checkpoint", "%C", "--seeds", "1,2", "--frames-per-key", "2", "--size", "0", "--out-dir", "%D/frames"},
       "frames/frame_000001.png"},
      {"export", {"export", "--checkpoint", "%C", "--out", "%D/g.pt"}, "g.pt"},
      {"directions", {"directions", "--checkpoint", "%C", "--top", "2", "--json"}, "stdout"},
      {"parzen", {"parzen", "--checkpoint", "%C", "--dataroot", "%D", "--device", "nope"}, "", "--device"},
      {"metrics", {"metrics", "--checkpoint", "%C", "--dataroot", "%D", "--device", "nope"}, "", "--device"},
      {"project", {"project", "%D/photo.png", "--checkpoint", "%C", "--out", "%D/p.json", "--device", "nope"}, "", "--device"},
      {"serve", {"serve", "--checkpoint", "%C", "--port", "-5"}, "", "--port"},
      {"bench explore", {"bench", "explore", "--checkpoint", "%C", "--device", "nope"}, "", "--device"},
  };
  return cases;
}

QStringList filled(QStringList args, const QString& checkpoint, const QString& out) {
  for (QString& arg : args) {
    if (arg == "%C") arg = checkpoint;
    arg.replace("%D", out);
  }
  return args;
}

}  // namespace

class TestCheckpointOption : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString run_;  // a run with checkpoints at steps 4 and 8

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString data = makeTinyDataset(dir_.path());
    run_ = dir_.path() + "/runs/first";
    const auto trained = runCli(tinyTrainArgs(data, run_, 2));
    QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
    QVERIFY(QFile::exists(run_ + "/checkpoints/step-0000000004.pt"));
    QVERIFY(QFile::exists(run_ + "/checkpoints/step-0000000008.pt"));
    QVERIFY(QDir().mkpath(dir_.path() + "/runs/empty/checkpoints"));
  }

  // Each command given RUN, RUN@STEP and RUN@latest uses the checkpoint they name, and says so.
  void referencesChooseTheCheckpoint_data() {
    QTest::addColumn<int>("command");
    QTest::addColumn<QString>("reference");  // %R: the run folder
    QTest::addColumn<QString>("step");       // the checkpoint it names
    for (int i = 0; i < commandCases().size(); ++i) {
      const QByteArray name = commandCases()[i].name;
      QTest::newRow(name + ": RUN") << i << "%R" << "8";
      QTest::newRow(name + ": RUN@latest") << i << "%R@latest" << "8";
      QTest::newRow(name + ": RUN@STEP, between two") << i << "%R@7" << "4";
    }
  }
  void referencesChooseTheCheckpoint() {
    QFETCH(int, command);
    QFETCH(QString, reference);
    QFETCH(QString, step);
    const CommandCase& c = commandCases()[command];
    const QString file = run_ + "/checkpoints/step-" + step.rightJustified(10, '0') + ".pt";
    QTemporaryDir by_reference, by_file;
    const auto a = runCli(filled(c.args, QString(reference).replace("%R", run_), by_reference.path()));
    QVERIFY2(a.err.startsWith("using " + file + "\n"), qPrintable(a.err));
    if (c.output.isEmpty()) {
      // The checkpoint was resolved, then the command went on to its own options.
      QCOMPARE(a.exit_code, 2);
      QVERIFY2(a.err.contains("option '" + c.refused + "'"), qPrintable(a.err));
      return;
    }
    QVERIFY2(a.exit_code == 0, qPrintable(a.err));
    const auto b = runCli(filled(c.args, file, by_file.path()));
    QVERIFY2(b.exit_code == 0, qPrintable(b.err));
    QVERIFY2(!b.err.contains("using "), qPrintable(b.err));  // a file is used as given, silently
    if (c.output == "stdout") {
      // The same JSON but for the time it took.
      QJsonObject ja = QJsonDocument::fromJson(a.out.toUtf8()).object(), jb = QJsonDocument::fromJson(b.out.toUtf8()).object();
      QVERIFY(!ja.isEmpty());
      ja.remove("seconds");
      jb.remove("seconds");
      QCOMPARE(ja, jb);
    } else {
      const QByteArray bytes = readFileBytes(by_reference.path() + "/" + c.output);
      QVERIFY(!bytes.isEmpty());
      QCOMPARE(bytes, readFileBytes(by_file.path() + "/" + c.output));
    }
  }

  // What names no checkpoint is refused by every command, before it does anything.
  void refusals_data() {
    QTest::addColumn<int>("command");
    QTest::addColumn<QString>("reference");  // %T: the runs folder
    QTest::addColumn<QString>("error");
    for (int i = 0; i < commandCases().size(); ++i) {
      const QByteArray name = commandCases()[i].name;
      QTest::newRow(name + ": empty run") << i << "%T/empty"
          << "option '--checkpoint': the run %T/empty has no checkpoint yet (checkpoints/ holds no step-*.pt file); "
             "give it time to save one, or give a checkpoint file";
      QTest::newRow(name + ": empty run @latest") << i << "%T/empty@latest"
          << "option '--checkpoint': %T/empty@latest: the run %T/empty has no checkpoint yet (checkpoints/ holds no "
             "step-*.pt file); give it time to save one, or give a checkpoint file";
      QTest::newRow(name + ": missing run") << i << "%T/missing@latest"
          << "option '--checkpoint': %T/missing@latest: there is no run folder %T/missing";
      QTest::newRow(name + ": before the first") << i << "%T/first@3"
          << "option '--checkpoint': %T/first@3: the run %T/first has no checkpoint at or before step 3 (its first is at step 4)";
      QTest::newRow(name + ": not a step") << i << "%T/first@last"
          << "option '--checkpoint': %T/first@last: 'last' after '@' is not allowed; allowed: a step (0 to 9999999999) or latest";
    }
  }
  void refusals() {
    QFETCH(int, command);
    QFETCH(QString, reference);
    QFETCH(QString, error);
    const CommandCase& c = commandCases()[command];
    const QString runs = dir_.path() + "/runs";
    QTemporaryDir out;
    const auto r = runCli(filled(c.args, reference.replace("%T", runs), out.path()));
    QCOMPARE(r.exit_code, 2);
    const QString program = QString("streetgan ") + c.name;
    QCOMPARE(r.err, program + ": " + error.replace("%T", runs) + "\n");
    QCOMPARE(QDir(out.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList{});
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestCheckpointOption)
#include "tst_checkpoint_option.moc"
