#pragma once
// FeaturesWorkerOptions: how `streetgan metrics --features` runs the features network's worker
// process (core/eval/network_features.h): its command, memory and time limits. Apart from
// NetworkFeatures so that the CLI's help shows the defaults without LibTorch.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct FeaturesWorkerOptions {
  /// The program and words that start `streetgan features-worker` (its arguments are added).
  std::vector<std::string> command;
  /// The most data the worker may allocate (RLIMIT_DATA).
  std::int64_t memory_bytes = std::int64_t{8} << 30;
  /// The longest the network may take to load, and to compute one batch.
  std::chrono::seconds batch_timeout{600};
  /// CPU threads of the worker; 0: LibTorch's default.
  int threads = 0;
};

}  // namespace streetgan
