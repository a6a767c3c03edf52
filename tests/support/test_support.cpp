#include "tests/support/test_support.h"

#include "tests/support/test_device.h"

#include <QDir>
#include <QEventLoop>
#include <QThread>
#include <QFile>
#include <QJsonDocument>
#include <QtTest>

namespace streetgan::test {

CliResult runCli(const QStringList& args, int timeout_ms) {
  QProcess process;
  process.start(STREETGAN_CLI, args);
  CliResult result;
  if (!process.waitForStarted(30000)) return result;
  if (!process.waitForFinished(timeout_ms)) {
    process.kill();
    process.waitForFinished();
  }
  result.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  result.out = QString::fromUtf8(process.readAllStandardOutput());
  result.err = QString::fromUtf8(process.readAllStandardError());
  return result;
}

QString makeTinyDataset(const QString& dir) {
  const QString root = dir + "/data";
  if (!QDir(root + "/train_val").exists()) {
    const auto r = runCli({"demo-data", "--out", root, "--cities", "1", "--sequences", "4",
                           "--frames", "8", "--seed", "5"});
    if (r.exit_code != 0) qFatal("demo-data failed: %s", qPrintable(r.err));
  }
  return root;
}

QString testThreadsText() { return QString::number(testThreads()); }

QStringList tinyTrainArgs(const QString& dataroot, const QString& run_dir, int epochs) {
  return {"train", "--dataroot", dataroot, "--run-dir", run_dir, "--epochs",
          QString::number(epochs), "--seed", "7", "--threads", testThreadsText(), "--device",
          QString::fromStdString(testDeviceName()), "-t",
          R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16})", "-c",
          R"({"log_frequency":3,"save_frequency":1,"keep_checkpoints":10})"};
}

QList<QPair<QString, QString>> tinyFormEntries(int epochs) {
  return {{"batch_size", "8"}, {"ngf", "8"}, {"ndf", "8"}, {"nz", "16"}, {"epochs", QString::number(epochs)},
          {"log_frequency", "3"}, {"save_frequency", "1"}, {"seed", "7"}, {"threads", testThreadsText()}, {"sample_count", "16"}};
}

QByteArray readFileBytes(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QVector<QJsonObject> readEvents(const QString& run_dir) {
  QVector<QJsonObject> events;
  QFile file(run_dir + "/events.jsonl");
  if (!file.open(QIODevice::ReadOnly)) return events;
  for (const QByteArray& line : file.readAll().split('\n')) {
    if (line.trimmed().isEmpty()) continue;
    QJsonParseError error;
    const auto doc = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
      qFatal("events.jsonl line is not a JSON object: %s", line.constData());
    events.push_back(doc.object());
  }
  return events;
}

QVector<QJsonObject> eventsOfType(const QVector<QJsonObject>& events, const QString& type) {
  QVector<QJsonObject> out;
  for (const auto& e : events)
    if (e.value("type").toString() == type) out.push_back(e);
  return out;
}

bool writeScript(const QString& path, const QByteArray& body) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write("#!/bin/sh\n" + body) < 0) return false;
  file.close();
  return file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
}

TimerLatenessProbe::TimerLatenessProbe() {
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(10);
  QObject::connect(&timer_, &QTimer::timeout, [this] {
    const qint64 now = clock_.nsecsElapsed();
    if (ticks_++ > 0) worst_ns_ = std::max(worst_ns_, now - last_ns_ - 10'000'000);
    last_ns_ = now;
  });
}

TimerLatenessProbe::~TimerLatenessProbe() { stop(); }

void TimerLatenessProbe::start() {
  last_ns_ = worst_ns_ = 0;
  ticks_ = 0;
  control_worst_ns_ = 0;
  clock_.start();
  timer_.start();
  // The control: the same 10 ms timer in a thread that does nothing else.
  control_ = QThread::create([this] {
    QEventLoop loop;
    QTimer control;
    QElapsedTimer clock;
    qint64 last = 0;
    int ticks = 0;
    control.setTimerType(Qt::PreciseTimer);
    control.setInterval(10);
    QObject::connect(&control, &QTimer::timeout, [&] {
      const qint64 now = clock.nsecsElapsed();
      if (ticks++ > 0) control_worst_ns_ = std::max(control_worst_ns_.load(), now - last - 10'000'000);
      last = now;
      if (QThread::currentThread()->isInterruptionRequested()) loop.quit();
    });
    clock.start();
    control.start();
    loop.exec();
  });
  control_->start();
}

void TimerLatenessProbe::stop() {
  timer_.stop();
  if (control_) {
    control_->requestInterruption();
    control_->wait();
    delete control_;
    control_ = nullptr;
  }
}

QString testOutputDir() {
  QDir().mkpath(STREETGAN_TEST_OUTPUT);
  return STREETGAN_TEST_OUTPUT;
}

}  // namespace streetgan::test
