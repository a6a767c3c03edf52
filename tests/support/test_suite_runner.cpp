// main() of a test folder's program: runs the one suite its first argument names, with the rest
// of the arguments as that suite's QtTest options (tst_models -functions, tst_cli trainsTiny).
#include "tests/support/test_suite.h"

#include <QFileInfo>

#include <cstdio>
#include <cstring>

namespace streetgan::test {

std::vector<TestSuite>& registeredSuites() {
  static std::vector<TestSuite> suites;
  return suites;
}

QString suiteName(const char* source_file) { return QFileInfo(QString::fromUtf8(source_file)).completeBaseName(); }

void nameApplicationAfterSuite(const char* source_file) {
  if (QCoreApplication::instance()) QCoreApplication::setApplicationName(suiteName(source_file));
}

}  // namespace streetgan::test

namespace {

using streetgan::test::registeredSuites;
using streetgan::test::suiteName;

void printSuites(std::FILE* to) {
  for (const auto& suite : registeredSuites()) std::fprintf(to, "  %s\n", qPrintable(suiteName(suite.source_file)));
}

int usage(const char* program, std::FILE* to, int exit_code) {
  std::fprintf(to,
               "usage: %s SUITE [QtTest options]\n"
               "Runs one test suite of this program; `%s SUITE -help` lists the QtTest options.\n"
               "Its suites:\n",
               program, program);
  printSuites(to);
  return exit_code;
}

}  // namespace

int main(int argc, char* argv[]) {
  const char* program = argc > 0 ? argv[0] : "tests";
  if (argc < 2) return usage(program, stderr, 2);
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) return usage(program, stdout, 0);
  if (std::strcmp(argv[1], "--list") == 0) {
    printSuites(stdout);
    return 0;
  }
  const QString wanted = QString::fromLocal8Bit(argv[1]);
  for (const auto& suite : registeredSuites()) {
    if (suiteName(suite.source_file) != wanted) continue;
    // The suite sees the program's name and its own options, as when it was a program of its own.
    std::vector<char*> suite_arguments{argv[0]};
    suite_arguments.insert(suite_arguments.end(), argv + 2, argv + argc);
    suite_arguments.push_back(nullptr);
    return suite.run(argc - 1, suite_arguments.data());
  }
  std::fprintf(stderr, "%s: no suite named '%s' in this program\n", program, argv[1]);
  return usage(program, stderr, 2);
}
