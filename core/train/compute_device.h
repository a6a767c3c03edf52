#pragma once
// Device and precision selection: turns the config strings `device` (auto | cpu | cuda | cuda:N | hpu)
// and `precision` (auto | fp32 | fp16 | bf16) into what LibTorch needs, reporting a device that
// is not present or a precision it cannot run as an Error. AutocastScope switches LibTorch's
// autocast on for the lifetime of the object (mixed precision), and restores it after.
#include "core/util/result.h"

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <cstdint>

#include <string>
#include <vector>

namespace streetgan {

enum class Precision { Fp32, Fp16, Bf16 };

Result<c10::Device> resolveDevice(const std::string& spec);
/// Whether this LibTorch was built with CUDA (its CUDA library is loaded), GPU or not.
bool libtorchHasCuda();
/// CUDA devices this process can use: 0 without a GPU, a driver, or a CUDA build.
int visibleCudaDevices();
/// Why there is no CUDA device, in one phrase: "this LibTorch was built without CUDA" or "no CUDA
/// device is visible (...)".
std::string cudaAbsence();
/// One line for the start of a run: the device and precision, and for "auto" why it chose them.
std::string describeDeviceChoice(const std::string& spec, const c10::Device& device, Precision precision);
Result<Precision> resolvePrecision(const std::string& spec, const c10::Device& device);
std::string precisionName(Precision precision);
std::string deviceName(const c10::Device& device);

/// Every device this build can train on: "cpu", then "cuda:0", "cuda:1", ..., then "hpu:0", ...
/// where the Gaudi bridge is installed.
std::vector<std::string> availableDevices();

/// Sets LibTorch's intra-op thread count (0 = one per core) and keeps
/// OpenBLAS single-threaded under it. Call before training or benchmarking.
void setComputeThreads(int threads);

/// A random generator of `device`'s own kind seeded with `seed`, so random draws stay on the device
/// (no host copy per step); on the CPU the same stream as a CPU generator of that seed.
at::Generator makeDeviceGenerator(const c10::Device& device, std::uint64_t seed);
/// "cpu", "cuda", ...: the kind of generator makeDeviceGenerator makes, as checkpoints record it.
std::string generatorKind(const c10::Device& device);

class AutocastScope {
public:
  AutocastScope(Precision precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

private:
  bool active_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
};

}  // namespace streetgan
