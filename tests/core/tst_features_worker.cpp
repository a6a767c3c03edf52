// The frames between NetworkFeatures and its worker process, from both sides, with crafted bytes:
// a hostile worker (a network that took its process over, played here by a Python program) cannot
// make the caller allocate past a frame's bound, print an escape sequence or hang; the real
// `streetgan features-worker` ends, without crashing, on a batch whose counts do not add up.
#include "core/eval/features_channel.h"
#include "core/eval/features_worker.h"
#include "core/eval/features_worker_process.h"
#include "core/eval/network_features.h"
#include "core/util/sha256.h"
#include "tests/support/test_suite.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <poll.h>
#include <sys/socket.h>
#include <torch/torch.h>

#include <cstring>

using namespace streetgan;

namespace {

// A Python worker that answers with `replies` (Python bytes expressions, one per request: the
// first at once, each next after reading one frame), then waits; "sys.exit(0)" as a reply ends it.
FeaturesWorkerOptions fakeWorker(const QStringList& replies) {
  QString program =
      "import os, struct, sys\n"
      "def frame(kind, payload):\n"
      "    return struct.pack('=IIQ', kind, 0, len(payload)) + payload\n"
      "def read_frame():\n"
      "    data = b''\n"
      "    while len(data) < 16 or len(data) < 16 + struct.unpack('=IIQ', data[:16])[2]:\n"
      "        piece = os.read(0, 1 << 20)\n"
      "        if not piece: sys.exit(0)\n"
      "        data += piece\n";
  for (int i = 0; i < replies.size(); ++i) {
    if (i > 0) program += "read_frame()\n";
    program += replies[i].startsWith("sys.") ? replies[i] + "\n" : QString("os.write(0, %1)\n").arg(replies[i]);
  }
  program += "read_frame()\n";  // and wait: the caller stops it
  FeaturesWorkerOptions options;
  options.command = {"/usr/bin/python3", "-c", program.toStdString()};
  options.batch_timeout = std::chrono::seconds(60);
  return options;
}

}  // namespace

