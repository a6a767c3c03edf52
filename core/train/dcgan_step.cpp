#include "core/train/dcgan_step.h"

#include "core/model/weight_init.h"

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

}  // namespace

DcganStep::DcganStep(const TrainConfig& config, const c10::Device& device, Precision precision)
    : device_(device),
      precision_(precision),
      generator_(nullptr),
      discriminator_(nullptr),
      scaler_(precision == Precision::Fp16) {
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  generator_ = Generator(GeneratorOptions{config.nz, config.ngf, config.nc, config.img_size});
  discriminator_ = Discriminator(DiscriminatorOptions{config.ndf, config.nc, config.img_size});
  initDcganWeights(*generator_);
  initDcganWeights(*discriminator_);
  generator_->to(device);
  discriminator_->to(device);
  optimizer_g_ = std::make_unique<torch::optim::AdamW>(generator_->parameters(), adamw(config));
  optimizer_d_ = std::make_unique<torch::optim::AdamW>(discriminator_->parameters(), adamw(config));
}

StepStats DcganStep::step(const torch::Tensor& real, const torch::Tensor& noise) {
  generator_->train();
  discriminator_->train();
  const auto batch = real.size(0);
  const auto options = torch::TensorOptions().device(device_).dtype(torch::kFloat32);
  const auto ones = torch::ones({batch}, options);
  const auto zeros = torch::zeros({batch}, options);

  torch::Tensor loss_d, loss_g, out_real, out_fake_d, out_fake_g;
  // D: real batch with label 1, generated batch (detached) with label 0.
  clearGradients(*discriminator_);
  torch::Tensor fake;
  {
    AutocastScope autocast(precision_, device_);
    out_real = discriminator_->forward(real).to(torch::kFloat32);
    fake = generator_->forward(noise);
    out_fake_d = discriminator_->forward(fake.detach()).to(torch::kFloat32);
  }
  const auto loss_real = torch::binary_cross_entropy_with_logits(out_real, ones);
  const auto loss_fake = torch::binary_cross_entropy_with_logits(out_fake_d, zeros);
  scaler_.scale(loss_real).backward();
  scaler_.scale(loss_fake).backward();
  const bool d_stepped = scaler_.step(*optimizer_d_);

  // G: through the updated D, label 1.
  clearGradients(*generator_);
  {
    AutocastScope autocast(precision_, device_);
    out_fake_g = discriminator_->forward(fake).to(torch::kFloat32);
  }
  loss_g = torch::binary_cross_entropy_with_logits(out_fake_g, ones);
  scaler_.scale(loss_g).backward();
  const bool g_stepped = scaler_.step(*optimizer_g_);
  scaler_.update();

  torch::NoGradGuard no_grad;
  loss_d = loss_real + loss_fake;
  const auto stats = torch::stack({loss_d, loss_g, torch::sigmoid(out_real).mean(),
                                   torch::sigmoid(out_fake_d).mean(),
                                   torch::sigmoid(out_fake_g).mean()})
                         .to(torch::kCPU, torch::kFloat64);
  const double* v = stats.data_ptr<double>();
  StepStats result;
  result.loss_d = v[0];
  result.loss_g = v[1];
  result.d_x = v[2];
  result.d_g_z1 = v[3];
  result.d_g_z2 = v[4];
  result.skipped = !d_stepped || !g_stepped;
  return result;
}

}  // namespace streetgan
