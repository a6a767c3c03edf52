// `streetgan publish` through the real program: the page it writes, served by its own --preview,
// opened in headless Chromium and Firefox (Debian's chromium and firefox-esr, driven by Puppeteer:
// tests/cli/site_page_check.js) renders `streetgan sample --latents`'s images of its scenes within 2/255, plays walks, moves a
// direction, fits a phone; a missing or corrupt model shows a message on the page; a second publish
// replaces the first whole; bad input is refused with one line, nothing written.
#include "core/formats/npy_array.h"
#include "tests/cli/http_test_client.h"
#include "tests/support/test_suite.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

#include <sys/stat.h>

using namespace streetgan;
using namespace streetgan::test;

namespace {

QJsonObject jsonObject(const QByteArray& text) { return QJsonDocument::fromJson(text.trimmed()).object(); }

// The page's first latents (scenes.json) as the (N, nz) float32 .npy `sample --latents` reads.
bool writeSceneLatents(const QJsonObject& scenes, const QString& path) {
  std::vector<float> values;
  const QJsonArray latents = scenes["latents"].toArray();
  for (const auto& latent : latents)
    for (const auto& value : latent.toArray()) values.push_back(float(value.toDouble()));
  const std::int64_t nz = latents.isEmpty() ? 0 : latents[0].toArray().size();
  const std::string bytes = NpyArray::toBytes({latents.size(), nz}, values.data(), values.size());
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
}

// Everything in `folder`, hidden names too: what a refused publish must leave as it was.
QStringList entriesOf(const QString& folder) {
  return QDir(folder).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System | QDir::Hidden);
}

}  // namespace

class TestPublish : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void pageRendersSampleImages_data();
  void pageRendersSampleImages();
  void brokenModelShownOnPage_data();
  void brokenModelShownOnPage();
  void republishReplacesWhole();
  void previewServesOnlyThePage();
  void badPublishRefused_data();
  void badPublishRefused();

private:
  bool startPreview(QProcess& process, const QStringList& args, QString* url);
  QJsonObject openPage(const QString& url, const QString& shot, const QString& expected = {},
                       const QString& browser = "chromium");
  QTemporaryDir dir_;
  QString run_, walk_;
};

void TestPublish::initTestCase() {
  QVERIFY2(QDir(STREETGAN_NPM_MODULES "/puppeteer-core").exists(),
           "puppeteer-core is not in " STREETGAN_NPM_MODULES ": the build runs npm ci (web/package-lock.json) when npm is installed");
  for (const char* browser : {"chromium", "firefox-esr"})
    QVERIFY2(!QStandardPaths::findExecutable(browser).isEmpty(),
             qPrintable(QString(browser) + " not found: install it (packaging/install-deps.sh does)"));
  const QString data = makeTinyDataset(dir_.filePath("data"));
  run_ = dir_.filePath("run");
  QStringList args = tinyTrainArgs(data, run_, 1);
  args[args.indexOf("-t") + 1] = R"({"batch_size":8,"ngf":8,"ndf":8,"nz":16,"ema":{"half_life_images":50}})";
  CliResult r = runCli(args);
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  r = runCli({"directions", "--checkpoint", run_, "--top", "2", "--save", "sefa"});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  walk_ = dir_.filePath("walk.json");
  r = runCli({"walk", "--checkpoint", run_, "--seeds", "3,14", "--frames-per-key", "5", "--size", "64", "--out",
              dir_.filePath("walk.gif"), "--save-walk", walk_});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
}

bool TestPublish::startPreview(QProcess& process, const QStringList& args, QString* url) {
  process.setProgram(STREETGAN_CLI);
  process.setArguments(QStringList{"publish"} + args + QStringList{"--preview", "--port", "0"});
  process.start();
  if (!process.waitForStarted(10000)) return false;
  QByteArray out;
  QElapsedTimer clock;
  clock.start();
  static const QRegularExpression address("on (http://127\\.0\\.0\\.1:\\d+/)");
  while (clock.elapsed() < 300000 && process.state() == QProcess::Running) {
    process.waitForReadyRead(100);
    out += process.readAllStandardOutput();
    if (const auto match = address.match(QString::fromUtf8(out)); match.hasMatch()) {
      *url = match.captured(1);
      return true;
    }
  }
  qWarning("%s%s", out.constData(), process.readAllStandardError().constData());
  return false;
}

