// `streetgan serve` over real HTTP on loopback: each route's content type and content (PNG and
// GIF decoded: size, frames, loop), seeds reproducible and equal to `streetgan sample`, hostile
// requests answered 4xx or cut off while /health keeps answering, a full render queue answered
// 503 with Retry-After, a trickling client cut off, headless Chromium loading the gallery page
// (a screenshot is saved), and SIGTERM ending the server cleanly.
//
// And what issue 31's review found, each a case that failed before its fix: 19-digit numbers
// (500), thousands of header lines (200), trickling clients starving /health, a missing $TMPDIR
// and a checkpoint LibTorch throws std::out_of_range on (abort), a predictable scratch folder, a
// followed checkpoint pruned under the workers (500), connection threads the system refuses
// (a hang), and a SIGTERM while the model loads. Times in these tests are hang guards only.
#include "tests/cli/http_test_client.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <signal.h>
#include <thread>
#include <vector>

using namespace streetgan::test;

namespace {


QImage decodePng(const QByteArray& bytes) { return QImage::fromData(bytes, "PNG"); }

quint32 crc32Of(const QByteArray& data) {
  quint32 crc = 0xffffffffu;
  for (const char byte : data) {
    crc ^= static_cast<quint8>(byte);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A zip of one stored record, as torch.save's archives are: enough for LibTorch's reader to get
// to the record it reads first, the archive's version.
QByteArray storedZip(const QByteArray& name, const QByteArray& data) {
  QByteArray zip;
  auto le16 = [&zip](quint32 value) {
    zip.append(static_cast<char>(value & 0xff));
    zip.append(static_cast<char>((value >> 8) & 0xff));
  };
  auto le32 = [&le16](quint32 value) {
    le16(value & 0xffff);
    le16(value >> 16);
  };
  const quint32 crc = crc32Of(data);
  const auto size = static_cast<quint32>(data.size());
  le32(0x04034b50);  // local file header
  le16(20); le16(0); le16(0); le16(0); le16(0);  // version needed, flags, stored, time, date
  le32(crc); le32(size); le32(size);
  le16(static_cast<quint32>(name.size())); le16(0);
  zip += name;
  zip += data;
  const auto directory = static_cast<quint32>(zip.size());
  le32(0x02014b50);  // central directory entry
  le16(20); le16(20); le16(0); le16(0); le16(0); le16(0);  // made by, needed, flags, stored, time, date
  le32(crc); le32(size); le32(size);
  le16(static_cast<quint32>(name.size())); le16(0); le16(0); le16(0); le16(0);  // name, extra, comment, disk, internal
  le32(0); le32(0);  // external attributes, offset of the local header
  zip += name;
  const auto directory_size = static_cast<quint32>(zip.size()) - directory;
  le32(0x06054b50);  // end of central directory
  le16(0); le16(0); le16(1); le16(1);
  le32(directory_size); le32(directory);
  le16(0);
  return zip;
}

// A process's address space in bytes (VmSize), or -1.
qint64 virtualMemoryOf(qint64 pid) {
  QFile status(QString("/proc/%1/status").arg(pid));
  if (!status.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : status.readAll().split('\n'))
    if (line.startsWith("VmSize:")) return line.mid(7).trimmed().split(' ').value(0).toLongLong() * 1024;
  return -1;
}

// A QProcess's stderr so far, gathered as it comes.
struct ErrorLog {
  QProcess& process;
  QString text;
  bool contains(const QString& what) {
    text += QString::fromUtf8(process.readAllStandardError());
    return text.contains(what);
  }
};

// Waits up to `timeout_ms` for `process` to end (a hang guard); kills it when it does not.
bool endsWithin(QProcess& process, int timeout_ms) {
  if (process.waitForFinished(timeout_ms)) return true;
  process.kill();
  process.waitForFinished(10000);
  return false;
}

QProcessEnvironment environmentWith(const QString& name, const QString& value) {
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert(name, value);
  return environment;
}

}  // namespace

class TestServe : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void cleanupTestCase();
  void health();
  void gridIsTheSampleCommandsGrid();
  void walkIsALoopingGif();
  void walkAsVideo_data();
  void walkAsVideo();
  void hostileRequests_data();
  void hostileRequests();
  void tricklingClientIsCutOff();
  void fullQueueAnswers503();
  void galleryPageInChromium();
  void followsTheNewestCheckpoint();
  void tricklersDoNotStarveHealth();
  void scratchFolderIsPrivateAndRemoved();
  void missingTmpdirIsReportedPlainly();
  void followerSurvivesACheckpointLibTorchThrowsOn();
  void keepsServingWhenTheFollowedCheckpointIsPruned();
  void connectionThreadsThatCannotStartFailAtStart();
  void tooManyConnectionsIsAUsageError();
  void sigtermWhileLoadingStopsCleanly();
  void sigtermAnswersQueuedRendersAndStops();
  void sigtermStops();

private:
  bool startServer(QProcess& process, const QStringList& args, int* port);
  QString copyOfRun(const QString& name);
  QTemporaryDir dir_;
  QString data_, run_, checkpoint_;
  QProcess server_;
  int port_ = 0;
};

bool TestServe::startServer(QProcess& process, const QStringList& args, int* port) {
  process.setProgram(STREETGAN_CLI);
  process.setArguments(QStringList{"serve", "--port", "0"} + args);
  process.start();
  if (!process.waitForStarted(10000)) return false;
  QByteArray err;
  QElapsedTimer clock;
  clock.start();
  static const QRegularExpression listening("on http://127\\.0\\.0\\.1:(\\d+)/");
  while (clock.elapsed() < 60000 && process.state() == QProcess::Running) {
    process.waitForReadyRead(100);
    err += process.readAllStandardError();
    const auto match = listening.match(QString::fromUtf8(err));
    if (match.hasMatch()) {
      *port = match.captured(1).toInt();
      return true;
    }
  }
  qWarning("%s", err.constData());
  return false;
}

// A run folder holding only a copy of the test's checkpoint: one to follow and change.
QString TestServe::copyOfRun(const QString& name) {
  const QString run = dir_.filePath(name);
  if (!QDir().mkpath(run + "/checkpoints")) return {};
  if (!QFile::copy(checkpoint_, run + "/checkpoints/" + QFileInfo(checkpoint_).fileName())) return {};
  return run;
}

void TestServe::initTestCase() {
  QVERIFY(dir_.isValid());
  data_ = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("run");
  const CliResult trained = runCli(tinyTrainArgs(data_, run_, 1));
  QVERIFY2(trained.exit_code == 0, qPrintable(trained.err));
  const QStringList files = QDir(run_ + "/checkpoints").entryList({"*.pt"}, QDir::Files);
  QVERIFY(!files.isEmpty());
  checkpoint_ = run_ + "/checkpoints/" + files.back();
  QVERIFY(startServer(server_, {"--checkpoint", checkpoint_, "--workers", "2", "--queue", "2", "--max-n", "64",
                                "--max-frames", "400"},
                      &port_));
}

void TestServe::cleanupTestCase() {
  if (server_.state() == QProcess::Running) {
    server_.kill();
    server_.waitForFinished(10000);
  }
}

void TestServe::health() {
  const HttpReply reply = get(port_, "/health");
  QCOMPARE(reply.status, 200);
  QVERIFY(reply.header("content-type").startsWith("application/json"));
  QCOMPARE(reply.header("cache-control"), QString("no-store"));
  const QJsonObject body = QJsonDocument::fromJson(reply.body).object();
  QCOMPARE(body["status"].toString(), QString("ok"));
  QCOMPARE(body["model"].toObject()["run"].toString(), QString("run"));
  QCOMPARE(body["model"].toObject()["img_size"].toInt(), 64);
  QVERIFY(body["model"].toObject()["checkpoint"].toString().endsWith(QFileInfo(checkpoint_).fileName()));
}

void TestServe::gridIsTheSampleCommandsGrid() {
  const HttpReply reply = get(port_, "/gan_imgs?n=16&seed=5");
  QCOMPARE(reply.status, 200);
  QCOMPARE(reply.header("content-type"), QString("image/png"));
  QCOMPARE(reply.header("x-seed"), QString("5"));
  QVERIFY(reply.header("cache-control").contains("max-age"));
  const QImage grid = decodePng(reply.body);
  QCOMPARE(grid.size(), QSize(2 + 4 * 66, 2 + 4 * 66));  // 16 images of 64 px, 4 to a row, 2 px apart
  const QString png = dir_.filePath("sample-5.png");
  const CliResult sampled = runCli({"sample", "--checkpoint", checkpoint_, "--seed", "5", "--n", "16", "--out", png});
  QVERIFY2(sampled.exit_code == 0, qPrintable(sampled.err));
  QCOMPARE(grid.convertToFormat(QImage::Format_RGB888), QImage(png).convertToFormat(QImage::Format_RGB888));
  QCOMPARE(get(port_, "/gan_imgs?n=16&seed=5").body, reply.body);  // the same seed, the same bytes

  const HttpReply unseeded = get(port_, "/gan_imgs");
  QCOMPARE(unseeded.status, 200);
  QCOMPARE(unseeded.header("cache-control"), QString("no-store"));
  QVERIFY(!unseeded.header("x-seed").isEmpty());
  QCOMPARE(decodePng(unseeded.body).size(), grid.size());  // n defaults to 16, as the original's
  const HttpReply large = get(port_, "/gan_imgs?n=4&seed=1&size=128");
  QCOMPARE(decodePng(large.body).size(), QSize(2 + 2 * 130, 2 + 2 * 130));
}

void TestServe::walkIsALoopingGif() {
  const HttpReply reply = get(port_, "/gan_gifs?frames=12&seed=3&size=96");
  QCOMPARE(reply.status, 200);
  QCOMPARE(reply.header("content-type"), QString("image/gif"));
  QBuffer buffer(const_cast<QByteArray*>(&reply.body));
  QImageReader reader(&buffer, "gif");
  QCOMPARE(reader.imageCount(), 12);
  QCOMPARE(reader.loopCount(), -1);  // loops forever
  QCOMPARE(reader.size(), QSize(96, 96));
  QCOMPARE(get(port_, "/gan_gifs?frames=12&seed=3&size=96").body, reply.body);
  QBuffer defaults_buffer;
  const HttpReply defaults = get(port_, "/gan_gifs?seed=4");
  defaults_buffer.setData(defaults.body);
  QImageReader defaults_reader(&defaults_buffer, "gif");
  QCOMPARE(defaults_reader.imageCount(), 16);  // frames default to 16, as the original's
}

void TestServe::walkAsVideo_data() {
  QTest::addColumn<QString>("format");
  QTest::addColumn<QString>("type");
  QTest::addColumn<QByteArray>("magic");
  QTest::addColumn<int>("offset");
  QTest::newRow("mp4") << "mp4" << "video/mp4" << QByteArray("ftyp") << 4;
  QTest::newRow("webm") << "webm" << "video/webm" << QByteArray("\x1a\x45\xdf\xa3") << 0;
}

void TestServe::walkAsVideo() {
  QFETCH(QString, format);
  QFETCH(QString, type);
  QFETCH(QByteArray, magic);
  QFETCH(int, offset);
  const HttpReply reply = get(port_, "/gan_gifs?frames=8&seed=2&size=64&format=" + format.toUtf8());
  QCOMPARE(reply.status, 200);
  QCOMPARE(reply.header("content-type"), type);
  QCOMPARE(reply.body.mid(offset, magic.size()), magic);
}

void TestServe::hostileRequests_data() {
  QTest::addColumn<QByteArray>("raw");
  QTest::addColumn<int>("status");
  QTest::addColumn<QString>("says");
  auto row = [](const char* name, const QByteArray& target, int status, const QString& says) {
    QTest::newRow(name) << ("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") << status << says;
  };
  row("n=-1", "/gan_imgs?n=-1", 400, "n must be a whole number from 1 to 64");
  row("n=10^9", "/gan_imgs?n=1000000000", 400, "n must be a whole number from 1 to 64");
  row("n=2^64", "/gan_imgs?n=18446744073709551616", 400, "n must be");
  row("size=0", "/gan_imgs?size=0", 400, "size must be a whole number from 8 to 1024");
  row("size too large", "/gan_gifs?size=5000", 400, "size must be");
  row("n not a number", "/gan_imgs?n=abc", 400, "(got \"abc\")");
  row("seed not a number", "/gan_imgs?seed=1e5", 400, "seed must be");
  row("frames=1", "/gan_gifs?frames=1", 400, "frames must be a whole number from 2 to 400");
  row("frames too many", "/gan_gifs?frames=100000", 400, "frames must be");
  // Each number in range, 268 million pixels in all (3 GB of floats): refused before any work.
  row("pixels", "/gan_imgs?n=64&size=1024", 400, "n x size x size must be at most 40000000 pixels");
  row("unknown format", "/gan_gifs?format=avi", 400, "format must be gif, mp4 or webm");
  row("unknown route", "/admin", 404, "not found");
  row("path traversal", "/../../../../etc/passwd", 404, "");
  row("encoded traversal", "/gan_imgs/..%2F..%2Fetc%2Fpasswd", 404, "");
  row("one megabyte query", "/gan_imgs?n=" + QByteArray(1 << 20, '1'), 414, "");
  // 19 digits overflowed std::stoll: 500 instead of 400.
  row("19-digit seed", "/gan_imgs?seed=9999999999999999999", 400,
      "seed must be a whole number from 0 to 999999999999999999 (got 9999999999999999999)");
  row("19-digit n", "/gan_imgs?n=9223372036854775808", 400, "n must be a whole number from 1 to 64");
  row("19-digit frames", "/gan_gifs?frames=1234567890123456789", 400, "frames must be a whole number from 2 to 400");
  row("19-digit size", "/gan_gifs?size=9999999999999999999", 400, "size must be a whole number from 8 to 1024");
  row("40-digit seed", "/gan_imgs?seed=" + QByteArray(40, '9'), 400, "seed must be");
  // No bound on header lines: 2 million of them grew the server by 220 MB and were answered 200.
  QByteArray many_headers = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 5000; ++i) many_headers += "X-A: b\r\n";
  QTest::newRow("5000 header lines") << (many_headers + "Connection: close\r\n\r\n") << 431 << "more than 100 header lines";
  QByteArray large_head = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 40; ++i) large_head += "X-Pad-" + QByteArray::number(i) + ": " + QByteArray(1000, 'a') + "\r\n";
  QTest::newRow("40 KiB head") << (large_head + "Connection: close\r\n\r\n") << 431 << "head is longer than";
  QTest::newRow("chunked body")
      << QByteArray("POST /gan_imgs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
      << 501 << "Transfer-Encoding";
  QTest::newRow("POST") << QByteArray("POST /gan_imgs HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
                        << 404 << "";
  // cpp-httplib answered each of many ranges with the whole body again.
  QTest::newRow("many byte ranges") << ("GET /gan_imgs?n=4 HTTP/1.1\r\nHost: x\r\nRange: bytes=0-" +
                                        QByteArray(",0-").repeated(1000) + "\r\nConnection: close\r\n\r\n")
                                    << 416 << "one byte range";
  QTest::newRow("empty lines before the request")
      << QByteArray("\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") << 200 << "\"status\":\"ok\"";
  QTest::newRow("bare LF") << QByteArray("GET /health HTTP/1.1\nHost: x\n\n") << 400 << "CR LF";
  QTest::newRow("garbage") << QByteArray("\x16\x03\x01 not http at all\r\n\r\n") << 400 << "";
}

void TestServe::hostileRequests() {
  QFETCH(QByteArray, raw);
  QFETCH(int, status);
  QFETCH(QString, says);
  const HttpReply reply = request(port_, raw, 30000);
  QVERIFY2(reply.status == status || (status >= 400 && reply.status == 0 && status == 414),
           qPrintable(QString("status %1, body %2").arg(reply.status).arg(QString::fromUtf8(reply.body.left(200)))));
  QVERIFY2(says.isEmpty() || QString::fromUtf8(reply.body).contains(says), reply.body.constData());
  QVERIFY(!reply.body.contains("root:"));
  QCOMPARE(get(port_, "/health").status, 200);
}

void TestServe::tricklingClientIsCutOff() {
  const int fd = connectTo(port_);
  QVERIFY(fd >= 0);
  const QByteArray slow = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  QElapsedTimer clock;
  clock.start();
  bool cut = false;
  for (char byte : slow) {
    if (::send(fd, &byte, 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    QCOMPARE(get(port_, "/health").status, 200);  // everyone else is answered meanwhile
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) > 0) {  // one byte a second; the server closing shows as readable
      char buffer[256];
      if (::recv(fd, buffer, sizeof buffer, 0) <= 0) {
        cut = true;
        break;
      }
    }
  }
  ::close(fd);
  QVERIFY2(cut, "a client sending one byte a second was answered instead of cut off");
  // No time limit here: the loop sends at most one byte a second (its own bound); how soon the
  // client is cut off is bench/bench_targets.py's figure.
  qInfo("cut off after %lld ms", static_cast<long long>(clock.elapsed()));
}

void TestServe::fullQueueAnswers503() {
  // 2 workers and a queue of 2: of 10 large walks asked at once, some must be refused.
  std::vector<std::future<HttpReply>> replies;
  for (int i = 0; i < 10; ++i)
    replies.push_back(std::async(std::launch::async, [this, i] {
      return get(port_, "/gan_gifs?frames=120&size=256&seed=" + QByteArray::number(100 + i));
    }));
  QTest::qWait(300);
  QElapsedTimer clock;
  clock.start();
  QCOMPARE(get(port_, "/health").status, 200);
  const qint64 health_ms = clock.elapsed();
  int ok = 0, busy = 0;
  for (auto& future : replies) {
    const HttpReply reply = future.get();
    if (reply.status == 200) ++ok;
    if (reply.status == 503) {
      ++busy;
      QCOMPARE(reply.header("retry-after"), QString("1"));
    }
  }
  qInfo("%d answered, %d refused with 503; /health took %lld ms while they ran", ok, busy, static_cast<long long>(health_ms));
  QCOMPARE(ok + busy, 10);
  QVERIFY(ok >= 2);
  QVERIFY(busy >= 1);
  // How fast /health answered is bench/bench_targets.py's figure; get() has its own timeout.
}

void TestServe::galleryPageInChromium() {
  if (qEnvironmentVariableIsSet("STREETGAN_TEST_NO_CHROMIUM"))
    QSKIP(qPrintable("STREETGAN_TEST_NO_CHROMIUM is set: " + qEnvironmentVariable("STREETGAN_TEST_NO_CHROMIUM")));
  const QString chromium = QStandardPaths::findExecutable("chromium");
  QVERIFY2(!chromium.isEmpty(), "chromium not found: install it (packaging/install-deps.sh does)");
  const HttpReply page = get(port_, "/");
  QCOMPARE(page.status, 200);
  QVERIFY(page.header("content-type").startsWith("text/html"));
  const QString url = QString("http://127.0.0.1:%1/").arg(port_);
  const QStringList common = {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--user-data-dir=" + dir_.filePath("chromium"), "--virtual-time-budget=30000"};
  QProcess dom;
  dom.start(chromium, common + QStringList{"--dump-dom", url});
  QVERIFY(dom.waitForFinished(120000));
  const QString html = QString::fromUtf8(dom.readAllStandardOutput());
  QVERIFY2(QRegularExpression("<img id=\"grid\"[^>]*data-loaded=\"yes\"").match(html).hasMatch(), qPrintable(html.left(3000)));
  QVERIFY2(QRegularExpression("<img id=\"walk\"[^>]*data-loaded=\"yes\"").match(html).hasMatch(), qPrintable(html.left(3000)));
  const QString shot = testOutputDir() + "/serve-gallery.png";
  QFile::remove(shot);
  QProcess screenshot;
  screenshot.start(chromium, common + QStringList{"--window-size=1100,760", "--screenshot=" + shot, url});
  QVERIFY(screenshot.waitForFinished(120000));
  const QImage image(shot);
  QVERIFY2(!image.isNull(), qPrintable(shot));
  qInfo("screenshot: %s", qPrintable(shot));
  // Where the grid is (the page's first image, 512 px wide from (24, 89)), the picture was drawn:
  // the black 2-pixel lines between its tiles, and no pixel of the page's or the empty image
  // element's background. (The tiny net of this test draws grey tiles.)
  int black = 0, background = 0, total = 0;
  for (int y = 95; y < 590; y += 3)
    for (int x = 30; x < 530; x += 3) {
      const QRgb pixel = image.pixel(x, y);
      ++total;
      if (qRed(pixel) < 30 && qGreen(pixel) < 30 && qBlue(pixel) < 30) ++black;
      if (pixel == qRgb(0xf4, 0xf4, 0xf2) || pixel == qRgb(0xdd, 0xdd, 0xdd)) ++background;
    }
  qInfo("grid area: %d of %d pixels black (tile borders), %d background", black, total, background);
  QVERIFY2(black > total / 100 && background < total / 100, "the grid image was not drawn where the page puts it");
}

void TestServe::followsTheNewestCheckpoint() {
  QProcess follower;
  int port = 0;
  QVERIFY(startServer(follower, {"--run", run_}, &port));
  const qint64 before = QJsonDocument::fromJson(get(port, "/health").body).object()["model"].toObject()["step"].toInteger();
  const CliResult resumed = runCli({"train", "--resume", "--run-dir", run_, "--epochs", "2", "--threads", testThreadsText()});
  QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
  QTRY_VERIFY_WITH_TIMEOUT(QJsonDocument::fromJson(get(port, "/health").body).object()["model"].toObject()["step"].toInteger() > before,
                           30000);
  const HttpReply grid = get(port, "/gan_imgs?n=4&seed=1");
  QCOMPARE(grid.status, 200);
  QVERIFY(grid.header("x-model-step").toLongLong() > before);
  follower.kill();
  follower.waitForFinished(10000);
}

// Slow clients, as many as there are connection threads and more, each sending a byte of its
// request every 300 ms (inside the read timeout) for as long as the test runs: /health must
// still be answered. Before, every connection thread waited on a trickler and /health got
// nothing until they stopped. The 30 s are a hang guard, not a speed.
void TestServe::tricklersDoNotStarveHealth() {
  QProcess server;
  int port = 0;
  QVERIFY(startServer(server, {"--checkpoint", checkpoint_, "--connections", "4"}, &port));
  // Eight clients on a thread of their own, each sending one byte of its request every 300 ms,
  // never the last ones; one the server cuts off connects again. Stopped and joined however the
  // test ends.
  struct Tricklers {
    std::atomic<bool> running{true};
    std::atomic<int> sent{0};
    std::thread thread;
    ~Tricklers() {
      running.store(false);
      if (thread.joinable()) thread.join();
    }
  } tricklers;
  tricklers.thread = std::thread([&tricklers, port] {
    const QByteArray slow = "GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + QByteArray(600, 'a') + "\r\n\r\n";
    struct Client {
      int fd = -1;
      int next = 0;
    };
    std::vector<Client> clients(8);
    while (tricklers.running.load()) {
      for (Client& client : clients) {
        if (client.fd < 0) {
          client.fd = connectTo(port);
          client.next = 0;
          if (client.fd < 0) continue;
        }
        if (client.next >= slow.size() - 2 || ::send(client.fd, slow.constData() + client.next, 1, MSG_NOSIGNAL) != 1) {
          ::close(client.fd);
          client.fd = -1;
          continue;
        }
        ++client.next;
        ++tricklers.sent;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    for (Client& client : clients)
      if (client.fd >= 0) ::close(client.fd);
  });
  QTRY_VERIFY_WITH_TIMEOUT(tricklers.sent.load() >= 24, 30000);  // every trickler is some bytes into its request
  QElapsedTimer clock;
  clock.start();
  const HttpReply health = request(port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 30000);
  qInfo("/health answered %d after %lld ms, with 8 tricklers on 4 connection threads", health.status,
        static_cast<long long>(clock.elapsed()));
  QCOMPARE(health.status, 200);
  QCOMPARE(QJsonDocument::fromJson(health.body).object()["status"].toString(), QString("ok"));
  server.kill();
  server.waitForFinished(10000);
}

// The scratch folder of walks: a fresh name nobody could plant a link at beforehand (it was
// $TMPDIR/streetgan-serve-<pid>-<i>, taken when it existed), private to the user, and gone after
// the server stops.
void TestServe::scratchFolderIsPrivateAndRemoved() {
  QTemporaryDir tmp;
  QVERIFY(tmp.isValid());
  QProcess server;
  server.setProcessEnvironment(environmentWith("TMPDIR", tmp.path()));
  int port = 0;
  QVERIFY(startServer(server, {"--checkpoint", checkpoint_}, &port));
  const HttpReply walk = get(port, "/gan_gifs?frames=4&seed=1&size=32");
  QCOMPARE(walk.status, 200);
  const QFileInfoList entries =
      QDir(tmp.path()).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System);
  QStringList names;
  for (const QFileInfo& entry : entries) names << entry.fileName();
  QCOMPARE(entries.size(), 1);  // one folder for the server, whatever its number of workers
  const QFileInfo scratch = entries.front();
  QVERIFY2(QRegularExpression("^streetgan-serve-[A-Za-z0-9]{6}$").match(scratch.fileName()).hasMatch(),
           qPrintable(names.join(", ")));
  QVERIFY(!scratch.fileName().contains(QString::number(server.processId())));
  QVERIFY(scratch.isDir());
  QVERIFY(!scratch.isSymLink());
  const auto others = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther |
                      QFileDevice::WriteOther | QFileDevice::ExeOther;
  QVERIFY2((scratch.permissions() & others).toInt() == 0, "the scratch folder is open to others (not mode 0700)");
  ::kill(static_cast<pid_t>(server.processId()), SIGTERM);
  QVERIFY(server.waitForFinished(60000));
  QCOMPARE(server.exitStatus(), QProcess::NormalExit);
  QCOMPARE(server.exitCode(), 0);
  QVERIFY2(QDir(tmp.path()).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System),
           "the scratch folder was left behind");
}

// TMPDIR naming a folder that does not exist: the workers' std::filesystem::temp_directory_path()
// threw outside any try, and serve aborted (134). Now one plain line, exit 1, at start.
void TestServe::missingTmpdirIsReportedPlainly() {
  QProcess server;
  server.setProcessEnvironment(environmentWith("TMPDIR", dir_.filePath("no-such-folder")));
  server.start(STREETGAN_CLI, {"serve", "--checkpoint", checkpoint_, "--port", "0"});
  QVERIFY(server.waitForStarted(10000));
  const bool ended = endsWithin(server, 120000);  // the hang guard
  const QString err = QString::fromUtf8(server.readAllStandardError());
  QVERIFY2(ended, qPrintable(err));
  QCOMPARE(server.exitStatus(), QProcess::NormalExit);
  QCOMPARE(server.exitCode(), 1);
  const QStringList lines = err.trimmed().split('\n');
  QVERIFY2(lines.back().startsWith("streetgan serve: cannot make a scratch folder in ") && lines.back().contains("no-such-folder") &&
               lines.back().contains("TMPDIR"),
           qPrintable(err));
  QVERIFY2(!err.contains("terminate"), qPrintable(err));
}

// A newer checkpoint whose zip has a version record of 23 digits: LibTorch's reader throws
// std::out_of_range (not c10::Error), which the follower did not catch: abort. Now it is reported
// once and the model in use stays.
void TestServe::followerSurvivesACheckpointLibTorchThrowsOn() {
  const QString run = copyOfRun("out-of-range-run");
  QVERIFY(!run.isEmpty());
  QProcess server;
  int port = 0;
  QVERIFY(startServer(server, {"--run", run}, &port));
  const QString bad = run + "/checkpoints/step-9999999999.pt";
  QFile file(bad);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(storedZip("archive/version", "99999999999999999999999\n"));
  file.close();
  ErrorLog err{server, {}};
  // The follower looks every 5 s; 60 s is the hang guard.
  QTRY_VERIFY_WITH_TIMEOUT(err.contains("step-9999999999.pt") || server.state() != QProcess::Running, 60000);
  QVERIFY2(server.state() == QProcess::Running, qPrintable(err.text));
  QVERIFY2(err.contains("still serving"), qPrintable(err.text));
  const HttpReply health = get(port, "/health");
  QCOMPARE(health.status, 200);
  QVERIFY(QJsonDocument::fromJson(health.body).object()["model"].toObject()["checkpoint"].toString().endsWith(
      QFileInfo(checkpoint_).fileName()));
  QCOMPARE(get(port, "/gan_imgs?n=4&seed=1").status, 200);
  server.kill();
  server.waitForFinished(10000);
}

// The follower switched to a newer checkpoint, and training pruned it before a worker had loaded
// it: every render was answered 500. Now the workers copy the model the follower read, and the
// file going away changes nothing.
void TestServe::keepsServingWhenTheFollowedCheckpointIsPruned() {
  const QString run = copyOfRun("pruned-run");
  QVERIFY(!run.isEmpty());
  QProcess server;
  int port = 0;
  QVERIFY(startServer(server, {"--run", run}, &port));
  QCOMPARE(get(port, "/gan_imgs?n=4&seed=1").status, 200);  // the workers hold the first model
  const QString newer = run + "/checkpoints/step-9000000000.pt";
  QVERIFY(QFile::copy(checkpoint_, newer));
  auto serving = [&] {
    return QJsonDocument::fromJson(get(port, "/health").body).object()["model"].toObject()["checkpoint"].toString();
  };
  QTRY_VERIFY_WITH_TIMEOUT(serving().endsWith("step-9000000000.pt"), 60000);  // the follower switched
  QVERIFY(QFile::remove(newer));                                               // … and it is pruned
  for (int i = 0; i < 4; ++i) {  // more than the workers: each one switches
    const HttpReply grid = get(port, "/gan_imgs?n=4&seed=" + QByteArray::number(i));
    QVERIFY2(grid.status == 200, grid.body.constData());
  }
  QVERIFY(serving().endsWith("step-9000000000.pt"));
  server.kill();
  server.waitForFinished(10000);
}

// More connection threads than the system allows (a limit on memory here; on processes, as
// `ulimit -u`, alike): cpp-httplib's thread pool threw from its constructor and the process hung
// forever in pthread_cond_destroy, deaf to SIGTERM. Now serve says so at start and exits 1.
void TestServe::connectionThreadsThatCannotStartFailAtStart() {
  // The address space of a server with few threads, measured …
  QProcess small;
  int port = 0;
  QVERIFY(startServer(small, {"--checkpoint", checkpoint_, "--connections", "4"}, &port));
  const qint64 base = virtualMemoryOf(small.processId());
  small.kill();
  small.waitForFinished(10000);
  QVERIFY(base > 0);
  // … and 512 MiB more: far from enough for 1024 thread stacks of 8 MiB.
  const auto limit = static_cast<rlim_t>(base + 512LL * 1024 * 1024);
  QProcess limited;
  limited.setChildProcessModifier([limit] {
    rlimit stack{};
    if (::getrlimit(RLIMIT_STACK, &stack) == 0) {
      stack.rlim_cur = std::min<rlim_t>(8u << 20, stack.rlim_max);
      ::setrlimit(RLIMIT_STACK, &stack);
    }
    const rlimit memory{limit, limit};
    ::setrlimit(RLIMIT_AS, &memory);
  });
  limited.start(STREETGAN_CLI, {"serve", "--checkpoint", checkpoint_, "--port", "0", "--connections", "1024"});
  QVERIFY(limited.waitForStarted(10000));
  const bool ended = endsWithin(limited, 120000);  // the hang guard
  const QString err = QString::fromUtf8(limited.readAllStandardError());
  QVERIFY2(ended, qPrintable("serve hung when the system refused its threads: " + err));
  QCOMPARE(limited.exitStatus(), QProcess::NormalExit);
  QCOMPARE(limited.exitCode(), 1);
  QVERIFY2(err.contains("cannot start 1024 connection threads") && err.contains("--connections"), qPrintable(err));
}

void TestServe::tooManyConnectionsIsAUsageError() {
  const CliResult result = runCli({"serve", "--checkpoint", checkpoint_, "--port", "0", "--connections", "4096"}, 60000);
  QCOMPARE(result.exit_code, 2);
  QVERIFY2(result.err.contains("--connections") && result.err.contains("1024"), qPrintable(result.err));
}

// A SIGTERM after serve has started but before it listens: it ends the command cleanly (exit 0,
// the scratch folder removed), instead of being lost (the stop came before cpp-httplib's listen
// loop ran, and its stop() did nothing) or killing it.
void TestServe::sigtermWhileLoadingStopsCleanly() {
  QTemporaryDir tmp;
  QVERIFY(tmp.isValid());
  QProcess server;
  server.setProcessEnvironment(environmentWith("TMPDIR", tmp.path()));
  server.start(STREETGAN_CLI, {"serve", "--checkpoint", checkpoint_, "--port", "0"});
  QVERIFY(server.waitForStarted(10000));
  ErrorLog err{server, {}};
  QTRY_VERIFY_WITH_TIMEOUT(err.contains("streetgan serve: loading") || server.state() != QProcess::Running, 60000);
  QVERIFY2(server.state() == QProcess::Running, qPrintable(err.text));
  ::kill(static_cast<pid_t>(server.processId()), SIGTERM);
  const bool ended = endsWithin(server, 60000);  // the hang guard
  err.contains("");
  QVERIFY2(ended, qPrintable("a SIGTERM before listening was lost: " + err.text));
  QCOMPARE(server.exitStatus(), QProcess::NormalExit);
  QCOMPARE(server.exitCode(), 0);
  QVERIFY2(err.text.contains("streetgan serve: stopped"), qPrintable(err.text));
  QVERIFY(QDir(tmp.path()).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System));
}

// A SIGTERM while renders wait in the queue: serve printed "stopped" and went on rendering every
// queued walk (minutes for large ones) before it exited. Now the queued ones are answered 503 at
// once, the walk being made stops, and the command ends.
void TestServe::sigtermAnswersQueuedRendersAndStops() {
  QTemporaryDir tmp;
  QVERIFY(tmp.isValid());
  QProcess server;
  server.setProcessEnvironment(environmentWith("TMPDIR", tmp.path()));
  int port = 0;
  QVERIFY(startServer(server, {"--checkpoint", checkpoint_, "--workers", "1", "--queue", "6", "--max-frames", "400"}, &port));
  std::vector<std::future<HttpReply>> replies;
  for (int i = 0; i < 6; ++i)
    replies.push_back(std::async(std::launch::async, [port, i] {
      return get(port, "/gan_gifs?frames=400&size=256&seed=" + QByteArray::number(300 + i));
    }));
  // All six must have reached the server before SIGTERM: one that had not yet connected would be
  // refused by the closed socket, which says nothing about the queue (a slow CI machine did that).
  auto taken = [port] {
    const QJsonObject health = QJsonDocument::fromJson(get(port, "/health").body).object();
    return health.value("queued").toInt() + health.value("rendering").toInt();
  };
  QTRY_COMPARE_WITH_TIMEOUT(taken(), 6, 60000);
  ::kill(static_cast<pid_t>(server.processId()), SIGTERM);
  const bool ended = endsWithin(server, 120000);  // the hang guard
  QVERIFY2(ended, "serve did not end after SIGTERM");
  int rendered = 0, stopping = 0;
  for (auto& future : replies) {
    const HttpReply reply = future.get();
    if (reply.status == 200) ++rendered;
    if (reply.status == 503 && reply.body.contains("the server is stopping")) ++stopping;
  }
  qInfo("%d walks answered, %d answered 503 (stopping)", rendered, stopping);
  QVERIFY2(stopping >= 3, "the queued renders were made after SIGTERM instead of answered 503");
  QCOMPARE(rendered + stopping, 6);
  QCOMPARE(server.exitStatus(), QProcess::NormalExit);
  QCOMPARE(server.exitCode(), 0);
  QVERIFY2(QDir(tmp.path()).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System),
           "the scratch folder was left behind");
}

void TestServe::sigtermStops() {
  ::kill(static_cast<pid_t>(server_.processId()), SIGTERM);
  QVERIFY(server_.waitForFinished(20000));
  QCOMPARE(server_.exitStatus(), QProcess::NormalExit);
  QCOMPARE(server_.exitCode(), 0);
  QVERIFY(QString::fromUtf8(server_.readAllStandardError()).contains("stopped"));
  QCOMPARE(get(port_, "/health").status, 0);
}

STREETGAN_TEST_GUILESS_MAIN(TestServe)
#include "tst_serve.moc"
