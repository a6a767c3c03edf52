// TensorBoard event files: CRC-32C against its published check value, and the records our writer
// frames read back by a reader of this test's own (both CRCs checked, the protobuf decoded field
// by field): file_version first, scalars and a PNG image summary with their steps, SessionLog
// START markers; the recorder maps the event stream onto the original tool's tags. Sample paths
// from the stream (which may come from another host) are read only inside the run, as regular
// files of bounded size: a '..' path, an absolute device, a FIFO, links and an oversized file are
// each skipped with a warning naming the run and the path, without hanging. A file name past the
// system's limit comes back from the writer as an Error, not as an exception.
#include "core/runs/tensorboard_recorder.h"
#include "core/runs/tensorboard_writer.h"
#include "core/util/crc32c.h"
#include "tests/support/test_suite.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

using namespace streetgan;

class TestTensorBoard : public QObject {
  Q_OBJECT
private slots:
  void crc32cCheckValues_data();
  void crc32cCheckValues();
  void writerFramesRecords();
  void recorderMapsTheEventStream();
  void resumeWritesStartAtItsStep();
  void importedLossesBecomeScalars();
  void samplesAreReadOnlyFromInsideTheRun_data();
  void samplesAreReadOnlyFromInsideTheRun();
  void tooLongFileNameIsAnErrorNotAnException();
};

namespace {

/// One protobuf field as read: varint/fixed values as integers, length-delimited as bytes.
struct Field {
  int number = 0, wire = 0;
  std::uint64_t integer = 0;
  QByteArray bytes;
};

std::vector<Field> decode(const QByteArray& message) {
  std::vector<Field> fields;
  int at = 0;
  auto varint = [&]() {
    std::uint64_t value = 0;
    for (int shift = 0; at < message.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(message[at++]);
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) break;
    }
    return value;
  };
  while (at < message.size()) {
    Field f;
    const std::uint64_t key = varint();
    f.number = static_cast<int>(key >> 3);
    f.wire = static_cast<int>(key & 7);
    if (f.wire == 0) {
      f.integer = varint();
    } else if (f.wire == 1 || f.wire == 5) {
      const int n = f.wire == 1 ? 8 : 4;
      for (int i = 0; i < n; ++i) f.integer |= static_cast<std::uint64_t>(static_cast<unsigned char>(message[at + i])) << (8 * i);
      at += n;
    } else if (f.wire == 2) {
      const auto n = static_cast<int>(varint());
      f.bytes = message.mid(at, n);
      at += n;
    } else {
      return {};  // not a wire type our writer uses
    }
    fields.push_back(f);
  }
  return fields;
}

const Field* fieldOf(const std::vector<Field>& fields, int number) {
  for (const Field& f : fields)
    if (f.number == number) return &f;
  return nullptr;
}

