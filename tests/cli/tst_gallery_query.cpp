// The two pure parsers of `streetgan serve`, without a server: parseGalleryQuery (a render
// route's query string into a job, every number checked, 19 digits and more included) and
// RequestHeadScanner (a connection's bytes: a whole request, not yet, or refused, with the bounds
// on header lines, head size, request line and body, fed whole or one byte at a time).
#include "app/serve/gallery_query.h"
#include "app/serve/request_head_scanner.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <string>

using streetgan::cli::GalleryJob;
using streetgan::cli::GalleryQueryLimits;
using streetgan::cli::parseGalleryQuery;
using streetgan::cli::queryOfTarget;
using streetgan::cli::RequestHeadScanner;

namespace {

GalleryQueryLimits limits() {
  GalleryQueryLimits l;
  l.max_n = 64;
  l.max_frames = 400;
  l.max_size = 1024;
  l.grid_size = 64;
  return l;
}

std::string headWithHeaders(int count) {
  std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 1; i < count; ++i) head += "X-A: b\r\n";
  return head + "\r\n";
}

}  // namespace

class TestGalleryQuery : public QObject {
  Q_OBJECT
private slots:
  void defaults();
  void values();
  void refusals_data();
  void refusals();
  void targets();
  void wholeRequest();
  void emptyLinesBeforeTheRequest();
  void oneByteAtATime();
  void pipelinedAndReset();
  void body();
  void headRefusals_data();
  void headRefusals();
};

void TestGalleryQuery::defaults() {
  auto grid = parseGalleryQuery(GalleryJob::Kind::Grid, "", limits());
  QVERIFY(grid.ok());
  QCOMPARE(grid->count, 16);
  QVERIFY(!grid->seed.has_value());
  QCOMPARE(grid->size, 64);
  auto walk = parseGalleryQuery(GalleryJob::Kind::Walk, "", limits());
  QVERIFY(walk.ok());
  QCOMPARE(walk->count, 16);
  QCOMPARE(walk->size, 256);
  QCOMPARE(walk->format, std::string("gif"));
}

void TestGalleryQuery::values() {
  auto grid = parseGalleryQuery(GalleryJob::Kind::Grid, "n=%34&seed=999999999999999999&size=128&foo=bar&n=5", limits());
  QVERIFY2(grid.ok(), grid.error().c_str());
  QCOMPARE(grid->count, 4);  // percent-decoded; the first n counts
  QCOMPARE(*grid->seed, std::uint64_t{999999999999999999ULL});
  QCOMPARE(grid->size, 128);
  auto walk = parseGalleryQuery(GalleryJob::Kind::Walk, "frames=0000012&size=33&format=webm&seed=0", limits());
  QVERIFY2(walk.ok(), walk.error().c_str());
  QCOMPARE(walk->count, 12);
  QCOMPARE(walk->size, 32);  // even
  QCOMPARE(walk->format, std::string("webm"));
  QCOMPARE(*walk->seed, std::uint64_t{0});
  // Exactly the pixel budget is allowed.
  GalleryQueryLimits budget = limits();
  budget.max_pixels = 16 * 100 * 100;
  QVERIFY(parseGalleryQuery(GalleryJob::Kind::Grid, "n=16&size=100", budget).ok());
  QVERIFY(!parseGalleryQuery(GalleryJob::Kind::Grid, "n=16&size=101", budget).ok());
}

