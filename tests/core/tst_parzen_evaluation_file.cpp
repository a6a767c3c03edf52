// ParzenEvaluationFile: evaluations/parzen-*.json byte for byte as `streetgan parzen --save` has
// always written it (golden files, and the former writer's code side by side), read back field for
// field, listed newest first, and every hostile file refused with an error naming the file and key.
#include "core/runs/parzen_evaluation_file.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

using namespace streetgan;
using json = nlohmann::json;

namespace {

ParzenEvaluation checkpointResult() {
  ParzenEvaluation e;
  e.kind = ParzenEvaluation::Kind::Checkpoint;
  e.sigma = 0.5;
  e.curve = {{0.1, -2000.0}, {0.5, -1500.75}};
  e.mean_ll = -1234.5;
  e.stderr_ll = 12.25;
  e.n_test = 4;
  e.n_valid = 3;
  e.n_samples = 64;
  e.dimensions = 12288;
  e.samples_seconds = 1.5;
  e.estimator_seconds = 0.25;
  e.checkpoint = ParzenEvaluation::Checkpoint{"step-00000120.pt", 2, 120, 960};
  e.time = 1700000000.5;
  return e;
}

ParzenEvaluation runResult() {
  ParzenEvaluation e;
  e.kind = ParzenEvaluation::Kind::Run;
  e.sigma = 0.5;
  e.sigma_given = true;
  ParzenEvaluation::CheckpointScore first;
  first.checkpoint = {"step-1.pt", 0, 8, 64};
  first.mean_ll = -1800.5;
  first.stderr_ll = 20.0;
  first.n_test = 4;
  ParzenEvaluation::CheckpointScore second;
  second.checkpoint = {"step-2.pt", 1, 16, 128};
  second.mean_ll = -1700.25;
  second.stderr_ll = 18.5;
  second.n_test = 4;
  e.checkpoints = {first, second};
  e.time = 1700000100.25;
  return e;
}

// The writer of app/cli/parzen_command.cpp before the format moved to core/eval, as it was.
std::string formerCheckpointFile(const ParzenEvaluation& e) {
  json out = {{"kind", "checkpoint"}, {"sigma", e.sigma}, {"mean_ll", e.mean_ll}, {"stderr", e.stderr_ll},
              {"n_test", e.n_test}, {"n_valid", e.n_valid}, {"n_samples", e.n_samples},
              {"dimensions", e.dimensions}, {"curve", json::array()},
              {"seconds", {{"samples", e.samples_seconds}, {"estimator", e.estimator_seconds}}}};
  for (const auto& point : e.curve) out["curve"].push_back({{"sigma", point.sigma}, {"mean_ll", point.mean_ll}});
  out["checkpoint"] = e.checkpoint->file;
  out["epoch"] = e.checkpoint->epoch;
  out["step"] = e.checkpoint->step;
  out["images_seen"] = e.checkpoint->images_seen;
  out["v"] = 1;
  out["time"] = e.time;
  return out.dump(2) + "\n";
}

std::string formerRunFile(const ParzenEvaluation& e) {
  json curve = json::array();
  for (const auto& point : e.curve) curve.push_back({{"sigma", point.sigma}, {"mean_ll", point.mean_ll}});
  json rows = json::array();
  for (const auto& row : e.checkpoints)
    rows.push_back({{"checkpoint", row.checkpoint.file}, {"epoch", row.checkpoint.epoch}, {"step", row.checkpoint.step},
                    {"images_seen", row.checkpoint.images_seen}, {"mean_ll", row.mean_ll},
                    {"stderr", row.stderr_ll}, {"n_test", row.n_test}});
  json result = {{"kind", "run"}, {"sigma", e.sigma}, {"sigma_given", e.sigma_given}, {"curve", curve}, {"checkpoints", rows}};
  result["v"] = 1;
  result["time"] = e.time;
  return result.dump(2) + "\n";
}

const char* kGoldenCheckpointFile = R"({
  "checkpoint": "step-00000120.pt",
  "curve": [
    {
      "mean_ll": -2000.0,
      "sigma": 0.1
    },
    {
      "mean_ll": -1500.75,
      "sigma": 0.5
    }
  ],
  "dimensions": 12288,
  "epoch": 2,
  "images_seen": 960,
  "kind": "checkpoint",
  "mean_ll": -1234.5,
  "n_samples": 64,
  "n_test": 4,
  "n_valid": 3,
  "seconds": {
    "estimator": 0.25,
    "samples": 1.5
  },
  "sigma": 0.5,
  "stderr": 12.25,
  "step": 120,
  "time": 1700000000.5,
  "v": 1
}
)";