QJsonObject TestPublish::openPage(const QString& url, const QString& shot, const QString& expected, const QString& browser) {
  qputenv("NODE_PATH", STREETGAN_NPM_MODULES);
  qputenv("BROWSER", browser.toUtf8());
  QStringList args{STREETGAN_SOURCE_DIR "/tests/cli/site_page_check.js", url, shot};
  if (!expected.isEmpty()) args << expected;
  const CliResult r = runProgram("node", args, 600000);
  if (r.exit_code != 0) qWarning("node: %s%s", qPrintable(r.out), qPrintable(r.err));
  return jsonObject(r.out.toUtf8());
}

void TestPublish::pageRendersSampleImages_data() {
  QTest::addColumn<QString>("browser");
  QTest::newRow("chromium") << "chromium";
  QTest::newRow("firefox") << "firefox";
}

void TestPublish::pageRendersSampleImages() {
  QFETCH(QString, browser);
  const QString site = dir_.filePath("site-" + browser);
  QProcess preview;
  QString url;
  QVERIFY(startPreview(preview, {"--run", run_, "--out", site, "--title", "Test streets", "--walk", walk_,
                                 "--frames-per-key", "4", "--scenes", "8", "--seed", "5"}, &url));
  for (const char* file : {"index.html", "app.js", "style.css", "model.onnx", "scenes.json", "ort/LICENSE",
                           "ort/ort.webgpu.min.mjs", "ort/ort-wasm-simd-threaded.asyncify.wasm"})
    QVERIFY2(QFile::exists(site + "/" + file), file);
  QVERIFY(readFileBytes(site + "/ort/LICENSE").contains("Copyright (c) Microsoft Corporation"));
  const QJsonObject scenes = jsonObject(readFileBytes(site + "/scenes.json"));
  QCOMPARE(scenes["format"].toString(), QString("streetgan-site"));
  QCOMPARE(scenes["title"].toString(), QString("Test streets"));
  QCOMPARE(scenes["nz"].toInt(), 16);
  QCOMPARE(scenes["generator"].toString(), QString("ema"));
  QCOMPARE(scenes["seeds"].toArray(), QJsonArray({5, 6, 7, 8, 9, 10, 11, 12}));
  QCOMPARE(scenes["directions"].toArray().size(), 2);
  QCOMPARE(scenes["walk"].toObject()["frames"].toArray().size(), 6);  // two keys, open: (2 − 1)·5 + 1

  const QString latents = dir_.filePath(browser + "-z.npy"), ours = dir_.filePath(browser + "-ours.npy");
  QVERIFY(writeSceneLatents(scenes, latents));
  const CliResult sampled = runCli({"sample", "--checkpoint", run_, "--latents", latents, "--out", ours});
  QVERIFY2(sampled.exit_code == 0, qPrintable(sampled.err));

  const QJsonObject page = openPage(url, testOutputDir() + "/publish-page-" + browser + ".png", ours, browser);
  const QByteArray seen = QJsonDocument(page).toJson(QJsonDocument::Compact);
  QCOMPARE(page["state"].toString(), QString("ready"));
  QCOMPARE(page["scenes"].toInt(), 8);
  QVERIFY2(page["largest_difference"].toInt(99) <= 2, seen.constData());
  QVERIFY2(page["direction_changes_grid"].toBool(), seen.constData());
  QVERIFY2(page["walk_frames_change"].toBool(), seen.constData());
  QVERIFY2(page["walk_caption"].toString().endsWith("of 8"), seen.constData());  // 2 scenes × 4 frames, a loop
  QVERIFY2(page["saved_walk_caption"].toString().endsWith("of 6"), seen.constData());
  QVERIFY2(!page["phone_overflows"].toBool(true), seen.constData());
  QVERIFY2(page["errors"].toArray().isEmpty(), seen.constData());
  QVERIFY2(!page.contains("failure"), seen.constData());

  preview.terminate();
  QVERIFY(preview.waitForFinished(60000));
  QCOMPARE(preview.exitCode(), 0);
}

void TestPublish::brokenModelShownOnPage_data() {
  QTest::addColumn<QByteArray>("model");  // model.onnx's bytes; empty: the file removed
  QTest::newRow("missing model") << QByteArray();
  QTest::newRow("corrupt model") << QByteArray("this is not an ONNX model\n").repeated(100);
}

