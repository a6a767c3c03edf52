#include "core/util/available_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

namespace streetgan {
namespace {

// MemAvailable of /proc/meminfo in bytes; -1 when absent.
std::int64_t hostAvailableBytes() {
  std::FILE* file = std::fopen("/proc/meminfo", "re");
  if (!file) return -1;
  char line[256];
  long long kib = -1;
  while (std::fgets(line, sizeof line, file))
    if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
  std::fclose(file);
  return kib < 0 ? -1 : static_cast<std::int64_t>(kib) * 1024;
}

// What RLIMIT_AS leaves above this process's address space now; -1 without a limit.
std::int64_t addressSpaceLeftBytes() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
  std::FILE* file = std::fopen("/proc/self/statm", "re");
  if (!file) return -1;
  long long pages = 0;
  const bool read = std::fscanf(file, "%lld", &pages) == 1;
  std::fclose(file);
  if (!read) return -1;
  const std::int64_t used = pages * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(limit.rlim_cur) - used);
}

// A number from a cgroup file ("max" or unreadable: -1).
std::int64_t cgroupValue(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (!file) return -1;
  long long value = -1;
  if (std::fscanf(file, "%lld", &value) != 1) value = -1;
  std::fclose(file);
  return value;
}

// What this process's cgroup (v2) still allows: memory.max less memory.current; -1 without a limit.
std::int64_t cgroupLeftBytes() {
  std::FILE* file = std::fopen("/proc/self/cgroup", "re");
  if (!file) return -1;
  char line[4096];
  std::string path;
  while (std::fgets(line, sizeof line, file))
    if (std::strncmp(line, "0::", 3) == 0) {
      path = line + 3;
      while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
    }
  std::fclose(file);
  if (path.empty() || path.find("..") != std::string::npos) return -1;
  const std::string folder = "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
  const std::int64_t most = cgroupValue(folder + "/memory.max"), used = cgroupValue(folder + "/memory.current");
  if (most < 0 || used < 0) return -1;
  return std::max<std::int64_t>(0, most - used);
}

}  // namespace

std::int64_t availableMemoryBytes() {
  std::int64_t lowest = -1;
  for (const std::int64_t bound : {hostAvailableBytes(), addressSpaceLeftBytes(), cgroupLeftBytes()})
    if (bound >= 0 && (lowest < 0 || bound < lowest)) lowest = bound;
  return lowest;
}

}  // namespace streetgan