const char* kGoldenRunFile = R"({
  "checkpoints": [
    {
      "checkpoint": "step-1.pt",
      "epoch": 0,
      "images_seen": 64,
      "mean_ll": -1800.5,
      "n_test": 4,
      "stderr": 20.0,
      "step": 8
    },
    {
      "checkpoint": "step-2.pt",
      "epoch": 1,
      "images_seen": 128,
      "mean_ll": -1700.25,
      "n_test": 4,
      "stderr": 18.5,
      "step": 16
    }
  ],
  "curve": [],
  "kind": "run",
  "sigma": 0.5,
  "sigma_given": true,
  "time": 1700000100.25,
  "v": 1
}
)";

void compareCheckpoint(const ParzenEvaluation::Checkpoint& a, const ParzenEvaluation::Checkpoint& b) {
  QCOMPARE(a.file, b.file);
  QCOMPARE(a.epoch, b.epoch);
  QCOMPARE(a.step, b.step);
  QCOMPARE(a.images_seen, b.images_seen);
}

// Every field, exactly (a double read back from our file is the double written).
void compareEvaluations(const ParzenEvaluation& a, const ParzenEvaluation& b) {
  QCOMPARE(int(a.kind), int(b.kind));
  QCOMPARE(a.sigma, b.sigma);
  QCOMPARE(a.curve.size(), b.curve.size());
  for (std::size_t i = 0; i < a.curve.size(); ++i) {
    QCOMPARE(a.curve[i].sigma, b.curve[i].sigma);
    QCOMPARE(a.curve[i].mean_ll, b.curve[i].mean_ll);
  }
  QCOMPARE(a.mean_ll, b.mean_ll);
  QCOMPARE(a.stderr_ll, b.stderr_ll);
  QCOMPARE(a.n_test, b.n_test);
  QCOMPARE(a.n_valid, b.n_valid);
  QCOMPARE(a.n_samples, b.n_samples);
  QCOMPARE(a.dimensions, b.dimensions);
  QCOMPARE(a.samples_seconds, b.samples_seconds);
  QCOMPARE(a.estimator_seconds, b.estimator_seconds);
  QCOMPARE(a.checkpoint.has_value(), b.checkpoint.has_value());
  if (a.checkpoint) compareCheckpoint(*a.checkpoint, *b.checkpoint);
  QCOMPARE(a.sigma_given, b.sigma_given);
  QCOMPARE(a.checkpoints.size(), b.checkpoints.size());
  for (std::size_t i = 0; i < a.checkpoints.size(); ++i) {
    compareCheckpoint(a.checkpoints[i].checkpoint, b.checkpoints[i].checkpoint);
    QCOMPARE(a.checkpoints[i].mean_ll, b.checkpoints[i].mean_ll);
    QCOMPARE(a.checkpoints[i].stderr_ll, b.checkpoints[i].stderr_ll);
    QCOMPARE(a.checkpoints[i].n_test, b.checkpoints[i].n_test);
  }
  QCOMPARE(a.version, b.version);
  QCOMPARE(a.time, b.time);
}

// A checkpoint file as JSON, with `edit` applied (a key removed, a value of the wrong type).
QByteArray editedFile(const ParzenEvaluation& e, const std::function<void(json&)>& edit) {
  json file = json::parse(ParzenEvaluationFile::fileText(e));
  edit(file);
  return QByteArray::fromStdString(file.dump(2));
}

}  // namespace