void TestPublish::brokenModelShownOnPage() {
  QFETCH(QByteArray, model);
  const QString site = dir_.filePath(model.isEmpty() ? "site-missing" : "site-corrupt");
  const CliResult r = runCli({"publish", "--run", run_, "--out", site});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  QVERIFY(QFile::remove(site + "/model.onnx"));
  if (!model.isEmpty()) {
    QFile file(site + "/model.onnx");
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write(model) == model.size());
  }
  QProcess preview;
  QString url;
  QVERIFY(startPreview(preview, {"--out", site}, &url));
  const QString tag = QString(QTest::currentDataTag()).replace(' ', '-');
  const QJsonObject page = openPage(url, testOutputDir() + "/publish-" + tag + ".png");
  const QByteArray seen = QJsonDocument(page).toJson(QJsonDocument::Compact);
  QCOMPARE(page["state"].toString(), QString("failed"));
  QVERIFY2(page["status"].toString().startsWith("The model (model.onnx) could not be loaded: "), seen.constData());
  if (model.isEmpty()) QVERIFY2(page["status"].toString().contains("404"), seen.constData());
  preview.terminate();
  QVERIFY(preview.waitForFinished(60000));
}

void TestPublish::republishReplacesWhole() {
  const QString parent = dir_.filePath("again"), site = parent + "/site";
  QVERIFY(QDir().mkpath(parent));
  for (const QString title : {"First", "Second"}) {
    const CliResult r = runCli({"publish", "--checkpoint", run_, "--out", site + "/", "--title", title, "--directions", ""});
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("to " + site + ": "), qPrintable(r.out));
    QCOMPARE(jsonObject(readFileBytes(site + "/scenes.json"))["title"].toString(), title);
    QCOMPARE(jsonObject(readFileBytes(site + "/scenes.json"))["directions"].toArray().size(), 0);
    QCOMPARE(entriesOf(parent), QStringList{"site"});  // no staging folder left behind
    if (title == "First") {  // the user's own files beside the page: a GitHub Pages repository
      QVERIFY(QDir().mkpath(site + "/.git"));
      QFile cname(site + "/CNAME"), git(site + "/.git/HEAD");
      QVERIFY(cname.open(QIODevice::WriteOnly) && cname.write("streets.example.org\n") > 0);
      QVERIFY(git.open(QIODevice::WriteOnly) && git.write("ref: refs/heads/main\n") > 0);
    }
  }
  QCOMPARE(readFileBytes(site + "/CNAME"), QByteArray("streets.example.org\n"));
  QCOMPARE(readFileBytes(site + "/.git/HEAD"), QByteArray("ref: refs/heads/main\n"));
  // The model of a public page leaves out the run's config (its data set path).
  QVERIFY(!readFileBytes(site + "/model.onnx").contains("streetgan.config"));
  QVERIFY(readFileBytes(site + "/model.onnx").contains("streetgan.nz"));
}

void TestPublish::previewServesOnlyThePage() {
  const QString site = dir_.filePath("served");
  const CliResult r = runCli({"publish", "--run", run_, "--out", site});
  QVERIFY2(r.exit_code == 0, qPrintable(r.err));
  for (const char* name : {"/.env", "/notes.txt"}) {
    QFile file(site + name);
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write("SECRET=1\n") > 0);
  }
  QVERIFY(QFile::link(site + "/.env", site + "/linked.txt"));
  QProcess preview;
  QString url;
  QVERIFY(startPreview(preview, {"--out", site}, &url));
  const int port = QUrl(url).port();
  const QByteArray host = "Host: 127.0.0.1:" + QByteArray::number(port) + "\r\n";
  const auto get = [&](const QByteArray& target, const QByteArray& host_line) {
    return request(port, "GET " + target + " HTTP/1.1\r\n" + host_line + "Connection: close\r\n\r\n");
  };
  struct Expected { QByteArray target; int status; QString type; };
  for (const Expected& e : {Expected{"/", 200, "text/html; charset=utf-8"},
                            Expected{"/ort/ort-wasm-simd-threaded.asyncify.wasm", 200, "application/wasm"},
                            Expected{"/ort/ort.webgpu.min.mjs", 200, "text/javascript; charset=utf-8"},
                            Expected{"/scenes.json", 200, "application/json"},
                            Expected{"/notes.txt", 200, "text/plain; charset=utf-8"},
                            Expected{"/.env", 404, ""}, Expected{"/linked.txt", 404, ""},
                            Expected{"/../served/scenes.json", 404, ""}, Expected{"/%2e%2e/served/scenes.json", 404, ""}}) {
    const HttpReply reply = get(e.target, host);
    QVERIFY2(reply.status == e.status, e.target.constData());
    if (!e.type.isEmpty()) QCOMPARE(reply.headers.at("content-type"), e.type);
  }
  QCOMPARE(get("/scenes.json", "Host: localhost:" + QByteArray::number(port) + "\r\n").status, 200);
  QCOMPARE(get("/scenes.json", "Host: rebound.example\r\n").status, 421);
  preview.terminate();
  QVERIFY(preview.waitForFinished(60000));
  QCOMPARE(preview.exitCode(), 0);
}

