#include "core/train/compute_device.h"

#include "core/train/hpu_bridge.h"
#include "core/util/blas_threads.h"
#include "core/util/torch_compat.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>


#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <thread>

namespace streetgan {

bool libtorchHasCuda() { return c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA); }

int visibleCudaDevices() {
  // device_count() is size_t in LibTorch 1.13 and c10::DeviceIndex (int8) in 2.x.
  return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

std::string cudaAbsence() {
  if (!libtorchHasCuda()) return "this LibTorch was built without CUDA";
  return "no CUDA device is visible (this LibTorch has CUDA: check the NVIDIA driver, nvidia-smi and CUDA_VISIBLE_DEVICES)";
}

std::string describeDeviceChoice(const std::string& spec, const c10::Device& device, Precision precision) {
  std::string line = deviceName(device) + ", " + precisionName(precision);
  if (spec == "auto") line += device.is_cpu() ? " (auto: " + cudaAbsence() + ")" : " (auto: the first CUDA device)";
  return line;
}

Result<c10::Device> resolveDevice(const std::string& spec) {
  const bool has_cuda = torch::cuda::is_available();
  if (spec == "auto") return has_cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (spec == "cpu") return c10::Device(c10::kCPU);
  if (spec == "hpu" || spec.rfind("hpu:", 0) == 0) {
    auto count = loadHpuBridge();
    if (!count) return makeError(count.error());
    const int index = spec == "hpu" ? 0 : std::atoi(spec.c_str() + 4);
    if (*count <= index)
      return makeError("device \"" + spec + "\" is not available: the Gaudi bridge sees " + std::to_string(*count) + " HPU(s)");
    return c10::Device(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(index));
  }
  static const std::regex cuda_pattern("cuda(:([0-9]{1,2}))?");
  std::smatch match;
  if (!std::regex_match(spec, match, cuda_pattern))
    return makeError("device \"" + spec + "\" is not allowed; allowed: auto, cpu, cuda, cuda:N or hpu");
  if (!has_cuda) return makeError("device \"" + spec + "\" is not available: " + cudaAbsence() + " (available: cpu)");
  const int index = match[2].matched ? std::stoi(match[2].str()) : 0;
  const int count = static_cast<int>(torch::cuda::device_count());
  if (index >= count)
    return makeError("device \"" + spec + "\" is not available: there are " + std::to_string(count) +
                     " CUDA devices (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

Result<Precision> resolvePrecision(const std::string& spec, const c10::Device& device) {
  const bool cuda = device.is_cuda();
  // Gaudi trains in bf16 autocast (its eager mode's mixed precision).
  if (spec == "auto") return cuda ? Precision::Fp16 : device.type() == c10::DeviceType::HPU ? Precision::Bf16 : Precision::Fp32;
  if (spec == "fp32") return Precision::Fp32;
  if (spec == "bf16") return Precision::Bf16;
  if (spec == "fp16") {
    if (!cuda)
      return makeError("precision \"fp16\" needs a CUDA device; on the CPU use fp32 or bf16");
    return Precision::Fp16;
  }
  return makeError("precision \"" + spec + "\" is not allowed; allowed: auto, fp32, fp16 or bf16");
}

std::string precisionName(Precision precision) {
  switch (precision) {
    case Precision::Fp32: return "fp32";
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
  }
  return "fp32";
}

std::string deviceName(const c10::Device& device) {
  if (device.is_cpu()) return "cpu";
  return c10::DeviceTypeName(device.type(), true) + ":" + std::to_string(device.has_index() ? device.index() : 0);
}

std::vector<std::string> availableDevices() {
  std::vector<std::string> devices{"cpu"};
  if (torch::cuda::is_available())
    // device_count() is size_t in LibTorch 1.13 and c10::DeviceIndex (int8) in 2.x.
    for (std::int64_t i = 0, n = static_cast<std::int64_t>(torch::cuda::device_count()); i < n; ++i)
      devices.push_back("cuda:" + std::to_string(i));
  // HPUs only where the Gaudi bridge is installed (loading it is what makes them visible).
  if (!hpuPluginCandidates().empty())
    if (auto count = loadHpuBridge())
      for (int i = 0; i < *count; ++i) devices.push_back("hpu:" + std::to_string(i));
  return devices;
}

void setComputeThreads(int threads) {
  // 0 means every core; Debian's LibTorch would otherwise start with a single thread.
  const unsigned cores = std::thread::hardware_concurrency();
  at::set_num_threads(threads > 0 ? threads : static_cast<int>(cores > 0 ? cores : 1));
  keepBlasSingleThreaded();
}

AutocastScope::AutocastScope(Precision precision, const c10::Device& device)
    : active_(precision != Precision::Fp32), type_(device.type()) {
  if (!active_) return;
  torch_compat::setAutocast(type_, true,
                            precision == Precision::Fp16 ? c10::kHalf : c10::kBFloat16);
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  torch_compat::setAutocast(type_, false);
  torch_compat::clearAutocastCache();
}

at::Generator makeDeviceGenerator(const c10::Device& device, std::uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device).clone();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

std::string generatorKind(const c10::Device& device) {
  return device.is_cpu() ? "cpu" : c10::DeviceTypeName(device.type(), true);
}

}  // namespace streetgan