class TestParzenEvaluationFile : public QObject {
  Q_OBJECT
private slots:
  void init() { QVERIFY(dir_.isValid()); }

  void goldenCheckpointFile();
  void goldenRunFile();
  void sameBytesAsTheFormerWriter_data();
  void sameBytesAsTheFormerWriter();
  void roundTrip_data();
  void roundTrip();
  void notFiniteIsNullAndReadsAsNaN();
  void outputHasNoStamp();
  void writeStampsAndCreatesTheFolder();
  void listsNewestFirst();
  void missingKey_data();
  void missingKey();
  void wrongType_data();
  void wrongType();
  void notJson_data();
  void notJson();
  void notARegularFile();
  void tooLarge();
  void unknownKeysAreIgnored();
  void best();

private:
  QString write(const QString& name, const QByteArray& bytes) {
    const QString path = dir_.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    file.write(bytes);
    return path;
  }
  // read() must fail with an error that begins with the file and contains `expected`.
  void expectError(const QString& path, const QString& expected) {
    const auto read = ParzenEvaluationFile::read(path.toStdString());
    QVERIFY2(!read.ok(), qPrintable(path));
    const QString error = QString::fromStdString(read.error());
    QVERIFY2(error.startsWith(path + ": "), qPrintable(error));
    QVERIFY2(error.contains(expected), qPrintable(error + "\n  expected: " + expected));
  }

  QTemporaryDir dir_;
};

void TestParzenEvaluationFile::goldenCheckpointFile() {
  QCOMPARE(QString::fromStdString(ParzenEvaluationFile::fileText(checkpointResult())), QString(kGoldenCheckpointFile));
}

void TestParzenEvaluationFile::goldenRunFile() {
  QCOMPARE(QString::fromStdString(ParzenEvaluationFile::fileText(runResult())), QString(kGoldenRunFile));
}

