#pragma once
// SystemMonitor: what the machine is doing while a run trains, for the `system` event
// (docs/events.md): this process's CPU use and resident memory, the host's free memory, the
// loader's read rate, and on CUDA the GPU's utilisation, memory and power through NVIDIA's NVML
// (libnvidia-ml.so.1, loaded at run time when present; never a build dependency). Reads /proc
// and getrusage; nothing here throws, and a figure that cannot be read is left out (-1, or no
// GpuSample) rather than failing the run. One monitor per process, used from one thread.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace streetgan {

struct GpuSample {
  int index = 0;                         ///< NVML's device index
  double utilization_percent = -1;       ///< share of the last sample period a kernel ran
  std::int64_t memory_used_bytes = -1;
  std::int64_t memory_total_bytes = -1;
  double power_w = -1;
};

struct SystemSample {
  double seconds = 0;                    ///< since the previous sample (or since the monitor started)
  double cpu_percent = -1;               ///< this process's CPU time over that time; 200 = two cores busy
  int cores = 0;                         ///< cores this process may run on
  std::int64_t rss_bytes = -1;           ///< resident memory of this process
  std::int64_t host_memory_available_bytes = -1;  ///< MemAvailable of /proc/meminfo
  std::int64_t host_memory_total_bytes = -1;
  double loader_bytes_per_s = -1;        ///< image bytes the loader read per second (files or cache)
  std::optional<GpuSample> gpu;          ///< CUDA with NVML only
};

class SystemMonitor {
public:
  /// `device`: the training device ("cpu", "cuda:1", "hpu"); on "cuda:N" the GPU is NVML's
  /// device N, mapped through CUDA_VISIBLE_DEVICES when that lists indices.
  explicit SystemMonitor(const std::string& device);
  ~SystemMonitor();
  SystemMonitor(const SystemMonitor&) = delete;
  SystemMonitor& operator=(const SystemMonitor&) = delete;

  /// The figures since the previous call; `loader_bytes_total` is the loader's running count of
  /// bytes read (BatchLoader::bytesRead), turned into a rate here.
  SystemSample sample(std::int64_t loader_bytes_total);
  /// True when `interval_s` seconds have passed since the last sample (or since construction).
  bool due(double interval_s) const;
  /// Why there are no GPU figures on a CUDA device (NVML missing or failing); empty otherwise.
  const std::string& gpuUnavailableReason() const { return gpu_reason_; }

private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string gpu_reason_;
  double last_wall_ = 0, last_cpu_ = 0;
  std::int64_t last_loader_bytes_ = 0;
};

}  // namespace streetgan
