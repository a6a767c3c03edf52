#pragma once
// G's exponential moving average (StyleGAN2's G_ema; docs/config.md "Recipe"): a copy of the
// generator whose weights follow G's, each step ema ← β·ema + (1 − β)·G with
// β = 0.5^(step images / half-life), the half-life at most rampup × the images trained before the
// step when a ramp-up is set (so the first step copies G). BatchNorm's running statistics are
// averaged alike; integer buffers (the batch counts) are copied. The average never trains: it is
// what checkpoints render from by default (checkpoint.h's GeneratorChoice).
#include "core/config/train_config.h"
#include "core/model/generator.h"

#include <cstdint>

namespace streetgan {

class GeneratorAverage {
public:
  /// An average of `generator` (same shape, device and memory layout), starting as its copy.
  GeneratorAverage(const EmaConfig& config, Generator& generator);

  /// β of one step of `step_images` images after `images_before` images (the paper's formula).
  static double decay(const EmaConfig& config, std::int64_t images_before, std::int64_t step_images);
  /// Moves the average toward `generator` after a step of `step_images` images (every rank's),
  /// `images_before` having been trained before it.
  void update(Generator& generator, std::int64_t images_before, std::int64_t step_images);
  /// Sets the average to a copy of `generator` (a run's first step, or tests).
  void copyFrom(Generator& generator);

  Generator& generator() { return average_; }

private:
  EmaConfig config_;
  Generator average_{nullptr};
};

}  // namespace streetgan
