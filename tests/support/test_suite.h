#pragma once
// One QtTest class per unit, several units in one executable per test folder: linking a program
// against LibTorch costs more than compiling most suites, so a folder's suites share one program
// (tests/CMakeLists.txt) and CTest runs each as its own test, `PROGRAM SUITE [QtTest options]`.
//
// A suite ends with STREETGAN_TEST_MAIN, STREETGAN_TEST_GUILESS_MAIN or STREETGAN_TEST_APPLESS_MAIN
// where it would end with Qt's QTEST_MAIN, QTEST_GUILESS_MAIN or QTEST_APPLESS_MAIN: the same
// application object, set up the same way, under the suite's name (its source file's name, which
// was its program's name: QSettings and the output keep their files apart).
#include <QtTest/QtTest>

#include <vector>

namespace streetgan::test {

/// A suite of a test program: its name and what its own main() would do.
struct TestSuite {
  const char* source_file;
  int (*run)(int argc, char* argv[]);
};

/// Every suite linked into this program, in the order they registered.
std::vector<TestSuite>& registeredSuites();

/// The suite's name: its source file's name without folder and extension (tst_models).
QString suiteName(const char* source_file);

/// Names the running application after the suite, as its own program was named.
void nameApplicationAfterSuite(const char* source_file);

/// Adds a suite to registeredSuites() when the program starts.
struct TestSuiteRegistration {
  explicit TestSuiteRegistration(TestSuite suite) { registeredSuites().push_back(suite); }
};

}  // namespace streetgan::test

// The body of Qt's QTEST_MAIN_WRAPPER, as a function of the suite rather than main().
#define STREETGAN_TEST_SUITE_IMPL(TestObject, ...)                                                \
  namespace {                                                                                     \
  int runSuite##TestObject(int argc, char* argv[]) {                                              \
    QTest::Internal::callInitMain<TestObject>();                                                  \
    __VA_ARGS__                                                                                   \
    streetgan::test::nameApplicationAfterSuite(__FILE__);                                         \
    TestObject tc;                                                                                \
    QTEST_SET_MAIN_SOURCE_PATH                                                                    \
    return QTest::qExec(&tc, argc, argv);                                                         \
  }                                                                                               \
  const streetgan::test::TestSuiteRegistration registration##TestObject{                          \
      streetgan::test::TestSuite{__FILE__, &runSuite##TestObject}};                               \
  }

#define STREETGAN_TEST_MAIN(TestObject) STREETGAN_TEST_SUITE_IMPL(TestObject, QTEST_MAIN_SETUP())
#define STREETGAN_TEST_GUILESS_MAIN(TestObject) \
  STREETGAN_TEST_SUITE_IMPL(TestObject, QTEST_QAPP_SETUP(QCoreApplication))
#define STREETGAN_TEST_APPLESS_MAIN(TestObject) STREETGAN_TEST_SUITE_IMPL(TestObject)
