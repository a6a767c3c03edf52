#pragma once
// Dynamic loss scaling for fp16 training (what PyTorch's GradScaler does): multiplies the loss by
// a scale before backward, divides the gradients by it before the optimizer step, skips the step
// when a gradient is Inf/NaN and halves the scale, and doubles it after `growth_interval` clean
// steps. Disabled (scale 1, never skips) for fp32 and bf16.
#include <torch/optim/optimizer.h>
#include <torch/serialize/archive.h>

namespace streetgan {

struct LossScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
};

class LossScaler {
public:
  explicit LossScaler(bool enabled, LossScalerOptions options = {});

  torch::Tensor scale(const torch::Tensor& loss) const;
  /// Unscales the optimizer's gradients and steps it unless one is not finite.
  /// Returns false when the step was skipped.
  bool step(torch::optim::Optimizer& optimizer);
  /// Adjusts the scale after every optimizer of the iteration stepped.
  void update();

  bool enabled() const { return enabled_; }
  double currentScale() const { return scale_; }

  void save(torch::serialize::OutputArchive& archive) const;
  void load(torch::serialize::InputArchive& archive);

private:
  bool enabled_;
  LossScalerOptions options_;
  double scale_;
  std::int64_t clean_steps_ = 0;
  bool found_inf_ = false;
};

}  // namespace streetgan
