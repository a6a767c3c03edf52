// exceptionMessage(): each kind of exception a boundary catches, as the one line it reports.
#include "core/util/exception_message.h"
#include "tests/support/test_suite.h"

#include <QtTest>
#include <c10/util/Exception.h>
#include <opencv2/core.hpp>

#include <functional>
#include <new>
#include <stdexcept>
#include <system_error>

using namespace streetgan;

Q_DECLARE_METATYPE(std::function<void()>)

namespace {

const c10::SourceLocation kHere{"thrower", "tst_exception_message.cpp", 1};

}  // namespace

class TestExceptionMessage : public QObject {
  Q_OBJECT
private slots:
  void message_data();
  void message();
  void firstLineOfText_data();
  void firstLineOfText();
};

void TestExceptionMessage::message_data() {
  QTest::addColumn<std::function<void()>>("thrower");
  QTest::addColumn<QString>("expected");
  QTest::newRow("c10::Error") << std::function<void()>([] {
    throw c10::Error(kHere, "Expected 4-dimensional input for 4-dimensional weight [16, 8, 4, 4]");
  }) << "LibTorch: Expected 4-dimensional input for 4-dimensional weight [16, 8, 4, 4]";
  QTest::newRow("c10::Error over lines") << std::function<void()>([] {
    throw c10::Error(kHere, "\nPytorchStreamReader failed reading zip archive: failed finding central directory\n"
                            "Exception raised from valid at caffe2/serialize/inline_container.cc:184");
  }) << "LibTorch: PytorchStreamReader failed reading zip archive: failed finding central directory";
  QTest::newRow("CPU allocator") << std::function<void()>([] {
    throw c10::Error(kHere, "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate "
                            "memory: you tried to allocate 3221225472 bytes. Error code 12 (Cannot allocate memory)");
  }) << "out of memory: could not allocate 3.0 GiB on the CPU";
  QTest::newRow("CUDA, LibTorch 1.x") << std::function<void()>([] {
    throw c10::OutOfMemoryError(kHere, "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total "
                                       "capacity; 6.79 GiB already allocated; 3.19 MiB free; 6.80 GiB reserved in "
                                       "total by PyTorch) If reserved memory is >> allocated memory try setting "
                                       "max_split_size_mb to avoid fragmentation.");
  }) << "out of memory on the GPU: CUDA could not allocate 20.00 MiB on GPU 0";
  QTest::newRow("CUDA, LibTorch 2.x") << std::function<void()>([] {
    throw c10::OutOfMemoryError(kHere, "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity "
                                       "of 79.10 GiB of which 1.06 GiB is free. Of the allocated memory 75.5 GiB is "
                                       "allocated by PyTorch.");
  }) << "out of memory on the GPU: CUDA could not allocate 2.00 GiB on GPU 1";
  QTest::newRow("CUDA as a plain c10::Error") << std::function<void()>([] {
    throw c10::Error(kHere, "CUDA out of memory. Tried to allocate 512.00 MiB (GPU 3; 15.7 GiB total capacity)");
  }) << "out of memory on the GPU: CUDA could not allocate 512.00 MiB on GPU 3";
  QTest::newRow("OpenCV assertion") << std::function<void()>([] {
    throw cv::Exception(cv::Error::StsAssert, "!ssize.empty()", "resize", "resize.cpp", 4062);
  }) << "OpenCV: assertion failed: !ssize.empty() in resize";
  QTest::newRow("OpenCV out of memory") << std::function<void()>([] {
    throw cv::Exception(cv::Error::StsNoMem, "Failed to allocate 1048576000 bytes", "OutOfMemoryError", "alloc.cpp", 73);
  }) << "out of memory (OpenCV: Failed to allocate 1048576000 bytes in OutOfMemoryError)";
  QTest::newRow("OpenCV error") << std::function<void()>([] {
    throw cv::Exception(cv::Error::StsBadArg, "unknown image type", "imwrite", "loadsave.cpp", 700);
  }) << "OpenCV: unknown image type in imwrite";
  QTest::newRow("std::bad_alloc") << std::function<void()>([] { throw std::bad_alloc(); }) << "out of memory";
  QTest::newRow("std::bad_array_new_length") << std::function<void()>([] { throw std::bad_array_new_length(); })
                                             << "out of memory";
  QTest::newRow("std::system_error") << std::function<void()>([] {
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "cannot start a thread");
  }) << "cannot start a thread: Resource temporarily unavailable";
  QTest::newRow("std::runtime_error over lines") << std::function<void()>([] {
    throw std::runtime_error("  first line  \nsecond line");
  }) << "first line";
  QTest::newRow("not a std::exception") << std::function<void()>([] { throw 42; })
                                        << "unknown error (not a standard exception)";
}

void TestExceptionMessage::message() {
  QFETCH(std::function<void()>, thrower);
  QFETCH(QString, expected);
  std::exception_ptr caught;
  try {
    thrower();
  } catch (...) {
    caught = std::current_exception();
  }
  QVERIFY(caught);
  QCOMPARE(QString::fromStdString(exceptionMessage(caught)), expected);
}

void TestExceptionMessage::firstLineOfText_data() {
  QTest::addColumn<QString>("text");
  QTest::addColumn<QString>("expected");
  QTest::newRow("one line") << "one line" << "one line";
  QTest::newRow("blank lines first") << "\n  \r\n\tsecond\r\nthird" << "second";
  QTest::newRow("empty") << "" << "";
  QTest::newRow("only blanks") << " \n\t\n" << "";
}

void TestExceptionMessage::firstLineOfText() {
  QFETCH(QString, text);
  QFETCH(QString, expected);
  QCOMPARE(QString::fromStdString(firstLine(text.toStdString())), expected);
}

STREETGAN_TEST_APPLESS_MAIN(TestExceptionMessage)
#include "tst_exception_message.moc"
