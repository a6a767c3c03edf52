#include "core/util/available_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

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

}  // namespace

std::int64_t availableMemoryBytes() {
  const std::int64_t host = hostAvailableBytes(), left = addressSpaceLeftBytes();
  if (host < 0) return left;
  if (left < 0) return host;
  return std::min(host, left);
}

}  // namespace streetgan
