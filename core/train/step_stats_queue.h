#pragma once
// StepStatsQueue: the training steps whose statistics are still on the device. The Trainer pushes
// each step's small statistics tensor (DcganStep::trainStep) with what the host knows of the step
// (its counters, the images it trained on, the seconds it took on the host and the seconds of
// that spent waiting for data); flush() copies all of them to the host in one transfer and hands
// them back in order, each with its own values. On a device that runs asynchronously (CUDA) a
// step's host time is only the time to queue its kernels, so flush() shares the window's wall
// time (from the previous flush to this one) among its steps by their images; on the CPU each
// step keeps its own measured time. shouldFlush() is the policy of the `sync_every_steps` key.
#include "core/train/dcgan_step.h"

#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace streetgan {

struct PendingStep {
  std::int64_t epoch = 0;        ///< 1-based epoch the step belongs to
  std::int64_t iteration = 0;    ///< 1-based batch within the epoch
  std::int64_t step = 0;         ///< optimizer steps so far, this one included
  std::int64_t images_seen = 0;  ///< real images so far, this step's included
  std::int64_t images = 0;       ///< images in this step's batch
  double host_seconds = 0;       ///< host wall time of the step, data wait included
  double wait_seconds = 0;       ///< of that, time spent waiting for the batch
};

struct FlushedStep {
  PendingStep info;
  StepStats stats;
  double seconds = 0;  ///< the step's time: measured (CPU) or its share of the window (async)
};

class StepStatsQueue {
public:
  using Clock = std::chrono::steady_clock;

  /// `synchronous`: the device finishes each step before trainStep() returns (the CPU).
  /// `sync_every_steps`: the config key (0 = auto).
  StepStatsQueue(bool synchronous, int sync_every_steps);

  void push(const PendingStep& info, torch::Tensor values);
  std::size_t size() const { return pending_.size(); }
  /// Whether the policy wants the pending steps copied now.
  bool shouldFlush(Clock::time_point now) const;
  /// One transfer of every pending row to the host; the steps in order.
  std::vector<FlushedStep> flush();
  /// Starts the next timing window now (after work between steps: grids, checkpoints).
  void restartWindow() { window_start_ = Clock::now(); }
  /// Number of host transfers so far (for tests).
  std::int64_t transfers() const { return transfers_; }

private:
  bool synchronous_;
  int every_;
  std::vector<PendingStep> pending_;
  std::vector<torch::Tensor> values_;
  Clock::time_point window_start_;
  std::int64_t transfers_ = 0;
};

}  // namespace streetgan