void TestGalleryQuery::refusals_data() {
  QTest::addColumn<bool>("grid");
  QTest::addColumn<QString>("query");
  QTest::addColumn<QString>("says");
  QTest::newRow("19-digit seed") << true << "seed=9999999999999999999"
                                 << "seed must be a whole number from 0 to 999999999999999999 (got 9999999999999999999)";
  QTest::newRow("20-digit n") << true << "n=18446744073709551616" << "n must be a whole number from 1 to 64 (got 18446744073709551616)";
  QTest::newRow("100-digit size") << true << ("size=" + QString(100, '9')) << "size must be a whole number from 8 to 1024 (got 9999";
  QTest::newRow("negative") << true << "n=-1" << "n must be a whole number from 1 to 64 (got \"-1\")";
  QTest::newRow("plus is a space") << true << "n=+4" << "(got \" 4\")";
  QTest::newRow("empty") << true << "n=" << "(got \"\")";
  QTest::newRow("no value") << true << "n" << "n must be";
  QTest::newRow("exponent") << true << "seed=1e5" << "seed must be";
  QTest::newRow("control bytes shown as ?") << true << "n=%00%0d%0a1" << "(got \"???1\")";
  QTest::newRow("frames=1") << false << "frames=1" << "frames must be a whole number from 2 to 400 (got 1)";
  QTest::newRow("19-digit frames") << false << "frames=1234567890123456789" << "frames must be";
  QTest::newRow("size 0") << false << "size=0" << "size must be a whole number from 8 to 1024";
  QTest::newRow("format") << false << "format=avi" << "format must be gif, mp4 or webm";
  // Each number in its range, the product past the pixel budget (40,000,000 by default): a grid
  // of 64 images of 1024 pixels would be 805 MB of floats in one worker.
  QTest::newRow("grid pixels") << true << "n=64&size=1024"
                               << "n x size x size must be at most 40000000 pixels (got 64 x 1024 x 1024 = 67108864)";
  QTest::newRow("walk pixels, size made even first") << false << "frames=400&size=333"
                                                     << "frames x size x size must be at most 40000000 pixels (got 400 x 332 x 332 = 44089600)";
}

void TestGalleryQuery::refusals() {
  QFETCH(bool, grid);
  QFETCH(QString, query);
  QFETCH(QString, says);
  const std::string text = query.toStdString();
  auto parsed = parseGalleryQuery(grid ? GalleryJob::Kind::Grid : GalleryJob::Kind::Walk, text, limits());
  QVERIFY(!parsed.ok());
  QVERIFY2(QString::fromStdString(parsed.error()).contains(says), parsed.error().c_str());
  QVERIFY(parsed.error().find('\n') == std::string::npos);
}

void TestGalleryQuery::targets() {
  QCOMPARE(std::string(queryOfTarget("/gan_imgs?n=4&seed=1")), std::string("n=4&seed=1"));
  QCOMPARE(std::string(queryOfTarget("/gan_imgs?n=4#frag")), std::string("n=4"));
  QCOMPARE(std::string(queryOfTarget("/gan_imgs")), std::string());
  QCOMPARE(std::string(queryOfTarget("/gan_imgs?")), std::string());
}

void TestGalleryQuery::wholeRequest() {
  const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  RequestHeadScanner scanner;
  const auto verdict = scanner.scan(request);
  QVERIFY(verdict.state == RequestHeadScanner::State::Complete);
  QCOMPARE(verdict.request_size, request.size());
}

// Empty lines before the request line are skipped (RFC 9112, 2.2): cpp-httplib answered the first
// with 400 and then the request.
void TestGalleryQuery::emptyLinesBeforeTheRequest() {
  const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  RequestHeadScanner scanner;
  const auto verdict = scanner.scan("\r\n\r\n" + request);
  QVERIFY(verdict.state == RequestHeadScanner::State::Complete);
  QCOMPARE(verdict.request_start, std::size_t{4});
  QCOMPARE(verdict.request_size, request.size() + 4);
  // Only empty lines, without end: refused once they pass the head's limit.
  RequestHeadScanner flood;
  std::string lines;
  for (int i = 0; i < 20000; ++i) lines += "\r\n";
  const auto refused = flood.scan(lines);
  QVERIFY(refused.state == RequestHeadScanner::State::Refused);
  QCOMPARE(refused.status, 400);
}

void TestGalleryQuery::oneByteAtATime() {
  const std::string request = headWithHeaders(100);  // exactly the most header lines
  RequestHeadScanner scanner;
  for (std::size_t n = 1; n < request.size(); ++n)
    QVERIFY(scanner.scan(std::string_view(request).substr(0, n)).state == RequestHeadScanner::State::Incomplete);
  const auto verdict = scanner.scan(request);
  QVERIFY2(verdict.state == RequestHeadScanner::State::Complete, verdict.reason.c_str());
  QCOMPARE(verdict.request_size, request.size());
}

void TestGalleryQuery::pipelinedAndReset() {
  const std::string first = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string second = "GET / HTTP/1.1\r\nHost: y\r\nConnection: close\r\n\r\n";
  RequestHeadScanner scanner;
  auto verdict = scanner.scan(first + second);
  QVERIFY(verdict.state == RequestHeadScanner::State::Complete);
  QCOMPARE(verdict.request_size, first.size());
  scanner.reset();
  verdict = scanner.scan(second);
  QVERIFY(verdict.state == RequestHeadScanner::State::Complete);
  QCOMPARE(verdict.request_size, second.size());
}