void TestPublish::badPublishRefused_data() {
  QTest::addColumn<QStringList>("options");  // @RUN@, @DIR@ (a fresh folder) replaced
  QTest::addColumn<QString>("message");
  const QStringList run{"--run", "@RUN@"};
  QTest::newRow("folder not ours") << run + QStringList{"--out", "@DIR@/mine"}
      << "mine: exists and is not a page written by streetgan publish";
  QTest::newRow("folder a link") << run + QStringList{"--out", "@DIR@/link"} << "link: a symbolic link; give the folder itself";
  QTest::newRow("a FIFO") << run + QStringList{"--out", "@DIR@/fifo"} << "fifo: exists and is not a folder";
  QTest::newRow("a file") << run + QStringList{"--out", "@DIR@/file.txt"} << "file.txt: exists and is not a folder";
  QTest::newRow("no parent") << run + QStringList{"--out", "@DIR@/none/site"} << "does not exist; make it first";
  QTest::newRow("in the run's checkpoints") << run + QStringList{"--out", "@RUN@/checkpoints/site"}
      << "is inside a run's own folders";
  QTest::newRow("not a generator") << QStringList{"--checkpoint", "@DIR@/file.txt", "--out", "@DIR@/site"} << "file.txt";
  QTest::newRow("unknown direction") << run + QStringList{"--out", "@DIR@/site", "--directions", "sefa-1,tilt"}
      << "tilt.json: No such file or directory";
  QTest::newRow("walk missing") << run + QStringList{"--out", "@DIR@/site", "--walk", "@DIR@/nowalk.json"} << "nowalk.json";
  QTest::newRow("no scenes") << run + QStringList{"--out", "@DIR@/site", "--scenes", "0"} << "option '--scenes'";
  QTest::newRow("title with a newline") << run + QStringList{"--out", "@DIR@/site", "--title", "a\nb"}
      << "--title: control characters (a newline, a tab) are not allowed";
  QTest::newRow("no model") << QStringList{"--out", "@DIR@/site"} << "give either --run DIR or --checkpoint FILE";
  QTest::newRow("the current folder") << run + QStringList{"--out", "."} << "give the page's folder by its name";
  QTest::newRow("a direction twice") << run + QStringList{"--out", "@DIR@/site", "--directions", "sefa-1,sefa-1"}
      << "--directions: sefa-1 is named twice";
  QTest::newRow("preview on a bad port") << run + QStringList{"--out", "@DIR@/site", "--preview", "--port", "http"}
      << "option '--port'";
  QTest::newRow("port without preview") << run + QStringList{"--out", "@DIR@/site", "--port", "0"} << "--port goes with --preview";
  QTest::newRow("preview of a folder not ours") << QStringList{"--out", "@DIR@/mine", "--preview"}
      << "mine: exists and is not a page written by streetgan publish";
}

void TestPublish::badPublishRefused() {
  QFETCH(QStringList, options);
  QFETCH(QString, message);
  QTemporaryDir dir;
  QVERIFY(QDir().mkpath(dir.filePath("mine")));
  QFile keep(dir.filePath("mine/keep.txt"));
  QVERIFY(keep.open(QIODevice::WriteOnly) && keep.write("the user's\n") > 0);
  keep.close();
  QFile text(dir.filePath("file.txt"));
  QVERIFY(text.open(QIODevice::WriteOnly) && text.write("not a checkpoint\n") > 0);
  text.close();
  QVERIFY(QFile::link(dir.filePath("mine"), dir.filePath("link")));
  QCOMPARE(::mkfifo(qPrintable(dir.filePath("fifo")), 0600), 0);
  const QStringList before = entriesOf(dir.path()), run_before = entriesOf(run_);
  QStringList args{"publish"};
  for (const QString& option : options) args << QString(option).replace("@RUN@", run_).replace("@DIR@", dir.path());
  const CliResult r = runCli(args, 120000);
  QCOMPARE(r.exit_code, 2);
  QVERIFY2(r.err.contains(message), qPrintable(r.err));
  QVERIFY2(r.err.startsWith("streetgan publish: ") || r.err.startsWith("using "), qPrintable(r.err));
  QCOMPARE(r.err.trimmed().count('\n'), r.err.contains("using ") ? 1 : 0);  // one line (and the checkpoint used)
  QCOMPARE(entriesOf(dir.path()), before);
  QCOMPARE(entriesOf(dir.filePath("mine")), QStringList{"keep.txt"});
  QCOMPARE(entriesOf(run_), run_before);
  QVERIFY(!QDir(run_ + "/checkpoints/site").exists());
}

STREETGAN_TEST_GUILESS_MAIN(TestPublish)
#include "tst_publish.moc"
