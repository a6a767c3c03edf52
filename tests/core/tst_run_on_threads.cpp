// runOnThreads(): every part runs once; an exception in a worker thread reaches the caller instead
// of ending the program; threads that cannot be started (a real address-space limit) leave their
// parts to the calling thread.
#include "core/util/run_on_threads.h"
#include "tests/support/test_suite.h"

#include <QtTest>

#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

using namespace streetgan;

namespace {

// The process's address space now (VmSize of /proc/self/status), in bytes.
rlim_t addressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      rlim_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

class TestRunOnThreads : public QObject {
  Q_OBJECT
private slots:
  void everyPartOnItsOwnThread();
  void workerExceptionReachesTheCaller();
  void callerExceptionWaitsForTheWorkers();
  void threadsThatCannotStartRunHere();
};

void TestRunOnThreads::everyPartOnItsOwnThread() {
  std::mutex mutex;
  std::multiset<int> parts;
  std::set<std::thread::id> threads;
  runOnThreads(4, [&](int part) {
    const std::lock_guard<std::mutex> lock(mutex);
    parts.insert(part);
    threads.insert(std::this_thread::get_id());
  });
  QVERIFY(parts == (std::multiset<int>{0, 1, 2, 3}));
  QCOMPARE(threads.size(), std::size_t(4));
  QVERIFY(threads.count(std::this_thread::get_id()));
  int ran = 0;
  runOnThreads(0, [&](int part) { ran += 1 + part; });  // at least part 0, here
  QCOMPARE(ran, 1);
}

void TestRunOnThreads::workerExceptionReachesTheCaller() {
  std::atomic<int> finished{0};
  QString caught;
  try {
    runOnThreads(3, [&](int part) {
      if (part == 2) throw std::runtime_error("part 2 failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ++finished;
    });
  } catch (const std::runtime_error& e) {
    caught = e.what();
  }
  QCOMPARE(caught, QString("part 2 failed"));
  QCOMPARE(finished.load(), 2);  // the others ran to their end before it was rethrown
}

void TestRunOnThreads::callerExceptionWaitsForTheWorkers() {
  std::atomic<int> finished{0};
  QVERIFY_THROWS_EXCEPTION(std::bad_alloc, runOnThreads(3, [&](int part) {
    if (part == 0) throw std::bad_alloc();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ++finished;
  }));
  QCOMPARE(finished.load(), 2);
}

void TestRunOnThreads::threadsThatCannotStartRunHere() {
  // An address-space limit a little above what the process uses: a new thread's stack (megabytes)
  // no longer fits, as under `ulimit -v`. glibc reuses the stacks of threads that have ended (a
  // few, from the tests before), so ask for many more threads than it can have kept.
  constexpr int kParts = 64;
  rlimit saved{};
  QCOMPARE(getrlimit(RLIMIT_AS, &saved), 0);
  std::mutex mutex;
  std::multiset<int> parts;
  int here = 0;
  rlimit tight = saved;
  tight.rlim_cur = addressSpaceBytes() + 512 * 1024;
  QVERIFY(tight.rlim_cur > 512 * 1024);
  QCOMPARE(setrlimit(RLIMIT_AS, &tight), 0);
  const std::thread::id caller = std::this_thread::get_id();
  bool failed = false;
  try {
    runOnThreads(kParts, [&](int part) {
      const std::lock_guard<std::mutex> lock(mutex);
      parts.insert(part);
      here += std::this_thread::get_id() == caller;
    });
  } catch (...) {
    failed = true;
  }
  QCOMPARE(setrlimit(RLIMIT_AS, &saved), 0);
  QVERIFY(!failed);
  std::multiset<int> every;
  for (int part = 0; part < kParts; ++part) every.insert(part);
  QVERIFY(parts == every);  // each part once
  QVERIFY2(here > kParts / 2, qPrintable(QString("%1 of %2 parts ran on the calling thread").arg(here).arg(kParts)));
}

STREETGAN_TEST_APPLESS_MAIN(TestRunOnThreads)
#include "tst_run_on_threads.moc"
