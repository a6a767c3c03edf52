#include "core/train/dcgan_step.h"

#include "core/model/weight_init.h"

#include <ATen/Context.h>
#include <torch/torch.h>

namespace streetgan {
namespace {

torch::optim::AdamWOptions adamw(const TrainConfig& config) {
  return torch::optim::AdamWOptions(config.lr)
      .betas({config.beta1, config.beta2})
      .weight_decay(config.weight_decay);
}

// Set gradients to "none" rather than zero: the next backward writes them fresh instead of
// adding to a zero tensor (PyTorch 2's default).
void clearGradients(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
}

// Conv weights in channels-last where the activations run in it (conv_layout.h), so cuDNN
// does not transpose them on every call.
void weightsToChannelsLast(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
}

}  // namespace

StepStats StepStats::fromRow(const double* row) {
  StepStats s;
  s.loss_d = row[0];
  s.loss_g = row[1];
  s.d_x = row[2];
  s.d_g_z1 = row[3];
  s.d_g_z2 = row[4];
  s.skipped = row[5] != 0;
  s.loss_scale = row[6];
  return s;
}

DcganStep::DcganStep(const TrainConfig& config, const c10::Device& device, Precision precision)
    : device_(device),
      precision_(precision),
      generator_(nullptr),
      discriminator_(nullptr),
      scaler_(precision == Precision::Fp16, device) {
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  generator_ = Generator(GeneratorOptions{config.nz, config.ngf, config.nc, config.img_size});
  discriminator_ = Discriminator(DiscriminatorOptions{config.ndf, config.nc, config.img_size});
  initDcganWeights(*generator_);
  initDcganWeights(*discriminator_);
  generator_->to(device);
  discriminator_->to(device);
  if (device.is_cuda()) {
    // Our shapes are fixed for a run, so cuDNN's autotuner pays for itself after a few steps.
    at::globalContext().setBenchmarkCuDNN(true);
    if (precision != Precision::Fp32) {
      weightsToChannelsLast(*generator_);
      weightsToChannelsLast(*discriminator_);
    }
  }
  optimizer_g_ = std::make_unique<MultiTensorAdamW>(generator_->parameters(), adamw(config));
  optimizer_d_ = std::make_unique<MultiTensorAdamW>(discriminator_->parameters(), adamw(config));
}

torch::Tensor DcganStep::trainStep(const torch::Tensor& real, const torch::Tensor& noise) {
  generator_->train();
  discriminator_->train();
  const auto batch = real.size(0);
  if (!ones_.defined() || ones_.size(0) != batch) {
    const auto options = torch::TensorOptions().device(device_).dtype(torch::kFloat32);
    ones_ = torch::ones({batch}, options);
    zeros_ = torch::zeros({batch}, options);
  }

  torch::Tensor out_real, out_fake_d, out_fake_g;
  // D: real batch with label 1, generated batch (detached) with label 0.
  clearGradients(*discriminator_);
  torch::Tensor fake;
  {
    AutocastScope autocast(precision_, device_);
    out_real = discriminator_->forward(real).to(torch::kFloat32);
    fake = generator_->forward(noise);
    out_fake_d = discriminator_->forward(fake.detach()).to(torch::kFloat32);
  }
  const auto loss_real = torch::binary_cross_entropy_with_logits(out_real, ones_);
  const auto loss_fake = torch::binary_cross_entropy_with_logits(out_fake_d, zeros_);
  scaler_.scale(loss_real).backward();
  scaler_.scale(loss_fake).backward();
  scaler_.step(*optimizer_d_);

  // G: through the updated D, label 1.
  clearGradients(*generator_);
  {
    AutocastScope autocast(precision_, device_);
    out_fake_g = discriminator_->forward(fake).to(torch::kFloat32);
  }
  const auto loss_g = torch::binary_cross_entropy_with_logits(out_fake_g, ones_);
  scaler_.scale(loss_g).backward();
  scaler_.step(*optimizer_g_);

  torch::NoGradGuard no_grad;
  const auto f32 = [](const torch::Tensor& t) { return t.reshape({1}).to(torch::kFloat32); };
  // One small tensor, assembled before the scale update so it records the scale this step used.
  auto stats = torch::cat({f32(loss_real + loss_fake), f32(loss_g),
                           f32(torch::sigmoid(out_real).mean()), f32(torch::sigmoid(out_fake_d).mean()),
                           f32(torch::sigmoid(out_fake_g).mean()),
                           scaler_.enabled() ? scaler_.overflowTensor() : torch::zeros({1}, ones_.options()),
                           scaler_.enabled() ? scaler_.scaleTensor() : torch::ones({1}, ones_.options())})
                   .to(torch::kFloat64);
  scaler_.update();
  return stats;
}

StepStats DcganStep::step(const torch::Tensor& real, const torch::Tensor& noise) {
  const auto row = trainStep(real, noise).to(torch::kCPU).contiguous();
  return StepStats::fromRow(row.data_ptr<double>());
}

}  // namespace streetgan