double asDouble(std::uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

float asFloat(std::uint64_t bits) {
  const auto b = static_cast<std::uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

std::uint32_t le32(const QByteArray& bytes, int at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

/// Every record of a TFRecord file, each CRC checked (a failed check fails the test).
std::vector<QByteArray> readRecords(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QByteArray all = file.readAll();
  std::vector<QByteArray> records;
  int at = 0;
  while (at + 12 <= all.size()) {
    std::uint64_t length = le32(all, at) | (static_cast<std::uint64_t>(le32(all, at + 4)) << 32);
    if (le32(all, at + 8) != maskedCrc32c(all.constData() + at, 8)) {
      qWarning("bad length CRC at %d", at);
      return {};
    }
    const QByteArray data = all.mid(at + 12, static_cast<int>(length));
    if (le32(all, at + 12 + static_cast<int>(length)) != maskedCrc32c(data.constData(), static_cast<std::size_t>(data.size()))) {
      qWarning("bad data CRC at %d", at);
      return {};
    }
    records.push_back(data);
    at += 12 + static_cast<int>(length) + 4;
  }
  if (at != all.size()) return {};  // a torn record at the end
  return records;
}

/// An Event as this test reads it.
struct Event {
  double wall_time = 0;
  std::int64_t step = 0;
  QByteArray file_version;
  int session_status = -1;
  QByteArray tag;
  float simple_value = 0;
  bool has_simple = false;
  int image_width = 0, image_height = 0, image_colorspace = 0;
  QByteArray image_png;
};

Event readEvent(const QByteArray& record) {
  Event e;
  const auto fields = decode(record);
  if (const Field* f = fieldOf(fields, 1)) e.wall_time = asDouble(f->integer);
  if (const Field* f = fieldOf(fields, 2)) e.step = static_cast<std::int64_t>(f->integer);
  if (const Field* f = fieldOf(fields, 3)) e.file_version = f->bytes;
  if (const Field* f = fieldOf(fields, 7)) e.session_status = static_cast<int>(fieldOf(decode(f->bytes), 1)->integer);
  if (const Field* f = fieldOf(fields, 5)) {
    const auto value = decode(fieldOf(decode(f->bytes), 1)->bytes);
    e.tag = fieldOf(value, 1)->bytes;
    if (const Field* simple = fieldOf(value, 2)) {
      e.simple_value = asFloat(simple->integer);
      e.has_simple = true;
    }
    if (const Field* image = fieldOf(value, 4)) {
      const auto img = decode(image->bytes);
      e.image_height = static_cast<int>(fieldOf(img, 1)->integer);
      e.image_width = static_cast<int>(fieldOf(img, 2)->integer);
      e.image_colorspace = static_cast<int>(fieldOf(img, 3)->integer);
      e.image_png = fieldOf(img, 4)->bytes;
    }
  }
  return e;
}

std::vector<Event> readEventFile(const QString& path) {
  std::vector<Event> events;
  for (const QByteArray& record : readRecords(path)) events.push_back(readEvent(record));
  return events;
}

// An event as the trainer hands it to the recorder: typed, at its time.
StreamEvent streamEvent(const std::string& type, double time, nlohmann::json fields) {
  return makeStreamEvent(type, time, std::move(fields));
}

bool savePng(const QString& path, const QColor& colour) {
  QImage grid(66, 66, QImage::Format_RGB888);
  grid.fill(colour);
  return grid.save(path, "PNG");
}

/// The hang guard of the FIFO case: if the code under test still runs after 60 s (a reader
/// blocked in open() or read() of a FIFO with no writer), it opens the FIFO's writing end and
/// closes it, so the reader sees the end of the file and the test fails instead of hanging.
class FifoHangGuard {
public:
  explicit FifoHangGuard(const QString& fifo) : fifo_(fifo.toStdString()) {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_cv_.wait_for(lock, std::chrono::seconds(60), [this] { return done_; })) return;
      fired_ = true;
      lock.unlock();
      for (int i = 0; i < 100; ++i) {  // a reader blocked in open() lets a writer open at once
        const int fd = ::open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
          ::close(fd);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~FifoHangGuard() { finish(); }
  /// The code under test returned; true when it did so only because the guard unblocked it.
  bool finish() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

private:
  std::string fifo_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false, fired_ = false;
  std::thread thread_;
};

}  // namespace

void TestTensorBoard::crc32cCheckValues_data() {
  QTest::addColumn<QByteArray>("data");
  QTest::addColumn<quint32>("crc");
  QTest::newRow("123456789") << QByteArray("123456789") << quint32(0xE3069283);  // the published check value
  QTest::newRow("empty") << QByteArray() << quint32(0);
  QTest::newRow("32 zeros") << QByteArray(32, '\0') << quint32(0x8A9136AA);      // RFC 3720 B.4
  QTest::newRow("32 x 0xFF") << QByteArray(32, '\xFF') << quint32(0x62A8AB43);   // RFC 3720 B.4
}

void TestTensorBoard::crc32cCheckValues() {
  QFETCH(QByteArray, data);
  QFETCH(quint32, crc);
  QCOMPARE(crc32c(data.constData(), static_cast<std::size_t>(data.size())), crc);
}

void TestTensorBoard::writerFramesRecords() {
  QTemporaryDir dir;
  auto writer = TensorBoardWriter::open(dir.filePath("tb").toStdString(), 1795290363.25);
  QVERIFY2(writer, writer ? "" : writer.error().c_str());
  const QString path = QString::fromStdString(writer->path());
  QVERIFY2(QFileInfo(path).fileName().startsWith("events.out.tfevents.1795290363."), qPrintable(path));
  QVERIFY(writer->sessionStart(1795290363.5, 0));
  QVERIFY(writer->scalar("G_loss", 1795290364.0, 128, 2.5));
  QImage grid(20, 10, QImage::Format_RGB888);
  grid.fill(Qt::red);
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  QVERIFY(grid.save(&buffer, "PNG"));
  QVERIFY(writer->image("samples", 1795290365.0, 256, std::string_view(png.constData(), static_cast<std::size_t>(png.size())),
                        20, 10, 3));
  const auto events = readEventFile(path);
  QCOMPARE(events.size(), std::size_t(4));
  QCOMPARE(events[0].file_version, QByteArray("brain.Event:2"));
  QCOMPARE(events[0].wall_time, 1795290363.25);
  QCOMPARE(events[1].session_status, 1);
  QCOMPARE(events[2].tag, QByteArray("G_loss"));
  QVERIFY(events[2].has_simple);
  QCOMPARE(events[2].simple_value, 2.5f);
  QCOMPARE(events[2].step, qint64(128));
  QCOMPARE(events[3].tag, QByteArray("samples"));
  QCOMPARE(events[3].image_width, 20);
  QCOMPARE(events[3].image_height, 10);
  QCOMPARE(events[3].image_colorspace, 3);
  QCOMPARE(events[3].image_png, png);
  // A second writer in the same second gets a file of its own.
  auto second = TensorBoardWriter::open(dir.filePath("tb").toStdString(), 1795290363.9);
  QVERIFY(second);
  QVERIFY(second->path() != writer->path());
}

void TestTensorBoard::recorderMapsTheEventStream() {
  QTemporaryDir dir;
  QDir(dir.path()).mkpath("samples");
  QImage grid(66, 66, QImage::Format_RGB888);
  grid.fill(Qt::darkGray);
  QVERIFY(grid.save(dir.filePath("samples/step-2.png")));
  TensorBoardRecorder recorder(dir.path().toStdString(), dir.filePath("tensorboard").toStdString());
  QVERIFY(recorder.record(streamEvent("run_started", 100, {{"images_seen", 0}})));
  QVERIFY(recorder.record(streamEvent("step", 101, {{"step", 1}, {"images_seen", 64}, {"loss_d", 1.25}, {"loss_g", 3.5}, {"d_x", 0.75},
                                            {"d_g_z1", 0.25}, {"d_g_z2", 0.125}, {"images_per_s", 80.5}, {"data_wait_fraction", 0.5}})));
  QVERIFY(recorder.record(streamEvent("samples", 102, {{"path", "samples/step-2.png"}, {"step", 2}, {"images_seen", 128}})));
  QVERIFY(recorder.record(streamEvent("parzen", 103, {{"images_seen", 128}, {"mean_ll", -812.5}, {"stderr", 9.75}})));
  QVERIFY(recorder.record(streamEvent("checkpoint", 104, {{"path", "checkpoints/x.pt"}})));  // nothing for TensorBoard
  const auto events = readEventFile(QString::fromStdString(recorder.path()));
  std::map<QByteArray, std::pair<std::int64_t, float>> scalars;
  int images = 0;
  for (const Event& e : events) {
    if (e.has_simple) scalars[e.tag] = {e.step, e.simple_value};
    if (!e.image_png.isEmpty()) {
      ++images;
      QCOMPARE(e.step, qint64(128));
      QCOMPARE(e.image_width, 66);
      QCOMPARE(QImage::fromData(e.image_png), grid.convertToFormat(QImage::fromData(e.image_png).format()));
    }
  }
  QCOMPARE(images, 1);
  QCOMPARE(scalars["G_loss"], (std::pair<std::int64_t, float>{64, 3.5f}));
  QCOMPARE(scalars["D_loss"], (std::pair<std::int64_t, float>{64, 1.25f}));
  QCOMPARE(scalars["D_X"].second, 0.75f);
  QCOMPARE(scalars["D_G_z1"].second, 0.25f);
  QCOMPARE(scalars["D_G_z2"].second, 0.125f);
  QCOMPARE(scalars["throughput/images_per_s"].second, 80.5f);
  QCOMPARE(scalars["throughput/data_wait_fraction"].second, 0.5f);
  QCOMPARE(scalars["parzen/mean_ll"], (std::pair<std::int64_t, float>{128, -812.5f}));
  QCOMPARE(scalars["parzen/stderr"].second, 9.75f);
  QCOMPARE(events.size(), std::size_t(1 + 1 + 7 + 1 + 2));  // version, START, 7 step scalars, image, 2 Parzen
}

void TestTensorBoard::resumeWritesStartAtItsStep() {
  QTemporaryDir dir;
  TensorBoardRecorder recorder(dir.path().toStdString(), dir.filePath("tensorboard").toStdString());
  QVERIFY(recorder.record(streamEvent("run_started", 100, {{"images_seen", 0}})));
  QVERIFY(recorder.record(streamEvent("step", 101, {{"images_seen", 64}, {"loss_d", 1.0}, {"loss_g", 2.0}})));
  QVERIFY(recorder.record(streamEvent("run_started", 200, {{"images_seen", 32}})));  // resumed from an earlier checkpoint
  const auto events = readEventFile(QString::fromStdString(recorder.path()));
  std::vector<std::int64_t> starts;
  for (const Event& e : events)
    if (e.session_status == 1) starts.push_back(e.step);
  QCOMPARE(starts, (std::vector<std::int64_t>{0, 32}));
}

void TestTensorBoard::importedLossesBecomeScalars() {
  // `streetgan import` packs the original tool's loss pairs into imported_losses events
  // (docs/events.md): each pair is a G_loss and D_loss point at its step × images_per_step.
  QTemporaryDir dir;
  TensorBoardRecorder recorder(dir.path().toStdString(), dir.filePath("tensorboard").toStdString());
  QVERIFY(recorder.record(streamEvent("run_started", 100, {{"images_seen", 0}})));
  QVERIFY(recorder.record(streamEvent("imported_losses", 101,
                                      {{"first_step", 1}, {"steps", 3}, {"total_steps", 4}, {"epochs", 1},
                                       {"images_per_step", 128}, {"loss_d", {1.0, nullptr, 3.0}},
                                       {"loss_g", {2.0, 4.0, nullptr}}})));
  std::vector<std::tuple<QByteArray, std::int64_t, float>> points;
  for (const Event& e : readEventFile(QString::fromStdString(recorder.path())))
    if (e.has_simple) points.emplace_back(e.tag, e.step, e.simple_value);
  const std::vector<std::tuple<QByteArray, std::int64_t, float>> expected{
      {"G_loss", 128, 2.0f}, {"G_loss", 256, 4.0f}, {"D_loss", 128, 1.0f}, {"D_loss", 384, 3.0f}};
  QVERIFY(points == expected);
}

void TestTensorBoard::samplesAreReadOnlyFromInsideTheRun_data() {
  QTest::addColumn<QString>("path");    // as the samples event names it
  QTest::addColumn<QString>("setup");   // what is made at run/path first
  QTest::addColumn<QString>("reason");  // what the warning says after "<run>: sample grid skipped: "
  const QString outside = "is not a path inside the run directory";
  QTest::newRow("climbs out") << "../outside.png" << "" << "'../outside.png' " + outside + " (it climbs out with '..')";
  QTest::newRow("climbs out deep") << "samples/../../../../../../etc/passwd" << ""
                                   << "'samples/../../../../../../etc/passwd' " + outside + " (it climbs out with '..')";
  QTest::newRow("absolute device") << "/dev/zero" << "" << "'/dev/zero' " + outside + " (it is absolute)";
  QTest::newRow("fifo") << "samples/fifo.png" << "fifo" << "'samples/fifo.png' is not a regular file";
  QTest::newRow("link out to a device") << "samples/zero.png" << "link /dev/zero"
                                        << "'samples/zero.png' " + outside + " (a link leads out of the run directory)";
  QTest::newRow("link out to a file") << "samples/outside.png" << "link ../../outside.png"
                                      << "'samples/outside.png' " + outside + " (a link leads out of the run directory)";
  QTest::newRow("link inside") << "samples/alias.png" << "link good.png" << "'samples/alias.png' is a symbolic link, not a file";
  QTest::newRow("folder") << "samples" << "" << "'samples' is not a regular file";
  QTest::newRow("over 64 MiB") << "samples/huge.png" << "huge" << "'samples/huge.png' is larger than 64 MiB";
  QTest::newRow("missing") << "samples/missing.png" << "" << "cannot read 'samples/missing.png': No such file or directory";
  QTest::newRow("not a PNG") << "samples/text.png" << "text" << "'samples/text.png' is not a PNG image";
  QTest::newRow("control characters") << "samples/\x1b[2J.png" << ""
                                      << "'samples/\\x1b[2J.png' " + outside + " (it holds a control character)";
}

void TestTensorBoard::samplesAreReadOnlyFromInsideTheRun() {
  QFETCH(QString, path);
  QFETCH(QString, setup);
  QFETCH(QString, reason);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString run = dir.filePath("run");
  QVERIFY(QDir().mkpath(run + "/samples"));
  QVERIFY(savePng(run + "/samples/good.png", Qt::darkGray));
  QVERIFY(savePng(dir.filePath("outside.png"), Qt::red));  // next to the run, not in it
  const QString target = run + "/" + path;
  if (setup == "fifo") {
    QCOMPARE(::mkfifo(QFile::encodeName(target).constData(), 0600), 0);
  } else if (setup.startsWith("link ")) {
    QCOMPARE(::symlink(setup.mid(5).toUtf8().constData(), QFile::encodeName(target).constData()), 0);
  } else if (setup == "huge") {
    QFile huge(target);  // sparse: no 64 MiB written
    QVERIFY(huge.open(QIODevice::WriteOnly));
    QVERIFY(huge.resize(TensorBoardRecorder::kMaxSampleBytes + 1));
  } else if (setup == "text") {
    QFile text(target);
    QVERIFY(text.open(QIODevice::WriteOnly));
    QVERIFY(text.write("not an image\n") > 0);
  }
  std::vector<std::string> warnings;
  TensorBoardRecorder recorder(run.toStdString(), dir.filePath("tensorboard").toStdString(),
                               [&warnings](const std::string& warning) { warnings.push_back(warning); });
  QVERIFY(recorder.record(streamEvent("run_started", 100, {{"images_seen", 0}})));
  {
    FifoHangGuard guard(setup == "fifo" ? target : dir.filePath("no-fifo"));
    const Status skipped = recorder.record(streamEvent("samples", 101, {{"path", path.toStdString()}, {"images_seen", 64}}));
    QVERIFY2(!guard.finish(), "reading the sample blocked until the test's guard opened the FIFO after 60 s");
    QVERIFY2(skipped, skipped.error().c_str());  // a skipped grid is no failure: recording goes on
  }
  QVERIFY(recorder.record(streamEvent("samples", 102, {{"path", "samples/good.png"}, {"images_seen", 128}})));
  QCOMPARE(warnings.size(), std::size_t(1));
  QCOMPARE(QString::fromStdString(warnings.front()), run + ": sample grid skipped: " + reason);
  for (char c : warnings.front()) QVERIFY2(static_cast<unsigned char>(c) >= 0x20, "a control character reached the warning");
  std::vector<std::int64_t> image_steps;
  for (const Event& e : readEventFile(QString::fromStdString(recorder.path())))
    if (!e.image_png.isEmpty()) image_steps.push_back(e.step);
  QCOMPARE(image_steps, (std::vector<std::int64_t>{128}));  // only the grid inside the run
}

void TestTensorBoard::tooLongFileNameIsAnErrorNotAnException() {
  // A folder whose path is just under PATH_MAX (4096): it can be created, but the event file's
  // name in it is past the limit (ENAMETOOLONG). std::filesystem::exists() threw there, which
  // would have ended training although a TensorBoard failure is only a warning.
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  QString deep = dir.path();
  while (deep.size() < 4080 - 202) deep += "/" + QString(200, QChar(u'd'));
  deep += "/" + QString(4080 - deep.size() - 1, QChar(u'e'));
  QCOMPARE(deep.size(), qsizetype(4080));
  try {
    auto writer = TensorBoardWriter::open(deep.toStdString(), 1795290363.25);
    QVERIFY(!writer);
    QVERIFY2(QString::fromStdString(writer.error()).startsWith("cannot create " + deep + "/events.out.tfevents.1795290363."),
             writer.error().c_str());
    QVERIFY2(QString::fromStdString(writer.error()).endsWith(": File name too long"), writer.error().c_str());
    TensorBoardRecorder recorder(dir.path().toStdString(), deep.toStdString());
    const Status started = recorder.record(streamEvent("run_started", 100, {{"images_seen", 0}}));
    QVERIFY(!started);
    QVERIFY2(QString::fromStdString(started.error()).endsWith(": File name too long"), started.error().c_str());
  } catch (const std::exception& e) {
    QFAIL(qPrintable(QString("an exception escaped: ") + e.what()));
  }
}

STREETGAN_TEST_GUILESS_MAIN(TestTensorBoard)
#include "tst_tensorboard.moc"