class TestFeaturesWorker : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString network_;

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    network_ = dir_.filePath("net.pt");
    QProcess python;
    python.start("/usr/bin/python3", {"-c",
                                      "import sys, torch\n"
                                      "net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, 2), torch.nn.Flatten(1))\n"
                                      "torch.jit.script(net).save(sys.argv[1])\n",
                                      network_});
    QVERIFY(python.waitForFinished(120000));
    QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
  }

  void hostileWorkerIsRefused_data() {
    QTest::addColumn<QStringList>("replies");
    QTest::addColumn<bool>("loads");
    QTest::addColumn<QString>("error");
    QTest::newRow("closes at once") << QStringList{"sys.exit(0)"} << false << "the features network's process exited with status 0";
    QTest::newRow("unknown kind") << QStringList{"struct.pack('=IIQ', 9, 0, 0)"} << false << "a frame of unknown kind 9";
    QTest::newRow("a failure of 2^40 bytes")
        << QStringList{"struct.pack('=IIQ', 4, 0, 1 << 40)"} << false
        << "a frame of kind 4 of 1099511627776 bytes; at most 4096 are read";
    QTest::newRow("a failure with an escape sequence")
        << QStringList{"frame(4, b'\\x1b]0;owned\\x07 bad')"} << false << "?]0;owned? bad";
    QTest::newRow("features of 2^40 dimensions")
        << QStringList{"frame(1, b'')", "frame(3, struct.pack('=q', 1 << 40))"} << true
        << "features of a shape the protocol does not allow";
    QTest::newRow("features of 2^60 bytes")
        << QStringList{"frame(1, b'')", "struct.pack('=IIQq', 3, 0, 1 << 60, 4)"} << true
        << "a frame of kind 3 of 1152921504606846976 bytes";
    QTest::newRow("features for another count")
        << QStringList{"frame(1, b'')", "frame(3, struct.pack('=q', 4) + bytes(8 * 4 * 3))"} << true
        << "features of a shape the protocol does not allow";
    QTest::newRow("NaN features")
        << QStringList{"frame(1, b'')", "frame(3, struct.pack('=q', 1) + struct.pack('=2d', 1.0, float('nan')))"} << true
        << "the network returns NaN or Inf features";
  }

  void hostileWorkerIsRefused() {
    QFETCH(QStringList, replies);
    QFETCH(bool, loads);
    QFETCH(QString, error);
    auto features = NetworkFeatures::load(network_.toStdString(), 8, c10::kCPU, fakeWorker(replies));
    QCOMPARE(features.ok(), loads);
    std::string message = loads ? "" : features.error();
    if (loads) {
      auto extracted = features->extract(torch::zeros({2, 3, 8, 8}));
      QVERIFY(!extracted.ok());
      message = extracted.error();
    }
    QVERIFY2(QString::fromStdString(message).contains(error), message.c_str());
    QVERIFY2(QString::fromStdString(message).startsWith(network_ + ": "), message.c_str());
    QVERIFY2(message.find('\x1b') == std::string::npos, message.c_str());
  }

  // torch.jit.save deflates a network's code records: a small network with much code and few
  // weights has one that inflates past the whole file, which the archive check once refused.
  void networkWithCompressedCodeLoads() {
    const QString network = dir_.filePath("code.pt");
    QString branches;
    for (int i = 0; i < 60; ++i)
      branches += QString("        if x.size(0) == %1:\n            x = x * %2.0 + torch.tanh(x) - torch.sigmoid(x)\n").arg(i + 1000).arg(i);
    // torch.jit.script reads the class's source: a file, not `python3 -c`.
    const QString script = dir_.filePath("code.py");
    QFile file(script);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(("import os, sys, torch, zipfile\n"
                "class Net(torch.nn.Module):\n"
                "    def forward(self, x):\n" + branches +
                "        return x.flatten(1)\n"
                "torch.jit.script(Net()).save(sys.argv[1])\n"
                "size = os.path.getsize(sys.argv[1])\n"
                "records = zipfile.ZipFile(sys.argv[1]).infolist()\n"
                "sys.exit(0 if any(r.compress_type != 0 and r.file_size > size for r in records) else 3)\n")
                   .toUtf8());
    file.close();
    QProcess python;
    python.start("/usr/bin/python3", {script, network});
    QVERIFY(python.waitForFinished(120000));
    QVERIFY2(python.exitCode() == 0, python.exitCode() == 3 ? "no record inflates past the file" : python.readAllStandardError().constData());
    FeaturesWorkerOptions worker;
    worker.command = {STREETGAN_CLI, "features-worker"};
    auto features = NetworkFeatures::load(network.toStdString(), 8, c10::kCPU, worker);
    QVERIFY2(features.ok(), features.ok() ? "" : features.error().c_str());
    auto extracted = features->extract(torch::zeros({3, 3, 8, 8}));
    QVERIFY2(extracted.ok(), extracted.ok() ? "" : extracted.error().c_str());
    QCOMPARE(extracted->size(1), std::int64_t{3 * 8 * 8});
  }

  // The real worker, sent what the protocol does not allow: it ends (status 1), and never crashes.
  void workerRefusesABadBatch_data() {
    QTest::addColumn<QByteArray>("frame");
    auto head = [](std::uint32_t kind, std::uint64_t bytes) {
      QByteArray out(16, '\0');
      std::memcpy(out.data(), &kind, 4);
      std::memcpy(out.data() + 8, &bytes, 8);
      return out;
    };
    auto count = [](std::int64_t n) { return QByteArray(reinterpret_cast<const char*>(&n), 8); };
    QTest::newRow("a batch of 2^40 bytes") << head(2, std::uint64_t{1} << 40);
    QTest::newRow("a count of 2^62 images") << head(2, 8 + 768) + count(std::int64_t{1} << 62);
    QTest::newRow("a count of -1") << head(2, 8 + 768) + count(-1);
    QTest::newRow("two images in the bytes of one") << head(2, 8 + 768) + count(2) + QByteArray(768, '\0');
    QTest::newRow("a ready from the caller") << head(1, 0);
    QTest::newRow("a frame cut short") << head(2, 8 + 768) + count(1) + QByteArray(100, '\0');
  }

  void workerRefusesABadBatch() {
    QFETCH(QByteArray, frame);
    auto digest = Sha256::ofFile(network_.toStdString());
    QVERIFY(digest.ok());
    FeaturesWorkerArguments arguments{network_.toStdString(), 16, "cpu", *digest, 1};
    std::vector<std::string> command{STREETGAN_CLI, "features-worker"};
    for (const std::string& word : arguments.toWords()) command.push_back(word);
    auto process = FeaturesWorkerProcess::start(command, std::int64_t{4} << 30);
    QVERIFY2(process.ok(), process.ok() ? "" : process.error().c_str());
    const int socket = (*process)->socket();
    FeaturesChannel channel(socket, [socket](short events) {
      pollfd ready{socket, events, 0};
      return ::poll(&ready, 1, 60000) == 1 ? Status{} : makeError("the worker did not answer in 60 s");
    });
    auto ready = channel.receiveHead();
    QVERIFY2(ready.ok() && ready->kind == FeaturesFrameKind::Ready, ready.ok() ? "not ready" : ready.error().c_str());
    QCOMPARE(::send(socket, frame.constData(), static_cast<std::size_t>(frame.size()), MSG_NOSIGNAL),
             static_cast<ssize_t>(frame.size()));
    ::shutdown(socket, SHUT_WR);
    pollfd closed{socket, POLLIN, 0};
    QCOMPARE(::poll(&closed, 1, 60000), 1);
    QCOMPARE(QString::fromStdString((*process)->howItEnded()), QString("exited with status 1"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(TestFeaturesWorker)
#include "tst_features_worker.moc"
