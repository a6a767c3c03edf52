#include "core/train/system_monitor.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

namespace streetgan {

namespace {

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double processCpuSeconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return -1;
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = -1;
  if (!(statm >> size >> resident)) return -1;
  return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

/// MemAvailable and MemTotal of /proc/meminfo, in bytes (-1 when absent).
std::pair<std::int64_t, std::int64_t> hostMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::int64_t available = -1, total = -1;
  std::string key, unit;
  std::int64_t kib = 0;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") available = kib * 1024;
    if (key == "MemTotal:") total = kib * 1024;
  }
  return {available, total};
}

int usableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

/// NVML's index of cuda:`cuda_index`: CUDA_VISIBLE_DEVICES renumbers the devices a process sees.
int nvmlIndexOf(int cuda_index) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || !*visible) return cuda_index;
  std::vector<int> listed;
  std::stringstream list(visible);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0') return cuda_index;  // UUIDs: not mapped, assume the order
    listed.push_back(static_cast<int>(value));
  }
  return cuda_index < static_cast<int>(listed.size()) ? listed[static_cast<std::size_t>(cuda_index)] : cuda_index;
}

}  // namespace

// The few NVML entry points used, declared as NVML's C API defines them (stable since CUDA 5).
struct SystemMonitor::Nvml {
  struct Utilization {
    unsigned int gpu, memory;
  };
  struct Memory {
    unsigned long long total, free, used;
  };
  using Device = void*;
  using Init = int (*)();
  using Shutdown = int (*)();
  using HandleByIndex = int (*)(unsigned int, Device*);
  using GetUtilization = int (*)(Device, Utilization*);
  using GetMemory = int (*)(Device, Memory*);
  using GetPower = int (*)(Device, unsigned int*);

  struct LibraryCloser {
    void operator()(void* handle) const { dlclose(handle); }
  };
  std::unique_ptr<void, LibraryCloser> library;
  Shutdown shutdown = nullptr;
  GetUtilization utilization = nullptr;
  GetMemory memory = nullptr;
  GetPower power = nullptr;
  Device device = nullptr;
  int index = 0;

  ~Nvml() {
    if (shutdown) shutdown();
  }

  template <typename F>
  F symbol(const char* name) const {
    return reinterpret_cast<F>(dlsym(library.get(), name));
  }

  /// Loads NVML and finds device `nvml_index`; an empty string on success, else why not.
  std::string open(int nvml_index) {
    library.reset(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
    if (!library) return "NVIDIA's NVML (libnvidia-ml.so.1) is not installed";
    auto init = symbol<Init>("nvmlInit_v2");
    auto by_index = symbol<HandleByIndex>("nvmlDeviceGetHandleByIndex_v2");
    utilization = symbol<GetUtilization>("nvmlDeviceGetUtilizationRates");
    memory = symbol<GetMemory>("nvmlDeviceGetMemoryInfo");
    power = symbol<GetPower>("nvmlDeviceGetPowerUsage");
    if (!init || !by_index || !utilization || !memory || !power) return "libnvidia-ml.so.1 lacks the NVML functions used";
    if (init() != 0) return "NVML could not start (nvmlInit_v2 failed)";
    shutdown = symbol<Shutdown>("nvmlShutdown");
    index = nvml_index;
    if (by_index(static_cast<unsigned int>(nvml_index), &device) != 0)
      return "NVML has no GPU " + std::to_string(nvml_index);
    return {};
  }

  GpuSample read() const {
    GpuSample gpu;
    gpu.index = index;
    Utilization u{};
    if (utilization(device, &u) == 0) gpu.utilization_percent = u.gpu;
    Memory m{};
    if (memory(device, &m) == 0) {
      gpu.memory_used_bytes = static_cast<std::int64_t>(m.used);
      gpu.memory_total_bytes = static_cast<std::int64_t>(m.total);
    }
    unsigned int milliwatts = 0;
    if (power(device, &milliwatts) == 0) gpu.power_w = milliwatts / 1000.0;
    return gpu;
  }
};

SystemMonitor::SystemMonitor(const std::string& device) : last_wall_(wallSeconds()), last_cpu_(processCpuSeconds()) {
  if (device.rfind("cuda", 0) != 0) return;
  const auto colon = device.find(':');
  const int cuda_index = colon == std::string::npos ? 0 : std::atoi(device.c_str() + colon + 1);
  auto nvml = std::make_unique<Nvml>();
  gpu_reason_ = nvml->open(nvmlIndexOf(cuda_index));
  if (gpu_reason_.empty()) nvml_ = std::move(nvml);
}

SystemMonitor::~SystemMonitor() = default;

bool SystemMonitor::due(double interval_s) const { return wallSeconds() - last_wall_ >= interval_s; }

SystemSample SystemMonitor::sample(std::int64_t loader_bytes_total) {
  SystemSample out;
  const double wall = wallSeconds(), cpu = processCpuSeconds();
  out.seconds = wall - last_wall_;
  if (out.seconds > 0 && cpu >= 0 && last_cpu_ >= 0) out.cpu_percent = 100.0 * (cpu - last_cpu_) / out.seconds;
  if (out.seconds > 0) out.loader_bytes_per_s = static_cast<double>(loader_bytes_total - last_loader_bytes_) / out.seconds;
  out.cores = usableCores();
  out.rss_bytes = residentBytes();
  std::tie(out.host_memory_available_bytes, out.host_memory_total_bytes) = hostMemory();
  if (nvml_) out.gpu = nvml_->read();
  last_wall_ = wall;
  last_cpu_ = cpu;
  last_loader_bytes_ = loader_bytes_total;
  return out;
}

}  // namespace streetgan
