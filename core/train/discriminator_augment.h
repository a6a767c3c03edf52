#pragma once
// DiscriminatorAugment: what the training step does to every image before D sees it: ADA's
// pipeline (augment.ada_*; ada_augment.h) with its probability p, then DiffAugment's policies
// (augment.diff; diff_augment.h). Its random generator is on the device, seeded from the run's
// seed and kept in checkpoints with p, so a resumed run draws the same transforms. As one of W
// ranks it draws the whole job's batch and takes its own rows, so two ranks augment exactly as one
// process with their batches together would. Off (the default config), it returns its input.
//
// p (Karras et al. 2020): every 4 steps it moves by sign(r_t − ada_target) × (images of the 4
// steps) / (ada_kimg × 1000), kept within [0, 1], where r_t is the mean sign of D's logits on the
// augmented real images over those steps (every rank's: p stays the same on every rank). It stays
// on the device: no step waits for the host.
#include "core/config/train_config.h"
#include "core/train/ada_augment.h"
#include "core/train/diff_augment.h"

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace streetgan {

class DiscriminatorAugment {
public:
  /// ADA's steps between updates of p.
  static constexpr int kAdaInterval = 4;

  DiscriminatorAugment(const TrainConfig& config, const c10::Device& device);

  /// Whether anything is applied.
  bool enabled() const { return ada() || !policies_.empty(); }
  /// Whether ADA's pipeline runs: adaptively (augment.ada_target > 0) or at a fixed p (augment.ada_p).
  bool ada() const { return adaptive() || ada_start_p_ > 0; }
  /// Whether p moves (augment.ada_target > 0).
  bool adaptive() const { return ada_target_ > 0; }
  /// This process is rank `rank` of `world` (alone: 0 of 1).
  void setShard(std::int64_t rank, std::int64_t world);
  /// `x` (B, C, H, W) with fresh draws: differentiable in `x`.
  torch::Tensor operator()(const torch::Tensor& x);

  /// ADA's p now, a 0-dim float32 tensor on the device (0 without ADA).
  const torch::Tensor& probability() const { return p_; }
  /// One step's r_t (a 0-dim tensor on the device, the job's mean): every kAdaInterval-th call moves p.
  void adjust(const torch::Tensor& rt);
  /// p's update for one interval: sign(mean_rt − target) × images / (kimg × 1000) added, within [0, 1]
  /// (what adjust() does on the device, on the host: tests and documentation).
  static double nextProbability(double p, double mean_rt, double target, double kimg, std::int64_t interval_images);

  /// p, the interval's r_t sum and its steps so far, as one float64 tensor (checkpoints).
  torch::Tensor adaState() const;
  /// Throws std::invalid_argument for a state no run writes (p outside [0, 1], ...).
  void restoreAdaState(const torch::Tensor& state);
  /// Sets p (a resume that gives another augment.ada_p).
  void setProbability(double p);
  /// The generator's state and kind ("cpu", "cuda"), for checkpoints.
  torch::Tensor rngState() const;
  std::string rngKind() const;
  /// Restores a state saved by a generator of `kind`; false (and nothing changed) for another kind.
  bool restoreRng(const torch::Tensor& state, const std::string& kind);

private:
  std::vector<DiffAugmentPolicy> policies_;
  AdaOps ada_ops_;
  double ada_target_ = 0, ada_kimg_ = 500, ada_start_p_ = 0;
  std::int64_t batch_size_;
  std::int64_t rank_ = 0, world_ = 1;
  c10::Device device_;
  mutable at::Generator generator_;  // get_state() takes its lock
  torch::Tensor p_, rt_sum_;
  std::int64_t interval_steps_ = 0;
};

}  // namespace streetgan
