#include "core/train/dcgan_step.h"

#include "core/model/weight_init.h"
#include "core/distributed/gradient_all_reduce.h"
#include "core/distributed/rank_group.h"

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
void clearStepGradients(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
}

// Conv weights in channels-last where the activations run in it (conv_layout.h), so cuDNN
// does not transpose them on every call.
void weightsToChannelsLast(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
}

// Every buffer of `module` (BatchNorm's running statistics) replaced by rank 0's.
void broadcastBuffers(torch::nn::Module& module, RankGroup& group) {
  for (auto& buffer : module.buffers()) {
    if (buffer.is_contiguous()) {
      group.broadcastFromRankZero(buffer);
    } else {
      torch::Tensor copy = buffer.contiguous();
      group.broadcastFromRankZero(copy);
      buffer.copy_(copy);
    }
  }
}

// Sets the nets' BatchNorm sums for one step and always clears them again, so sample grids and
// Parzen (rank 0 alone) never wait for the other ranks.
class SyncBatchNormScope {
public:
  SyncBatchNormScope(Generator& g, Discriminator& d, RankGroup* group) : g_(g), d_(d), active_(group != nullptr) {
    if (!active_) return;
    BatchStatsSum sum = [group](torch::Tensor& t) { group->allReduceSum(t); };
    g_->setBatchStatsSum(sum);
    d_->setBatchStatsSum(sum);
  }
  ~SyncBatchNormScope() {
    if (!active_) return;
    g_->setBatchStatsSum(nullptr);
    d_->setBatchStatsSum(nullptr);
  }
  SyncBatchNormScope(const SyncBatchNormScope&) = delete;
  SyncBatchNormScope& operator=(const SyncBatchNormScope&) = delete;

private:
  Generator& g_;
  Discriminator& d_;
  bool active_;
};

}  // namespace

DcganStep::~DcganStep() = default;

void DcganStep::setRankGroup(RankGroup* group, bool sync_batchnorm) {
  group_ = group;
  sync_batchnorm_ = sync_batchnorm;
  reduce_g_.reset();
  reduce_d_.reset();
  if (!group_) return;
  reduce_g_ = std::make_unique<GradientAllReduce>(*group_, generator_->parameters());
  reduce_d_ = std::make_unique<GradientAllReduce>(*group_, discriminator_->parameters());
}

void DcganStep::broadcastFromRankZero() {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  for (torch::nn::Module* net : nets()) {
    for (auto& p : net->parameters()) {
      torch::Tensor copy = p.contiguous();
      group_->broadcastFromRankZero(copy);
      p.copy_(copy);
    }
    broadcastBuffers(*net, *group_);
  }
}

StepStats StepStats::fromRow(const double* row) {
  StepStats s;
  s.loss_d = row[0];
  s.loss_g = row[1];
  s.d_x = row[2];
  s.d_g_z1 = row[3];
  s.d_g_z2 = row[4];
  s.skipped = row[5] != 0;
  s.loss_scale = row[6];
  s.rt = row[7];
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
  // The labels only grow: a short batch uses their first rows, so a CUDA graph recorded on a full
  // batch (GraphedTrainStep) keeps reading tensors that still exist after one.
  if (!ones_.defined() || ones_.size(0) < batch) {
    const auto options = torch::TensorOptions().device(device_).dtype(torch::kFloat32);
    ones_ = torch::ones({batch}, options);
    zeros_ = torch::zeros({batch}, options);
  }
  const torch::Tensor ones = ones_.narrow(0, 0, batch), zeros = zeros_.narrow(0, 0, batch);

  if (group_ && !sync_batchnorm_) {
    torch::NoGradGuard no_grad;
    broadcastBuffers(*generator_, *group_);
    broadcastBuffers(*discriminator_, *group_);
  }
  SyncBatchNormScope sync_scope(generator_, discriminator_, sync_batchnorm_ ? group_ : nullptr);

  torch::Tensor out_real, out_fake_d, out_fake_g;
  // D: real batch with label 1, generated batch (detached) with label 0.
  clearStepGradients(*discriminator_);
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
  if (reduce_d_) reduce_d_->average();
  scaler_.step(*optimizer_d_);

  // G: through the updated D, label 1.
  clearStepGradients(*generator_);
  {
    AutocastScope autocast(precision_, device_);
    out_fake_g = discriminator_->forward(fake).to(torch::kFloat32);
  }
  const auto loss_g = torch::binary_cross_entropy_with_logits(out_fake_g, ones);
  scaler_.scale(loss_g).backward();
  if (reduce_g_) reduce_g_->average();
  scaler_.step(*optimizer_g_);

  torch::NoGradGuard no_grad;
  const auto f32 = [](const torch::Tensor& t) { return t.reshape({1}).to(torch::kFloat32); };
  // One small tensor, assembled before the scale update so it records the scale this step used.
  auto stats = torch::cat({f32(loss_real + loss_fake), f32(loss_g),
                           f32(torch::sigmoid(out_real).mean()), f32(torch::sigmoid(out_fake_d).mean()),
                           f32(torch::sigmoid(out_fake_g).mean()),
                           scaler_.enabled() ? scaler_.overflowTensor() : torch::zeros({1}, ones_.options()),
                           scaler_.enabled() ? scaler_.scaleTensor() : torch::ones({1}, ones_.options()),
                           f32(torch::sign(out_real).mean())})
                   .to(torch::kFloat64);
  if (group_) {
    // The job's means: every rank reports the same numbers (skipped and the scale agree already).
    group_->allReduceSum(stats);
    stats.div_(group_->worldSize());
  }
  scaler_.update();
  return stats;
}

StepStats DcganStep::step(const torch::Tensor& real, const torch::Tensor& noise) {
  const auto row = trainStep(real, noise).to(torch::kCPU).contiguous();
  return StepStats::fromRow(row.data_ptr<double>());
}

}  // namespace streetgan
