#pragma once
// The device the device-specific tests run on: STREETGAN_TEST_DEVICE (default "cpu"), so the same
// suites run on a CUDA build with STREETGAN_TEST_DEVICE=cuda. On the CPU results are bit-exact and
// the tests say so with exact comparisons; elsewhere kernels may sum in another order, so those
// comparisons become tolerances (testTolerance()), by design.
#include <c10/core/Device.h>

#include <cstdlib>
#include <string>

namespace streetgan::test {

inline std::string testDeviceName() {
  const char* name = std::getenv("STREETGAN_TEST_DEVICE");
  return name && *name ? std::string(name) : std::string("cpu");
}

inline c10::Device testDevice() { return c10::Device(testDeviceName()); }

/// The compute threads the tests train with: STREETGAN_TEST_THREADS when it is set, else
/// STREETGAN_TEST_THREADS_DEFAULT (CTest sets 1: it runs two suites at once on CI's 2 cores;
/// tests/CMakeLists.txt), else 2. packaging/check-libtorch2.sh sets STREETGAN_TEST_THREADS to 1
/// where packaging/libtorch2-nan-repro.py shows that the LibTorch computes NaN gradients with more
/// threads on this machine (Debian trixie's 2.6 did on some), so that the suites test our code,
/// not that defect.
inline int testThreads() {
  for (const char* name : {"STREETGAN_TEST_THREADS", "STREETGAN_TEST_THREADS_DEFAULT"}) {
    const char* value = std::getenv(name);
    const int threads = value && *value ? std::atoi(value) : 0;
    if (threads > 0) return threads;
  }
  return 2;
}

/// Relative tolerance for results that are bit-exact on the CPU: 0 there, small elsewhere.
inline double testTolerance() { return testDevice().is_cpu() ? 0.0 : 1e-4; }

}  // namespace streetgan::test