void TestGalleryQuery::body() {
  const std::string head = "POST /gan_imgs HTTP/1.1\r\nHost: x\r\ncontent-LENGTH:  3 \r\n\r\n";
  RequestHeadScanner scanner;
  QVERIFY(scanner.scan(head + "ab").state == RequestHeadScanner::State::Incomplete);
  const auto verdict = scanner.scan(head + "abcGET");
  QVERIFY(verdict.state == RequestHeadScanner::State::Complete);
  QCOMPARE(verdict.request_size, head.size() + 3);
  // One byte range is a request like any other (a video player asks for bytes=0-).
  RequestHeadScanner ranged;
  QVERIFY(ranged.scan("GET /gan_gifs HTTP/1.1\r\nRange: bytes=0-\r\n\r\n").state == RequestHeadScanner::State::Complete);
}

void TestGalleryQuery::headRefusals_data() {
  QTest::addColumn<QByteArray>("bytes");
  QTest::addColumn<int>("status");
  QTest::addColumn<QString>("says");
  QTest::newRow("101 header lines") << QByteArray::fromStdString(headWithHeaders(101)) << 431 << "more than 100 header lines";
  QTest::newRow("5000 header lines, unfinished")
      << QByteArray::fromStdString(headWithHeaders(5000)).chopped(2) << 431 << "more than 100 header lines";
  QTest::newRow("request line over 8 KiB, unfinished") << ("GET /?" + QByteArray(9000, 'a')) << 414 << "request line";
  QByteArray large = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 40; ++i) large += "X-Pad: " + QByteArray(1000, 'a') + "\r\n";
  QTest::newRow("head over 32 KiB") << large << 431 << "head is longer than 32768 bytes";
  QTest::newRow("header line over 8 KiB, unfinished") << ("GET / HTTP/1.1\r\nX-Long: " + QByteArray(9000, 'a')) << 431
                                                      << "header line";
  QTest::newRow("Content-Length not a number") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 3x\r\n\r\n") << 400
                                               << "not a number";
  QTest::newRow("Content-Length of 23 digits") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n")
                                               << 413 << "at most 16384 bytes";
  QTest::newRow("Content-Length too large") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 16385\r\n\r\n") << 413 << "at most";
  QTest::newRow("two Content-Lengths") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") << 400
                                       << "two different";
  QTest::newRow("two byte ranges") << QByteArray("GET / HTTP/1.1\r\nRange: bytes=0-,0-\r\n\r\n") << 416
                                   << "one byte range";
  QTest::newRow("two Range headers") << QByteArray("GET / HTTP/1.1\r\nRange: bytes=0-1\r\nrange: bytes=2-3\r\n\r\n")
                                     << 416 << "one byte range";
  QTest::newRow("bare LF request line") << QByteArray("GET / HTTP/1.1\nHost: x\n\n") << 400 << "CR LF";
  QTest::newRow("bare LF header line") << QByteArray("GET / HTTP/1.1\r\nHost: x\n\r\n") << 400 << "CR LF";
  QTest::newRow("chunked") << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") << 501 << "Transfer-Encoding";
}

void TestGalleryQuery::headRefusals() {
  QFETCH(QByteArray, bytes);
  QFETCH(int, status);
  QFETCH(QString, says);
  const std::string text = bytes.toStdString();
  RequestHeadScanner scanner;
  const auto verdict = scanner.scan(text);
  QVERIFY(verdict.state == RequestHeadScanner::State::Refused);
  QCOMPARE(verdict.status, status);
  QVERIFY2(QString::fromStdString(verdict.reason).contains(says), verdict.reason.c_str());
  // Fed one byte at a time, the same refusal comes, and no later than the whole.
  RequestHeadScanner slow;
  RequestHeadScanner::Verdict last;
  for (std::size_t n = 1; n <= text.size() && last.state == RequestHeadScanner::State::Incomplete; ++n)
    last = slow.scan(std::string_view(text).substr(0, n));
  QVERIFY(last.state == RequestHeadScanner::State::Refused);
  QCOMPARE(last.status, status);
}

STREETGAN_TEST_GUILESS_MAIN(TestGalleryQuery)
#include "tst_gallery_query.moc"
