#pragma once
// How much more memory this process can take: the host's available memory (MemAvailable of
// /proc/meminfo) or, when lower, what its address-space limit (ulimit -v) or its cgroup's
// memory.max (a container's limit) leaves. For refusing
// work that cannot fit before it starts, rather than failing or swapping half-way.
#include <cstdint>

namespace streetgan {

/// Bytes this process may still allocate, by the lowest of the three; -1 when none is known.
std::int64_t availableMemoryBytes();

}  // namespace streetgan
