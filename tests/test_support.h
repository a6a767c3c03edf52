#pragma once
// Helpers shared by the tests that drive the real `streetgan` program.
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QVector>

namespace streetgan::test {

struct CliResult {
  int exit_code = -1;
  QString out;
  QString err;
};

/// Runs `streetgan args...` to completion (up to `timeout_ms`).
CliResult runCli(const QStringList& args, int timeout_ms = 600000);

/// A 32-image MSLS-layout demo data set, rendered once per test process into `dir`.
QString makeTinyDataset(const QString& dir);

/// The arguments of a tiny, fast training run (batch 8, ngf/ndf 8, nz 16).
QStringList tinyTrainArgs(const QString& dataroot, const QString& run_dir, int epochs);

/// Every event line of a run's events.jsonl, parsed.
QVector<QJsonObject> readEvents(const QString& run_dir);
/// Only the events of `type`.
QVector<QJsonObject> eventsOfType(const QVector<QJsonObject>& events, const QString& type);

/// Writes an executable shell script (a stand-in program for a test); false when it cannot.
bool writeScript(const QString& path, const QByteArray& body);

/// Folder for files a person may want to look at after the tests (screenshots, samples).
QString testOutputDir();

}  // namespace streetgan::test
