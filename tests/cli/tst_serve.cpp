// `streetgan serve` over real HTTP on loopback: each route's content type and content (PNG and
// GIF decoded: size, frames, loop), seeds reproducible and equal to `streetgan sample`, hostile
// requests answered 4xx or cut off while /health keeps answering, a full render queue answered
// 503 with Retry-After, a trickling client cut off, headless Chromium loading the gallery page
// (a screenshot is saved), and SIGTERM ending the server cleanly.
#include "tests/support/test_support.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <map>
#include <signal.h>

using namespace streetgan::test;

namespace {

struct HttpReply {
  int status = 0;  ///< 0: the server closed the connection without an answer
  std::map<QString, QString> headers;  ///< names in lower case
  QByteArray body;
  QString header(const QString& name) const {
    auto found = headers.find(name.toLower());
    return found == headers.end() ? QString() : found->second;
  }
};

int connectTo(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until the server closes the connection (or `timeout_ms` passes).
QByteArray readAll(int fd, int timeout_ms) {
  QByteArray data;
  QElapsedTimer clock;
  clock.start();
  char buffer[65536];
  while (clock.elapsed() < timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<int>(n));
  }
  return data;
}

HttpReply parse(const QByteArray& data) {
  HttpReply reply;
  const int end = data.indexOf("\r\n\r\n");
  if (end < 0) return reply;
  const QList<QByteArray> lines = data.left(end).split('\n');
  reply.status = lines.value(0).split(' ').value(1).toInt();
  for (int i = 1; i < lines.size(); ++i) {
    const int colon = lines[i].indexOf(':');
    if (colon > 0) reply.headers[QString(lines[i].left(colon)).trimmed().toLower()] = QString(lines[i].mid(colon + 1)).trimmed();
  }
  reply.body = data.mid(end + 4);
  return reply;
}

HttpReply request(int port, const QByteArray& raw, int timeout_ms = 120000) {
  const int fd = connectTo(port);
  if (fd < 0) return {};
  ::send(fd, raw.constData(), static_cast<size_t>(raw.size()), MSG_NOSIGNAL);
  HttpReply reply = parse(readAll(fd, timeout_ms));
  ::close(fd);
  return reply;
}

HttpReply get(int port, const QByteArray& target) {
  return request(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

QImage decodePng(const QByteArray& bytes) { return QImage::fromData(bytes, "PNG"); }

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
  void sigtermStops();

private:
  bool startServer(QProcess& process, const QStringList& args, int* port);
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
  row("unknown format", "/gan_gifs?format=avi", 400, "format must be gif, mp4 or webm");
  row("unknown route", "/admin", 404, "not found");
  row("path traversal", "/../../../../etc/passwd", 404, "");
  row("encoded traversal", "/gan_imgs/..%2F..%2Fetc%2Fpasswd", 404, "");
  row("one megabyte query", "/gan_imgs?n=" + QByteArray(1 << 20, '1'), 414, "");
  QTest::newRow("POST") << QByteArray("POST /gan_imgs HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")
                        << 404 << "";
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
  qInfo("cut off after %lld ms", static_cast<long long>(clock.elapsed()));
  QVERIFY(clock.elapsed() < 10000);
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
  QVERIFY(health_ms < 2000);
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

void TestServe::sigtermStops() {
  ::kill(static_cast<pid_t>(server_.processId()), SIGTERM);
  QVERIFY(server_.waitForFinished(20000));
  QCOMPARE(server_.exitStatus(), QProcess::NormalExit);
  QCOMPARE(server_.exitCode(), 0);
  QVERIFY(QString::fromUtf8(server_.readAllStandardError()).contains("stopped"));
  QCOMPARE(get(port_, "/health").status, 0);
}

QTEST_GUILESS_MAIN(TestServe)
#include "tst_serve.moc"