void TestParzenEvaluationFile::sameBytesAsTheFormerWriter_data() {
  QTest::addColumn<bool>("run");
  QTest::addColumn<double>("value");  // put into every double, to vary the number formatting
  for (double value : {0.0, -0.0, 1.0, 1e-7, 123456789.125, -3.3333333333333335, 1e300,
                       std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    QTest::addRow("checkpoint %g", value) << false << value;
    QTest::addRow("run %g", value) << true << value;
  }
}

void TestParzenEvaluationFile::sameBytesAsTheFormerWriter() {
  QFETCH(bool, run);
  QFETCH(double, value);
  ParzenEvaluation e = run ? runResult() : checkpointResult();
  e.sigma = value;
  e.mean_ll = value;
  e.time = value;
  e.curve.push_back({value, value});
  if (run) {
    e.checkpoints.back().mean_ll = value;
    e.checkpoints.back().stderr_ll = value;
  } else {
    e.estimator_seconds = value;
  }
  const std::string expected = run ? formerRunFile(e) : formerCheckpointFile(e);
  QCOMPARE(QString::fromStdString(ParzenEvaluationFile::fileText(e)), QString::fromStdString(expected));
}

void TestParzenEvaluationFile::roundTrip_data() {
  QTest::addColumn<int>("which");
  QTest::newRow("one checkpoint") << 0;
  QTest::newRow("every checkpoint, sigma given") << 1;
  QTest::newRow("every checkpoint, sigma chosen") << 2;
  QTest::newRow("no checkpoint rows") << 3;
}

void TestParzenEvaluationFile::roundTrip() {
  QFETCH(int, which);
  ParzenEvaluation e = which == 0 ? checkpointResult() : runResult();
  if (which == 2) {
    e.sigma_given = false;
    e.curve = {{0.1, -1.0 / 3}, {0.2, 2e-9}, {0.5, -123456.789}};
  }
  if (which == 3) e.checkpoints.clear();
  const QString path = write("parzen-x.json", QByteArray::fromStdString(ParzenEvaluationFile::fileText(e)));
  const auto read = ParzenEvaluationFile::read(path.toStdString());
  QVERIFY2(read.ok(), read.error().c_str());
  compareEvaluations(*read, e);
  // The object --json prints reads back too, all but the stamp.
  const auto output = ParzenEvaluationFile::fromJson(ParzenEvaluationFile::toJson(e), "output");
  QVERIFY2(output.ok(), output.error().c_str());
  ParzenEvaluation unstamped = e;
  unstamped.time = 0;
  compareEvaluations(*output, unstamped);
  // And writing what was read gives the same bytes.
  QCOMPARE(ParzenEvaluationFile::fileText(*read), ParzenEvaluationFile::fileText(e));
}

void TestParzenEvaluationFile::notFiniteIsNullAndReadsAsNaN() {
  ParzenEvaluation e = checkpointResult();
  e.mean_ll = std::numeric_limits<double>::quiet_NaN();
  e.curve.front().mean_ll = -std::numeric_limits<double>::infinity();
  const std::string text = ParzenEvaluationFile::fileText(e);
  QVERIFY(text.find("\"mean_ll\": null") != std::string::npos);
  const auto read = ParzenEvaluationFile::read(write("parzen-nan.json", QByteArray::fromStdString(text)).toStdString());
  QVERIFY2(read.ok(), read.error().c_str());
  QVERIFY(std::isnan(read->mean_ll));
  QVERIFY(std::isnan(read->curve.front().mean_ll));
  QVERIFY(!read->best().has_value());
}

void TestParzenEvaluationFile::outputHasNoStamp() {
  for (const ParzenEvaluation& e : {checkpointResult(), runResult()}) {
    const json output = ParzenEvaluationFile::toJson(e);
    QVERIFY(!output.contains("v"));
    QVERIFY(!output.contains("time"));
  }
  // --samples: no checkpoint, so none of its keys.
  ParzenEvaluation samples = checkpointResult();
  samples.checkpoint.reset();
  const json output = ParzenEvaluationFile::toJson(samples);
  for (const char* key : {"checkpoint", "epoch", "step", "images_seen"}) QVERIFY2(!output.contains(key), key);
  const auto read = ParzenEvaluationFile::fromJson(output, "output");
  QVERIFY2(read.ok(), read.error().c_str());
  QVERIFY(!read->checkpoint.has_value());
  // A stamp that is there must be ours.
  json later = output;
  later["v"] = 2;
  const auto refused = ParzenEvaluationFile::fromJson(later, "output");
  QVERIFY(!refused.ok());
  QCOMPARE(QString::fromStdString(refused.error()), QString("output: \"v\" is 2; this program reads version 1 of the format"));
}

void TestParzenEvaluationFile::writeStampsAndCreatesTheFolder() {
  const std::string run = dir_.filePath("run").toStdString();
  QVERIFY(QDir().mkpath(dir_.filePath("run")));
  ParzenEvaluation e = checkpointResult();
  e.version = 7;
  e.time = 0;
  const double before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const Status written = ParzenEvaluationFile::write(run, "step-00000120", e);
  QVERIFY2(written.ok(), written.error().c_str());
  const std::string path = ParzenEvaluationFile::path(run, "step-00000120");
  QCOMPARE(QString::fromStdString(path), dir_.filePath("run/evaluations/parzen-step-00000120.json"));
  QCOMPARE(QDir(dir_.filePath("run/evaluations")).entryList(QDir::Files), QStringList{"parzen-step-00000120.json"});
  const auto read = ParzenEvaluationFile::read(path);
  QVERIFY2(read.ok(), read.error().c_str());
  QCOMPARE(read->version, 1);
  QVERIFY(read->time >= before - 1 && read->time <= before + 60);
  ParzenEvaluation expected = e;
  expected.version = 1;
  expected.time = read->time;
  compareEvaluations(*read, expected);
  // A run folder that is a file: the folder cannot be made, and the error says which.
  const QString blocked = write("blocked", "x");
  const Status refused = ParzenEvaluationFile::write(blocked.toStdString(), "run", runResult());
  QVERIFY(!refused.ok());
  QVERIFY2(QString::fromStdString(refused.error()).startsWith(blocked + "/evaluations: cannot create the folder ("),
           refused.error().c_str());
}

void TestParzenEvaluationFile::listsNewestFirst() {
  namespace fs = std::filesystem;
  using namespace std::chrono_literals;
  const QString folder = dir_.filePath("listed/evaluations");
  QVERIFY(QDir().mkpath(folder));
  for (const char* name : {"parzen-a.json", "parzen-b.json", "parzen-c.json", "other.json", "parzen-x.json.12.tmp"})
    QVERIFY(!write(QString("listed/evaluations/") + name, "{}").isEmpty());
  QVERIFY(QDir().mkpath(folder + "/parzen-folder.json"));
  QCOMPARE(::mkfifo(QFile::encodeName(folder + "/parzen-fifo.json").constData(), 0600), 0);
  const fs::path root = folder.toStdString();
  const auto base = fs::last_write_time(root / "parzen-a.json");
  fs::last_write_time(root / "parzen-a.json", base + 10s);
  fs::last_write_time(root / "parzen-b.json", base + 20s);
  fs::last_write_time(root / "parzen-c.json", base + 10s);  // as new as a: then by name
  QStringList listed;
  for (const std::string& path : ParzenEvaluationFile::list(dir_.filePath("listed").toStdString()))
    listed << QString::fromStdString(path);
  QCOMPARE(listed, (QStringList{folder + "/parzen-b.json", folder + "/parzen-a.json", folder + "/parzen-c.json"}));
  QVERIFY(ParzenEvaluationFile::list(dir_.filePath("no-such-run").toStdString()).empty());
}

void TestParzenEvaluationFile::missingKey_data() {
  QTest::addColumn<bool>("run");
  QTest::addColumn<QString>("object");  // "" (the top level), "seconds" or "checkpoints" (its first row)
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("expected");
  for (const char* key : {"v", "time", "kind", "sigma", "curve", "mean_ll", "stderr", "n_test", "n_valid",
                          "n_samples", "dimensions", "seconds", "epoch", "step", "images_seen"})
    QTest::addRow("checkpoint: %s", key) << false << "" << key << QString("\"%1\" is missing").arg(key);
  for (const char* key : {"samples", "estimator"})
    QTest::addRow("checkpoint: seconds.%s", key) << false << "seconds" << key
                                                 << QString("seconds: \"%1\" is missing").arg(key);
  for (const char* key : {"sigma_given", "checkpoints", "curve"})
    QTest::addRow("run: %s", key) << true << "" << key << QString("\"%1\" is missing").arg(key);
  for (const char* key : {"checkpoint", "epoch", "step", "images_seen", "mean_ll", "stderr", "n_test"})
    QTest::addRow("run: row %s", key) << true << "checkpoints" << key
                                      << QString("checkpoints[0]: \"%1\" is missing").arg(key);
}

void TestParzenEvaluationFile::missingKey() {
  QFETCH(bool, run);
  QFETCH(QString, object);
  QFETCH(QString, key);
  QFETCH(QString, expected);
  const QByteArray bytes = editedFile(run ? runResult() : checkpointResult(), [&](json& file) {
    json& holder = object.isEmpty() ? file : object == "seconds" ? file["seconds"] : file["checkpoints"][0];
    holder.erase(key.toStdString());
  });
  const QString path = write("parzen-missing.json", bytes);
  expectError(path, expected);
  const auto read = ParzenEvaluationFile::read(path.toStdString());
  QCOMPARE(QString::fromStdString(read.error()), path + ": " + expected);
}

void TestParzenEvaluationFile::wrongType_data() {
  QTest::addColumn<bool>("run");
  QTest::addColumn<QString>("pointer");  // a JSON pointer into the file
  QTest::addColumn<QByteArray>("value");
  QTest::addColumn<QString>("expected");
  QTest::newRow("sigma a string") << false << "/sigma" << QByteArray(R"("0.5")") << R"("sigma" must be a number)";
  QTest::newRow("mean_ll true") << false << "/mean_ll" << QByteArray("true") << R"("mean_ll" must be a number)";
  QTest::newRow("n_test a float") << false << "/n_test" << QByteArray("1e300") << R"("n_test" must be an integer)";
  QTest::newRow("n_valid past int64") << false << "/n_valid" << QByteArray("18446744073709551615")
                                      << R"("n_valid" must be an integer)";
  QTest::newRow("epoch a string") << false << "/epoch" << QByteArray(R"("2")") << R"("epoch" must be an integer)";
  QTest::newRow("checkpoint a number") << false << "/checkpoint" << QByteArray("3") << R"("checkpoint" must be a string)";
  QTest::newRow("kind a number") << false << "/kind" << QByteArray("1") << R"("kind" must be a string)";
  QTest::newRow("kind unknown") << false << "/kind" << QByteArray(R"("fid")") << R"("kind" must be "checkpoint" or "run")";
  QTest::newRow("v a string") << false << "/v" << QByteArray(R"("1")") << R"("v" must be an integer)";
  QTest::newRow("v later") << false << "/v" << QByteArray("2") << R"("v" is 2; this program reads version 1 of the format)";
  QTest::newRow("time a list") << false << "/time" << QByteArray("[]") << R"("time" must be a number)";
  QTest::newRow("curve an object") << false << "/curve" << QByteArray("{}") << R"("curve" must be a list)";
  QTest::newRow("curve point a number") << false << "/curve/1" << QByteArray("4") << "curve[1] must be an object";
  QTest::newRow("curve sigma an object") << false << "/curve/0/sigma" << QByteArray(R"({"x": 1})")
                                    << R"(curve[0]: "sigma" must be a number)";
  QTest::newRow("seconds a number") << false << "/seconds" << QByteArray("2.5") << R"("seconds" must be an object)";
  QTest::newRow("seconds.samples a string") << false << "/seconds/samples" << QByteArray(R"("fast")")
                                            << R"(seconds: "samples" must be a number)";
  QTest::newRow("sigma_given a number") << true << "/sigma_given" << QByteArray("1") << R"("sigma_given" must be true or false)";
  QTest::newRow("checkpoints an object") << true << "/checkpoints" << QByteArray("{}") << R"("checkpoints" must be a list)";
  QTest::newRow("row a list") << true << "/checkpoints/1" << QByteArray("[]") << "checkpoints[1] must be an object";
  QTest::newRow("row epoch a float") << true << "/checkpoints/1/epoch" << QByteArray("-1e30")
                                     << R"(checkpoints[1]: "epoch" must be an integer)";
  QTest::newRow("row stderr a string") << true << "/checkpoints/0/stderr" << QByteArray(R"("x")")
                                       << R"(checkpoints[0]: "stderr" must be a number)";
}

void TestParzenEvaluationFile::wrongType() {
  QFETCH(bool, run);
  QFETCH(QString, pointer);
  QFETCH(QByteArray, value);
  QFETCH(QString, expected);
  const QByteArray bytes = editedFile(run ? runResult() : checkpointResult(), [&](json& file) {
    file[json::json_pointer(pointer.toStdString())] = json::parse(value.toStdString());
  });
  expectError(write("parzen-wrong.json", bytes), expected);
}

void TestParzenEvaluationFile::notJson_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<QString>("expected");
  QTest::newRow("empty") << QByteArray() << "not valid JSON (";
  QTest::newRow("text") << QByteArray("σ 0.5, mean -1234.5\n") << "not valid JSON (";
  QTest::newRow("cut short") << QByteArray(kGoldenRunFile).left(200) << "not valid JSON (";
  QTest::newRow("a NUL") << QByteArray("{\"v\": 1,\0 }", 11) << "not valid JSON (";
  QTest::newRow("number past a double") << QByteArray(R"({"v": 1e999})") << "not valid JSON (";
  QTest::newRow("a list") << QByteArray("[1, 2]") << "not a JSON object";
  QTest::newRow("a string") << QByteArray(R"("parzen")") << "not a JSON object";
  const QByteArray deep = "{\"future\": " + QByteArray(100, '[') + QByteArray(100, ']') + "}";
  QTest::newRow("nested 101 deep") << deep << "nested deeper than 16 levels";
  QTest::newRow("only brackets") << QByteArray(1 << 20, '[') << "nested deeper than 16 levels";
  // Brackets inside a string are text, not nesting.
  QTest::newRow("brackets in a string") << QByteArray("{\"x\": \"" + QByteArray(100, '[') + "\\\"\"}")
                                        << R"("v" is missing)";
}

