#pragma once
// DcganStep: both networks, both AdamW optimizers and the loss scaler, and the one training step
// of docs/model.md. D learns from a real batch (label 1) and from G(z).detach() (label 0); then G
// learns through D with label 1. Used by the Trainer and by `streetgan bench train`, so the
// benchmark measures exactly the step that trains.
#include "core/config/train_config.h"
#include "core/model/discriminator.h"
#include "core/model/generator.h"
#include "core/train/compute_device.h"
#include "core/train/loss_scaler.h"

#include <torch/optim/adamw.h>

#include <memory>

namespace streetgan {

struct StepStats {
  double loss_d = 0;  ///< BCE of D on real + BCE of D on fake
  double loss_g = 0;  ///< BCE of D(G(z)) against label 1
  double d_x = 0;     ///< mean sigmoid(D(x)) on the real batch
  double d_g_z1 = 0;  ///< mean sigmoid(D(G(z))) before D's step
  double d_g_z2 = 0;  ///< mean sigmoid(D(G(z))) after D's step
  bool skipped = false;  ///< fp16 overflow: the optimizers did not step
};

class DcganStep {
public:
  /// Builds G and D for `config`, initialised from `config.seed`, on `device`.
  DcganStep(const TrainConfig& config, const c10::Device& device, Precision precision);

  /// One step on `real` (B, nc, H, W) in [-1, 1] with latent `noise` (B, nz, 1, 1), both already
  /// on the device.
  StepStats step(const torch::Tensor& real, const torch::Tensor& noise);

  Generator& generator() { return generator_; }
  Discriminator& discriminator() { return discriminator_; }
  torch::optim::AdamW& optimizerG() { return *optimizer_g_; }
  torch::optim::AdamW& optimizerD() { return *optimizer_d_; }
  LossScaler& scaler() { return scaler_; }
  const c10::Device& device() const { return device_; }
  Precision precision() const { return precision_; }

private:
  c10::Device device_;
  Precision precision_;
  Generator generator_;
  Discriminator discriminator_;
  std::unique_ptr<torch::optim::AdamW> optimizer_g_;
  std::unique_ptr<torch::optim::AdamW> optimizer_d_;
  LossScaler scaler_;
};

}  // namespace streetgan
