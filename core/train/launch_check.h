#pragma once
// checkLaunchable: whether a config can train on the ranks it is given, and on which device and
// precision. The rank launcher (`streetgan train --nproc`) asks it once before any rank starts;
// each trainer asks it again for its own device. One set of rules and one set of words for both:
// a device spelt wrongly or absent, too few GPUs for the ranks of a host, a precision the device
// cannot run, CUDA graphs where they cannot run; on resume, the option that changes what the
// stored config says.
#include "core/config/train_config.h"
#include "core/train/compute_device.h"
#include "core/train/trainer.h"
#include "core/util/result.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

namespace streetgan {

/// The ranks a config is to train on.
struct LaunchWorld {
  std::int64_t world_size = 1;  ///< ranks in all
  int ranks_per_host = 1;       ///< ranks started on each host (--nproc)
  /// The launcher, before it starts ranks: it checks that each host has a device for each of its
  /// ranks (rank i on cuda:i). A rank (TrainerOptions::placement) checks its own device.
  bool starts_ranks = false;
};

/// Where a config trains.
struct LaunchChoice {
  c10::Device device{c10::kCPU};
  Precision precision = Precision::Fp32;
  /// "cpu, fp32 (auto: ...)", and "; the step runs as a CUDA graph" with cuda_graphs: said at the
  /// start of a run.
  std::string description;
};

/// The device and precision `config` trains with under `options` (resumed or not, this process's
/// rank) in `world`, or why it cannot. An empty `config.device` (the launcher's view of a resumed
/// run whose config could not be read) leaves the device to the ranks, which find out and say:
/// nothing is chosen then. An empty `config.precision` leaves the precision unchecked likewise.
Result<std::optional<LaunchChoice>> checkLaunchable(const TrainConfig& config, const TrainerOptions& options,
                                                    const LaunchWorld& world);

}  // namespace streetgan