void TestParzenEvaluationFile::notJson() {
  QFETCH(QByteArray, bytes);
  QFETCH(QString, expected);
  expectError(write("parzen-bad.json", bytes), expected);
}

void TestParzenEvaluationFile::notARegularFile() {
  const QString fifo = dir_.filePath("parzen-fifo.json");
  QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
  // Refused at once: a reader that opened it and waited for a writer would hang here (ctest's
  // timeout is the guard), no timing is asserted.
  expectError(fifo, "not a regular file");
  const QString folder = dir_.filePath("parzen-folder.json");
  QVERIFY(QDir().mkpath(folder));
  expectError(folder, "a folder, not a regular file");
  expectError(dir_.filePath("parzen-absent.json"), "No such file or directory");
}

void TestParzenEvaluationFile::tooLarge() {
  // Sparse: the size is refused before a byte is read.
  const QString path = dir_.filePath("parzen-huge.json");
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  QVERIFY(file.resize(ParzenEvaluationFile::kMaxBytes + 1));
  file.close();
  expectError(path, "larger than " + QString::number(ParzenEvaluationFile::kMaxBytes) + " bytes");
  // At the limit it is read (and found not to be JSON).
  QVERIFY(QFile::resize(path, ParzenEvaluationFile::kMaxBytes));
  expectError(path, "not valid JSON (");
}

