#pragma once
// DiscriminatorAugment: what the training step does to every image before D sees it (the config's
// augment.diff policies; diff_augment.h), with its own random generator on the device, seeded from
// the run's seed and kept in checkpoints, so a resumed run draws the same transforms. As one of W
// ranks it draws the whole job's batch and takes its own rows, so two ranks augment exactly as one
// process with their batches together would. Off (the default config), it returns its input.
#include "core/config/train_config.h"
#include "core/train/diff_augment.h"

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace streetgan {

class DiscriminatorAugment {
public:
  DiscriminatorAugment(const TrainConfig& config, const c10::Device& device);

  /// Whether anything is applied.
  bool enabled() const { return !policies_.empty(); }
  /// This process is rank `rank` of `world` (alone: 0 of 1).
  void setShard(std::int64_t rank, std::int64_t world);
  /// `x` (B, C, H, W) with fresh draws: differentiable in `x`.
  torch::Tensor operator()(const torch::Tensor& x);

  /// The generator's state and kind ("cpu", "cuda"), for checkpoints.
  torch::Tensor rngState() const;
  std::string rngKind() const;
  /// Restores a state saved by a generator of `kind`; false (and nothing changed) for another kind.
  bool restoreRng(const torch::Tensor& state, const std::string& kind);

private:
  std::vector<DiffAugmentPolicy> policies_;
  std::int64_t batch_size_;
  std::int64_t rank_ = 0, world_ = 1;
  c10::Device device_;
  mutable at::Generator generator_;  // get_state() takes its lock
};

}  // namespace streetgan
