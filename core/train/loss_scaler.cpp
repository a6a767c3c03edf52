#include "core/train/loss_scaler.h"

#include <torch/torch.h>

namespace streetgan {

LossScaler::LossScaler(bool enabled, LossScalerOptions options)
    : enabled_(enabled), options_(options), scale_(enabled ? options.init_scale : 1.0) {}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const {
  return enabled_ ? loss * scale_ : loss;
}

bool LossScaler::step(torch::optim::Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> finite_flags;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      p.mutable_grad().mul_(1.0 / scale_);
      finite_flags.push_back(torch::isfinite(p.grad()).all());
    }
  const bool finite = finite_flags.empty() || torch::stack(finite_flags).all().item<bool>();
  if (!finite) {
    found_inf_ = true;
    return false;
  }
  optimizer.step();
  return true;
}

void LossScaler::update() {
  if (!enabled_) return;
  if (found_inf_) {
    scale_ *= options_.backoff_factor;
    clean_steps_ = 0;
  } else if (++clean_steps_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    clean_steps_ = 0;
  }
  found_inf_ = false;
}

void LossScaler::save(torch::serialize::OutputArchive& archive) const {
  archive.write("scaler_scale", torch::tensor(scale_, torch::kFloat64));
  archive.write("scaler_clean_steps", torch::tensor(clean_steps_, torch::kInt64));
}

void LossScaler::load(torch::serialize::InputArchive& archive) {
  torch::Tensor scale, clean;
  archive.read("scaler_scale", scale);
  archive.read("scaler_clean_steps", clean);
  scale_ = scale.item<double>();
  clean_steps_ = clean.item<std::int64_t>();
}

}  // namespace streetgan