void TestParzenEvaluationFile::unknownKeysAreIgnored() {
  const QByteArray bytes = editedFile(runResult(), [](json& file) {
    file["metric"] = {{"fid", 12.5}, {"nested", {1, {2, 3}}}};
    file["note"] = "written by hand";
    file["checkpoints"][0]["device"] = "cuda:0";
    file["curve"] = json::array({{{"sigma", 0.2}, {"mean_ll", -5.0}, {"n", 3}}});
  });
  const auto read = ParzenEvaluationFile::read(write("parzen-run.json", bytes).toStdString());
  QVERIFY2(read.ok(), read.error().c_str());
  QCOMPARE(read->checkpoints.size(), std::size_t(2));
  QCOMPARE(read->checkpoints[0].checkpoint.file, std::string("step-1.pt"));
  QCOMPARE(read->curve.size(), std::size_t(1));
  QCOMPARE(read->curve[0].mean_ll, -5.0);
}

void TestParzenEvaluationFile::best() {
  const auto single = checkpointResult().best();
  QVERIFY(single.has_value());
  QCOMPARE(single->mean_ll, -1234.5);
  QCOMPARE(single->epoch, std::int64_t(2));
  ParzenEvaluation samples = checkpointResult();
  samples.checkpoint.reset();
  QCOMPARE(samples.best()->epoch, std::int64_t(0));
  ParzenEvaluation run = runResult();
  QCOMPARE(run.best()->mean_ll, -1700.25);
  QCOMPARE(run.best()->epoch, std::int64_t(1));
  run.checkpoints[0].mean_ll = -1700.25;  // equal: the first
  QCOMPARE(run.best()->epoch, std::int64_t(0));
  run.checkpoints[0].mean_ll = std::numeric_limits<double>::quiet_NaN();
  QCOMPARE(run.best()->epoch, std::int64_t(1));
  run.checkpoints.clear();
  QVERIFY(!run.best().has_value());
}

STREETGAN_TEST_GUILESS_MAIN(TestParzenEvaluationFile)
#include "tst_parzen_evaluation_file.moc"
