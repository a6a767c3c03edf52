// TensorBoard event files: CRC-32C against its published check value, and the records our writer
// frames read back by a reader of this test's own (both CRCs checked, the protobuf decoded field
// by field): file_version first, scalars and a PNG image summary with their steps, SessionLog
// START markers; the recorder maps the event stream onto the original tool's tags.
#include "core/runs/tensorboard_recorder.h"
#include "core/runs/tensorboard_writer.h"
#include "core/util/crc32c.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <map>
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

nlohmann::json streamEvent(const std::string& type, double time, nlohmann::json fields) {
  fields["type"] = type;
  fields["time"] = time;
  return fields;
}

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

QTEST_GUILESS_MAIN(TestTensorBoard)
#include "tst_tensorboard.moc"
