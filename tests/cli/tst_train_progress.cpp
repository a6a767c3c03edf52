// What `streetgan train` prints while it trains (app/cli/train_progress_printer.h): on a terminal
// (a pseudo-terminal made by script(1)) one status line redrawn in place under the epoch lines,
// with an ETA that comes true within a stated tolerance on a steady run; elsewhere (a pipe, as
// under nohup, the remote launcher or the studio) a plain line every --progress-every seconds
// and never a carriage return; --quiet: only the final line, or only the error.
#include "core/runs/shell_quote.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace streetgan::test;

namespace {

// `args` run on a pseudo-terminal of `columns` columns; its output arrives as `script` reads it.
QStringList onATerminal(const QStringList& args, int columns) {
  std::string command = "stty cols " + std::to_string(columns) + " && exec " + streetgan::shellQuote(STREETGAN_CLI);
  for (const QString& arg : args) command += " " + streetgan::shellQuote(arg.toStdString());
  return {"-qfec", QString::fromStdString(command), "/dev/null"};
}

// The live lines of terminal output: what each "\r" starts, up to the next "\r" or newline.
QStringList liveLines(const QString& text) {
  QStringList lines;
  for (const QString& part : text.split('\r')) {
    const QString line = part.section('\n', 0, 0).trimmed();
    if (line.startsWith("epoch ") && line.contains(" img/s")) lines << line;
  }
  return lines;
}

}  // namespace

