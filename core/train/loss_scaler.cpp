#include "core/train/loss_scaler.h"

#include "core/train/multi_tensor_adamw.h"
#include "core/util/torch_compat.h"

#include <torch/torch.h>

namespace streetgan {

LossScaler::LossScaler(bool enabled, const c10::Device& device, LossScalerOptions options)
    : enabled_(enabled), options_(options), device_(device) {
  const auto on_device = torch::TensorOptions().device(device);
  scale_ = torch::full({1}, enabled ? options.init_scale : 1.0, on_device.dtype(torch::kFloat32));
  growth_tracker_ = torch::zeros({1}, on_device.dtype(torch::kInt32));
  found_inf_ = torch::zeros({1}, on_device.dtype(torch::kFloat32));
}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const {
  // IntArrayRef spelled out: LibTorch 2.x resolves view({}) to view(ScalarType), a byte view.
  return enabled_ ? loss * scale_.to(loss.scalar_type()).view(at::IntArrayRef{}) : loss;
}

void LossScaler::step(MultiTensorAdamW& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return;
  }
  torch::NoGradGuard no_grad;
  auto found_inf = torch::zeros_like(found_inf_);
  // In double, as GradScaler does, so 1/scale is exact for every power of two it takes.
  const auto inv_scale = scale_.to(torch::kFloat64).reciprocal().to(torch::kFloat32);
  torch_compat::ampUnscaleAndCheck(optimizer.gradients(), found_inf, inv_scale);
  optimizer.stepUnlessOverflow(found_inf);
  found_inf_.add_(found_inf);
}

void LossScaler::update() {
  if (!enabled_) return;
  torch::NoGradGuard no_grad;
  torch_compat::ampUpdateScale(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                 options_.backoff_factor, options_.growth_interval);
  found_inf_.zero_();
}

torch::Tensor LossScaler::scaleTensor() const { return scale_.clone(); }

torch::Tensor LossScaler::overflowTensor() const { return (found_inf_ > 0).to(torch::kFloat32); }

double LossScaler::currentScale() const { return scale_.item<double>(); }

std::int64_t LossScaler::cleanSteps() const { return growth_tracker_.item<std::int64_t>(); }

void LossScaler::save(torch::serialize::OutputArchive& archive) const {
  archive.write("scaler_enabled", torch::tensor(static_cast<std::int64_t>(enabled_), torch::kInt64));
  archive.write("scaler_scale", torch::tensor(currentScale(), torch::kFloat64));
  archive.write("scaler_clean_steps", torch::tensor(cleanSteps(), torch::kInt64));
}

bool LossScaler::load(torch::serialize::InputArchive& archive) {
  torch::Tensor scale, clean, was_enabled;
  archive.read("scaler_scale", scale);
  archive.read("scaler_clean_steps", clean);
  // Checkpoints from before `scaler_enabled` was written: a disabled scaler always held 1.
  const bool saved_enabled = archive.try_read("scaler_enabled", was_enabled)
                                 ? was_enabled.item<std::int64_t>() != 0
                                 : scale.item<double>() != 1.0;
  if (!enabled_) return true;
  if (!saved_enabled) return false;
  scale_.fill_(scale.item<double>());
  growth_tracker_.fill_(clean.item<std::int64_t>());
  found_inf_.zero_();
  return true;
}

}  // namespace streetgan
