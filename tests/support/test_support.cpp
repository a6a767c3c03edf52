#include "tests/support/test_support.h"

#include "tests/support/test_device.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QtTest>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace streetgan::test {

CliResult runCli(const QStringList& args, int timeout_ms) { return runProgram(STREETGAN_CLI, args, timeout_ms); }

CliResult runProgram(const QString& program, const QStringList& args, int timeout_ms) {
  QProcess process;
  process.start(program, args);
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

namespace {

// Copies the files under `from` to `to` (created), folders included; false on any failure.
bool copyTree(const QString& from, const QString& to) {
  QDirIterator it(from, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    const QString target = to + "/" + QDir(from).relativeFilePath(path);
    if (!QDir().mkpath(QFileInfo(target).absolutePath()) || !QFile::copy(path, target)) return false;
  }
  return true;
}

}  // namespace

// demo-data is deterministic (tst_cli's demoDataIsDeterministic), and some 40 suites each started
// the engine to render the same 32 images: the first renders them once per build of the engine
// into the build folder's test cache (a folder of its own, renamed into place, so that suites
// running side by side never see half of it) and every suite copies them.
QString makeTinyDataset(const QString& dir) {
  const QString root = dir + "/data";
  if (QDir(root + "/train_val").exists()) return root;
  const QFileInfo engine(STREETGAN_CLI_ENGINE);
  const QString cache = QString(STREETGAN_TEST_CACHE) + "/tiny-data-" + QString::number(engine.size()) + "-" +
                        QString::number(engine.lastModified().toMSecsSinceEpoch());
  if (!QDir(cache + "/train_val").exists()) {
    const QString staging = cache + ".rendering-" + QString::number(QCoreApplication::applicationPid());
    QDir(staging).removeRecursively();
    if (!QDir().mkpath(STREETGAN_TEST_CACHE)) qFatal("cannot create %s", STREETGAN_TEST_CACHE);
    const auto r = runCli({"demo-data", "--out", staging, "--cities", "1", "--sequences", "4", "--frames", "8", "--seed", "5"});
    if (r.exit_code != 0) qFatal("demo-data failed: %s", qPrintable(r.err));
    // Another suite may have put its copy in place first: then ours goes.
    if (::rename(QFile::encodeName(staging).constData(), QFile::encodeName(cache).constData()) != 0)
      QDir(staging).removeRecursively();
  }
  if (!copyTree(cache, root)) qFatal("cannot copy the tiny data set from %s to %s", qPrintable(cache), qPrintable(root));
  return root;
}

QString testThreadsText() { return QString::number(testThreads()); }

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  if (fd >= 0) ::close(fd);
  if (port == 0) qFatal("no free port on 127.0.0.1");
  return port;
}

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

bool writeEventFloodScript(const QString& path) {
  return writeScript(path,
      "printf '{\"v\":1,\"type\":\"run_started\",\"time\":0,\"device\":\"cpu\",\"config\":{\"epochs\":1}}\\n'\n"
      "i=0\n"
      "while [ $i -lt 10000 ]; do\n"
      "  j=0\n"
      "  while [ $j -lt 100 ]; do\n"
      "    i=$((i+1)); j=$((j+1))\n"
      "    printf '{\"v\":1,\"type\":\"step\",\"time\":%d,\"epoch\":1,\"iteration\":%d,\"iterations\":10000,"
      "\"step\":%d,\"images_seen\":%d,\"loss_d\":0.%d,\"loss_g\":1.%d,\"d_x\":0.7,\"d_g_z1\":0.3,\"d_g_z2\":0.2,"
      "\"images_per_s\":500,\"data_wait_fraction\":0.01}\\n' $i $i $i $((i*64)) $((i%97)) $((i%89))\n"
      "  done\n"
      "  sleep 0.045\n"
      "done\n"
      "printf '{\"v\":1,\"type\":\"run_finished\",\"status\":\"completed\"}\\n'\n");
}

QStringList writeLongRuns(const QString& dir, int count, int steps) {
  QStringList runs;
  for (int r = 0; r < count; ++r) {
    const QString run = dir + QString("/earlier-%1").arg(r);
    if (!QDir().mkpath(run)) return {};
    QFile log(run + "/events.jsonl");
    if (!log.open(QIODevice::WriteOnly)) return {};
    QByteArray bytes = "{\"v\":1,\"type\":\"run_started\",\"time\":0,\"device\":\"cpu\",\"config\":{\"epochs\":1,\"batch_size\":64}}\n";
    for (int i = 1; i <= steps; ++i)
      bytes += QString("{\"v\":1,\"type\":\"step\",\"time\":%1,\"epoch\":1,\"iteration\":%2,\"iterations\":%7,\"step\":%2,"
                       "\"images_seen\":%3,\"loss_d\":0.%4,\"loss_g\":1.%5,\"d_x\":0.7,\"d_g_z1\":0.3,\"d_g_z2\":0.2,"
                       "\"images_per_s\":%6,\"data_wait_fraction\":0.01}\n")
                   .arg(i * 0.1).arg(i).arg(i * 64).arg(i % 97).arg(i % 89).arg(400 + 50 * r).arg(steps).toUtf8();
    if (log.write(bytes) != bytes.size()) return {};
    runs << run;
  }
  return runs;
}

QString testOutputDir() {
  QDir().mkpath(STREETGAN_TEST_OUTPUT);
  return STREETGAN_TEST_OUTPUT;
}

QList<qint64> childrenOf(qint64 parent) {
  QList<qint64> out;
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
    bool numeric = false;
    const qint64 pid = entry.toLongLong(&numeric);
    if (!numeric) continue;
    const QByteArray stat = readFileBytes("/proc/" + entry + "/stat");
    const int close = stat.lastIndexOf(')');
    if (close < 0) continue;
    const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
    if (fields.size() > 1 && fields[1].toLongLong() == parent) out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool catchesSignal(qint64 pid, int signal_number) {
  for (const QByteArray& line : readFileBytes("/proc/" + QString::number(pid) + "/status").split('\n')) {
    if (!line.startsWith("SigCgt:")) continue;
    bool ok = false;
    const qulonglong mask = line.mid(7).trimmed().toULongLong(&ok, 16);
    return ok && signal_number >= 1 && signal_number <= 64 && (mask >> (signal_number - 1) & 1u) != 0;
  }
  return false;
}

QByteArray liveStartTime(qint64 pid) {
  const QByteArray stat = readFileBytes("/proc/" + QString::number(pid) + "/stat");
  const int close = stat.lastIndexOf(')');
  if (close < 0) return {};
  const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return {};
  return fields[19];
}

QStringList waitUntilGone(const QList<QPair<qint64, QByteArray>>& processes) {
  QStringList left;
  QElapsedTimer clock;
  clock.start();
  for (;;) {
    left.clear();
    for (const auto& [pid, start] : processes)
      if (!start.isEmpty() && liveStartTime(pid) == start) left << QString::number(pid);
    if (left.isEmpty() || clock.elapsed() > 60000) break;
    QTest::qWait(100);
  }
  for (const auto& [pid, start] : processes)
    if (!start.isEmpty() && liveStartTime(pid) == start) ::kill(static_cast<pid_t>(pid), SIGKILL);
  return left;
}

}  // namespace streetgan::test