class TestTrainProgress : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString tiny_;

  QStringList trainArgs(const QString& data, const QString& run, int epochs) {
    return tinyTrainArgs(data, run, epochs);
  }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    tiny_ = makeTinyDataset(dir_.path());
  }

  // On a terminal: the status line is drawn with "\r" and holds every figure (200 columns);
  // the epoch summaries and the final line stay, each on a line of its own.
  void liveLineOnATerminal() {
    QProcess script;
    script.start("script", onATerminal(trainArgs(tiny_, dir_.path() + "/live", 3), 200));
    QVERIFY(script.waitForFinished(600000));
    QCOMPARE(script.exitCode(), 0);
    const QString out = QString::fromUtf8(script.readAllStandardOutput());
    const QStringList lines = liveLines(out);
    QVERIFY2(!lines.isEmpty(), qPrintable(out));
    const QRegularExpression shape(R"(^epoch [1-3]/3  \[[#.]{10}\]  [1-4]/4  [-0-9.]+ img/s  data [-0-9]+%  ETA \S+, run \S+  )"
                                   R"(D [0-9.]+ G [0-9.]+  D\(x\) [0-9.]+ D\(G\(z\)\) [0-9.]+  elapsed \S+$)");
    for (const QString& line : lines) QVERIFY2(shape.match(line).hasMatch(), qPrintable(line));
    for (int epoch = 1; epoch <= 3; ++epoch)
      QVERIFY2(QRegularExpression(QString(R"((^|[\r\n])epoch %1/3  step %2  loss_d [0-9.]+  loss_g [0-9.]+  [0-9.]+ s\r\n)")
                                      .arg(epoch).arg(4 * epoch)).match(out).hasMatch(), qPrintable(out));
    QVERIFY2(out.contains("\r\ntraining completed; run directory: "), qPrintable(out));
    // Every row a line owns is cleared of the status line first: no summary follows a figure.
    QVERIFY2(!out.contains(QRegularExpression(R"([0-9s%]epoch [0-9]+/3  step)")), qPrintable(out));
  }

  // 80 columns: the line never wraps (at most 79 characters), and keeps the ETA.
  void narrowTerminal() {
    QProcess script;
    script.start("script", onATerminal(trainArgs(tiny_, dir_.path() + "/narrow", 2), 80));
    QVERIFY(script.waitForFinished(600000));
    QCOMPARE(script.exitCode(), 0);
    const QStringList lines = liveLines(QString::fromUtf8(script.readAllStandardOutput()));
    QVERIFY(!lines.isEmpty());
    for (const QString& line : lines) {
      QVERIFY2(line.size() <= 79, qPrintable(line));
      QVERIFY2(line.contains("ETA "), qPrintable(line));
    }
  }

  // A steady run of about 20 s (one rank, one thread, 20 steps an epoch): the run ETA shown at
  // 30–60% of the steps predicts the end within a factor of 2.5 of the time that was left, give
  // or take 3 s (the last checkpoint and samples). Wide, because ctest runs two suites at once
  // and another suite's start or end changes this run's speed; wide enough still to catch an ETA
  // in the wrong unit or one that leaves out the epochs after this one (a factor of 3 here).
  // Its accuracy on a quiet machine is measured, not asserted: the suite prints each run's figures.
  void etaComesTrue() {
    const QString data = dir_.path() + "/steady";
    const auto rendered = runCli({"demo-data", "--out", data, "--cities", "1", "--sequences", "4", "--frames", "40", "--seed", "2"});
    QVERIFY2(rendered.exit_code == 0, qPrintable(rendered.err));
    const QStringList args = {"train", "--dataroot", data, "--run-dir", dir_.path() + "/steady-run", "--epochs", "3",
                              "--seed", "7", "--threads", "1", "--device", "cpu", "-t", R"({"batch_size":8,"ngf":32,"ndf":32})",
                              "-c", R"({"log_frequency":1,"save_frequency":100})"};
    QProcess script;
    QElapsedTimer clock;
    struct Seen { double at_s; QString line; };
    QList<Seen> seen;
    QString pending;
    connect(&script, &QProcess::readyReadStandardOutput, this, [&] {
      pending += QString::fromUtf8(script.readAllStandardOutput());
      const int cut = std::max(pending.lastIndexOf('\r'), pending.lastIndexOf('\n'));
      if (cut < 0) return;
      for (const QString& line : liveLines(pending.left(cut + 1))) seen.push_back({clock.elapsed() / 1000.0, line});
      pending = pending.mid(cut + 1);
    });
    clock.start();
    script.start("script", onATerminal(args, 200));
    QVERIFY(script.waitForFinished(600000));
    const double end_s = clock.elapsed() / 1000.0;
    QCOMPARE(script.exitCode(), 0);
    // epoch e/3, step i/n: the share of the run's steps done.
    const QRegularExpression figures(R"(^epoch (\d)/3  \S+  (\d+)/(\d+) .* run (\S+))");
    const QRegularExpression duration(R"(^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$)");
    bool checked = false;
    for (const Seen& s : seen) {
      const auto m = figures.match(s.line);
      if (!m.hasMatch()) continue;
      const double done = ((m.captured(1).toInt() - 1) * m.captured(3).toDouble() + m.captured(2).toDouble()) /
                          (3 * m.captured(3).toDouble());
      if (done < 0.3 || done > 0.6) continue;
      const auto d = duration.match(m.captured(4));
      if (!d.hasMatch()) continue;
      const double eta = d.captured(1).toDouble() * 3600 + d.captured(2).toDouble() * 60 + d.captured(3).toDouble();
      const double left = end_s - s.at_s, predicted = eta;
      const QString said = QString("at %1 s (%2% done) the ETA said %3 s; the run ended %4 s later")
                               .arg(s.at_s).arg(done * 100).arg(predicted).arg(left);
      qInfo("%s", qPrintable(said));
      QVERIFY2(predicted >= left / 2.5 - 3.0 && predicted <= 2.5 * left + 3.0, qPrintable(said));
      checked = true;
      break;
    }
    QVERIFY2(checked, "no status line between 30% and 60% of the run");
  }

  // Not a terminal: a plain line every --progress-every seconds, no carriage return at all;
  // by default (30 s) a short run shows only its epoch lines.
  void plainLinesWithoutATerminal() {
    QStringList args = trainArgs(tiny_, dir_.path() + "/plain", 3);
    const auto every = runCli(args + QStringList{"--progress-every", "0.2"});
    QVERIFY2(every.exit_code == 0, qPrintable(every.err));
    QVERIFY(!every.err.contains('\r'));
    const QRegularExpression plain(R"(^\[\S+\] epoch [1-3]/3  step [1-4]/4 \(\d+%\)  \S+ img/s  data wait \S+%  loss_d \S+  )"
                                   R"(loss_g \S+  D\(x\) \S+  D\(G\(z\)\) \S+  epoch ETA \S+  run ETA \S+$)",
                                   QRegularExpression::MultilineOption);
    QVERIFY2(plain.match(every.err).hasMatch(), qPrintable(every.err));
    QVERIFY2(every.err.contains("epoch 3/3  step 12"), qPrintable(every.err));

    const auto by_default = runCli(trainArgs(tiny_, dir_.path() + "/plain-default", 2));
    QVERIFY2(by_default.exit_code == 0, qPrintable(by_default.err));
    QVERIFY(!by_default.err.contains('\r'));
    QVERIFY2(!by_default.err.contains("img/s"), qPrintable(by_default.err));
    QVERIFY2(by_default.err.contains("epoch 2/2  step 8"), qPrintable(by_default.err));
  }

  // Two ranks on one terminal: rank 0 alone draws the line and writes the epoch lines.
  void rankZeroAlone() {
    QProcess script;
    script.start("script", onATerminal(trainArgs(tiny_, dir_.path() + "/ranks", 2) + QStringList{"--nproc", "2"}, 200));
    QVERIFY(script.waitForFinished(600000));
    const QString out = QString::fromUtf8(script.readAllStandardOutput());
    QVERIFY2(script.exitCode() == 0, qPrintable(out));
    QVERIFY2(!liveLines(out).isEmpty(), qPrintable(out));
    QCOMPARE(out.count(QRegularExpression(R"(epoch 1/2  step \d+  loss_d)")), 1);
    QCOMPARE(out.count(QRegularExpression(R"(epoch 2/2  step \d+  loss_d)")), 1);
    QCOMPARE(out.count("training completed"), 1);
    QVERIFY2(!out.contains("(rank 1)"), qPrintable(out));
  }

  // --quiet: the final line alone; on a failure, the error alone; never with --progress-every.
  void quiet() {
    const QString run = dir_.path() + "/quiet";
    const auto done = runCli(trainArgs(tiny_, run, 2) + QStringList{"--quiet"});
    QCOMPARE(done.exit_code, 0);
    QCOMPARE(done.err, "training completed; run directory: " + run + "\n");
    QProcess script;
    script.start("script", onATerminal(trainArgs(tiny_, dir_.path() + "/quiet-tty", 1) + QStringList{"--quiet"}, 200));
    QVERIFY(script.waitForFinished(600000));
    QCOMPARE(QString::fromUtf8(script.readAllStandardOutput()),
             "training completed; run directory: " + dir_.path() + "/quiet-tty\r\n");
    const auto failed = runCli(trainArgs(dir_.path() + "/no-data", dir_.path() + "/quiet-failed", 1) + QStringList{"--quiet"});
    QVERIFY(failed.exit_code != 0);
    QCOMPARE(failed.err.count('\n'), 1);
    QVERIFY2(failed.err.startsWith("streetgan train: "), qPrintable(failed.err));
    const auto both = runCli(trainArgs(tiny_, dir_.path() + "/both", 1) + QStringList{"--quiet", "--progress-every", "5"});
    QCOMPARE(both.exit_code, 2);
    QCOMPARE(both.err, QString("streetgan train: --progress-every cannot go with --quiet (which prints no status lines)\n"));
    const auto zero = runCli(trainArgs(tiny_, dir_.path() + "/zero", 1) + QStringList{"--progress-every", "0"});
    QCOMPARE(zero.exit_code, 2);
    QCOMPARE(zero.err, QString("streetgan train: option '--progress-every': '0' is not allowed; allowed: a number above 0 and at most 86400\n"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestTrainProgress)
#include "tst_train_progress.moc"
