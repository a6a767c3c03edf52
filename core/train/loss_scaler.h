#pragma once
// Dynamic loss scaling for fp16 training (what PyTorch's GradScaler does), kept on the device:
// the scale, the count of clean steps and the found-inf flag are device tensors, so a training
// step never waits for the host. scale() multiplies the loss by the scale before backward;
// step() unscales an optimizer's gradients and checks them for Inf/NaN in one fused ATen kernel
// per gradient list (torch_compat.h) and steps the optimizer unless one was not finite; update()
// halves the scale after an overflow and doubles it after `growth_interval` clean steps, in
// ATen's scale-update kernel. Disabled (scale 1, never skips) for fp32 and bf16.
#include <c10/core/Device.h>
#include <torch/serialize/archive.h>
#include <torch/types.h>

#include <cstdint>

namespace streetgan {

class MultiTensorAdamW;

struct LossScalerOptions {
  double init_scale = 65536.0;  ///< the first scale, as PyTorch's GradScaler
  double growth_factor = 2.0;   ///< applied after growth_interval clean steps
  double backoff_factor = 0.5;  ///< applied after a step with an Inf/NaN gradient
  int growth_interval = 2000;   ///< clean steps before the scale grows
};

class LossScaler {
public:
  /// A scaler whose state lives on `device` (where the gradients are).
  LossScaler(bool enabled, const c10::Device& device, LossScalerOptions options = {});

  /// `loss` times the current scale (unchanged when disabled).
  torch::Tensor scale(const torch::Tensor& loss) const;
  /// Unscales `optimizer`'s gradients and steps it unless one of them is Inf/NaN (then the
  /// optimizer's state and parameters stay as they were). Steps plainly when disabled.
  void step(MultiTensorAdamW& optimizer);
  /// Adjusts the scale once every optimizer of the iteration has stepped.
  void update();

  bool enabled() const { return enabled_; }
  const LossScalerOptions& options() const { return options_; }
  /// The scale as a one-element float tensor on the device (a copy: later updates leave it).
  torch::Tensor scaleTensor() const;
  /// 1 (one-element float on the device) when a gradient of this iteration was Inf/NaN, else 0;
  /// valid between step() and update().
  torch::Tensor overflowTensor() const;
  /// The scale and the clean-step count read to the host (a synchronisation: tests, checkpoints).
  double currentScale() const;
  std::int64_t cleanSteps() const;

  void save(torch::serialize::OutputArchive& archive) const;
  /// Restores a saved scaler. Returns false when this scaler is enabled but the saved one was
  /// not (a run resumed in fp16 after fp32/bf16): then it keeps its fresh initial scale.
  bool load(torch::serialize::InputArchive& archive);

private:
  bool enabled_;
  LossScalerOptions options_;
  c10::Device device_;
  torch::Tensor scale_;            ///< float32 {1}
  torch::Tensor growth_tracker_;   ///< int32 {1}, clean steps since the last change
  torch::Tensor found_inf_;        ///< float32 {1}, summed over this iteration's optimizers
};

}  // namespace streetgan
