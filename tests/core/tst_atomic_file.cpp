// writeFileAtomically and writeFilesAtomically: the file appears whole; temporary files of the
// same name left by processes that are gone are removed, a running process's are not; a failure
// to write one of several files leaves every path as it was.
#include "core/util/atomic_file.h"
#include "tests/support/test_suite.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace streetgan;

namespace {

bool write(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

QByteArray read(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class AtomicFileTest : public QObject {
  Q_OBJECT

private slots:
  // A run's own folder swapped for a link (to another run's checkpoints) after it was checked: the
  // write opens the folder without following it, so the link is refused as it is written, and
  // nothing lands in its target. A folder the user named may be a link.
  void linkedFolder_data() {
    QTest::addColumn<bool>("refuse");
    QTest::newRow("a run's own folder") << true;
    QTest::newRow("a folder the user named") << false;
  }

  void linkedFolder() {
    QFETCH(bool, refuse);
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("elsewhere"));
    QVERIFY(QFile::link(dir.filePath("elsewhere"), dir.filePath("checkpoints")));
    const std::string path = dir.filePath("checkpoints/step.pt").toStdString();
    const Status written = writeFileAtomically(path, "bytes", refuse ? FolderLinks::Refuse : FolderLinks::Follow);
    QCOMPARE(written.ok(), !refuse);
    if (refuse) {
      QCOMPARE(QString::fromStdString(written.error()),
               dir.filePath("checkpoints") + ": a symbolic link; a run writes only into folders of its own");
      QCOMPARE(QDir(dir.filePath("elsewhere")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
    } else {
      QCOMPARE(read(dir.filePath("elsewhere/step.pt")), QByteArray("bytes"));
    }
  }

  // `--out /dev/null` as root once replaced the device with a file: whatever is not a regular
  // file is refused and left as it was, by both writers.
  void onlyARegularFileIsReplaced_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<bool>("several");
    for (const char* kind : {"FIFO", "symbolic link", "folder"}) {
      QTest::newRow(qPrintable(QString(kind) + ", one file")) << kind << false;
      QTest::newRow(qPrintable(QString(kind) + ", several files")) << kind << true;
    }
  }

  void onlyARegularFileIsReplaced() {
    QFETCH(QString, kind);
    QFETCH(bool, several);
    QTemporaryDir dir;
    const QString out = dir.filePath("out.png");
    if (kind == "FIFO") QCOMPARE(::mkfifo(qPrintable(out), 0644), 0);
    if (kind == "symbolic link") QVERIFY(QFile::link(dir.filePath("target"), out));
    if (kind == "folder") QVERIFY(QDir(dir.path()).mkdir("out.png"));
    const QFileInfo before(out);
    const Status written = several ? writeFilesAtomically({{dir.filePath("a.json").toStdString(), "a"}, {out.toStdString(), "b"}})
                                   : writeFileAtomically(out.toStdString(), "bytes");
    QVERIFY(!written.ok());
    QCOMPARE(QString::fromStdString(written.error()),
             out + ": is a " + kind + ", not a regular file; it is not replaced (give the name of a new or regular file)");
    const QFileInfo after(out);
    QCOMPARE(after.isSymLink(), before.isSymLink());
    QCOMPARE(after.isDir(), before.isDir());
    QCOMPARE(after.isFile(), before.isFile());
    QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System),
             QStringList{"out.png"});
  }

  void staleTemporariesAreRemoved() {
    QTemporaryDir dir;
    const QString out = dir.filePath("G.json");
    QVERIFY(write(out + ".999999999.tmp", "left by a process that was killed"));
    QVERIFY(write(out + ".1.tmp", "pid 1 still runs"));
    QVERIFY(write(dir.filePath("other.json.999999999.tmp"), "another file's"));
    QVERIFY(write(out + ".x.tmp", "not a pid"));
    QVERIFY(writeFileAtomically(out.toStdString(), "{}\n").ok());
    QCOMPARE(read(out), QByteArray("{}\n"));
    QStringList left = QDir(dir.path()).entryList(QDir::Files, QDir::Name);
    QCOMPARE(left, (QStringList{"G.json", "G.json.1.tmp", "G.json.x.tmp", "other.json.999999999.tmp"}));
  }

  void severalFilesAllOrNone() {
    QTemporaryDir dir;
    const QString a = dir.filePath("a.pt"), b = dir.filePath("b.json");
    QVERIFY(write(a, "old a"));
    QVERIFY(write(b, "old b"));
    // b's temporary name is taken by a folder: nothing may change.
    QVERIFY(QDir().mkpath(b + "." + QString::number(QCoreApplication::applicationPid()) + ".tmp/inside"));
    const Status failed = writeFilesAtomically({{a.toStdString(), "new a"}, {b.toStdString(), "new b"}});
    QVERIFY(!failed.ok());
    QVERIFY2(QString::fromStdString(failed.error()).startsWith(b), failed.error().c_str());
    QCOMPARE(read(a), QByteArray("old a"));
    QCOMPARE(read(b), QByteArray("old b"));
    QVERIFY(!QFile::exists(a + "." + QString::number(QCoreApplication::applicationPid()) + ".tmp"));
    QVERIFY(QDir(b + "." + QString::number(QCoreApplication::applicationPid()) + ".tmp").removeRecursively());
    QVERIFY(writeFilesAtomically({{a.toStdString(), "new a"}, {b.toStdString(), "new b"}}).ok());
    QCOMPARE(read(a), QByteArray("new a"));
    QCOMPARE(read(b), QByteArray("new b"));
  }
};

STREETGAN_TEST_GUILESS_MAIN(AtomicFileTest)
#include "tst_atomic_file.moc"
