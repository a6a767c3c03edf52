#include "core/train/dcgan_step.h"

#include "core/model/conv_layout.h"
#include "core/model/weight_init.h"
#include "core/train/discriminator_augment.h"
#include "core/train/generator_average.h"
#include "core/train/network_options.h"
#include "core/distributed/gradient_all_reduce.h"
#include "core/distributed/rank_group.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <optional>
#include <stdexcept>

namespace streetgan {
namespace {

// lr_d and lr_g (TTUR) default to lr: 0 in the config.
torch::optim::AdamWOptions adamw(const TrainConfig& config, double lr) {
  return torch::optim::AdamWOptions(lr > 0 ? lr : config.lr)
      .betas({config.beta1, config.beta2})
      .weight_decay(config.weight_decay);
}

// Set gradients to "none" rather than zero: the next backward writes them fresh instead of
// adding to a zero tensor (PyTorch 2's default).
void clearStepGradients(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
}

// Conv weights in channels-last where the activations run in it (conv_layout.h), so cuDNN and
// oneDNN do not reorder them on every call.
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
  if (augment_) augment_->setShard(group_ ? group_->rank() : 0, group_ ? group_->worldSize() : 1);
  if (!group_) return;
  reduce_g_ = std::make_unique<GradientAllReduce>(*group_, generator_->parameters());
  reduce_d_ = std::make_unique<GradientAllReduce>(*group_, discriminator_->parameters());
}

void DcganStep::broadcastFromRankZero() {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::nn::Module*> modules{generator_.get(), discriminator_.get()};
  if (average_) modules.push_back(average_->generator().get());
  for (torch::nn::Module* net : modules) {
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
  s.ada_p = row[8];
  return s;
}

DcganStep::DcganStep(const TrainConfig& config, const c10::Device& device, Precision precision)
    : device_(device),
      precision_(precision),
      generator_(nullptr),
      discriminator_(nullptr),
      scaler_(precision == Precision::Fp16, device) {
  torch::manual_seed(static_cast<std::uint64_t>(config.seed));
  generator_ = Generator(generatorOptionsFor(config));
  discriminator_ = Discriminator(discriminatorOptionsFor(config));
  initDcganWeights(*generator_);
  initDcganWeights(*discriminator_);
  generator_->to(device);
  discriminator_->to(device);
  // Our shapes are fixed for a run, so cuDNN's autotuner pays for itself after a few steps.
  if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(true);
  if (precision != Precision::Fp32 && reducedPrecisionRunsChannelsLast(device)) {
    weightsToChannelsLast(*generator_);
    weightsToChannelsLast(*discriminator_);
  }
  optimizer_g_ = std::make_unique<MultiTensorAdamW>(generator_->parameters(), adamw(config, config.lr_g));
  optimizer_d_ = std::make_unique<MultiTensorAdamW>(discriminator_->parameters(), adamw(config, config.lr_d));
  auto loss = ganLossNamed(config.loss);
  if (!loss) throw std::invalid_argument("DcganStep: " + loss.error());  // the key table refuses it first
  loss_ = *loss;
  r1_gamma_ = config.r1_gamma;
  r2_gamma_ = config.r2_gamma;
  reg_every_ = config.reg_every;
  n_critic_ = config.n_critic;
  if (config.ema.half_life_images > 0) average_ = std::make_unique<GeneratorAverage>(config.ema, generator_);
  auto augment = std::make_unique<DiscriminatorAugment>(config, device);
  if (augment->enabled()) augment_ = std::move(augment);
}

torch::Tensor DcganStep::augmented(const torch::Tensor& x) { return augment_ ? (*augment_)(x) : x; }

void DcganStep::setLearningRates(const TrainConfig& config) {
  for (auto [optimizer, lr] : {std::pair{optimizer_d_.get(), config.lr_d}, {optimizer_g_.get(), config.lr_g}})
    for (auto& group : optimizer->param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr > 0 ? lr : config.lr);
}

Generator& DcganStep::renderingGenerator() { return average_ ? average_->generator() : generator_; }

void DcganStep::updateAverage(std::int64_t images_before, std::int64_t step_images) {
  if (average_) average_->update(generator_, images_before, step_images);
}

torch::Tensor DcganStep::trainStep(const torch::Tensor& real, const torch::Tensor& noise) {
  generator_->train();
  discriminator_->train();
  discriminator_->startStep();
  if (group_ && !sync_batchnorm_) {
    torch::NoGradGuard no_grad;
    broadcastBuffers(*generator_, *group_);
    broadcastBuffers(*discriminator_, *group_);
  }
  SyncBatchNormScope sync_scope(generator_, discriminator_, sync_batchnorm_ ? group_ : nullptr);

  // D: the real batch, and the generated batch detached; the inputs a penalty differentiates
  // D's logits by carry a gradient (taken before augmentation, as StyleGAN2-ADA's R1 is).
  const std::int64_t step_index = steps_done_++;
  const bool penalised = (r1_gamma_ > 0 || r2_gamma_ > 0) && step_index % reg_every_ == 0;
  const bool generator_learns = (step_index + 1) % n_critic_ == 0;
  torch::Tensor out_real, out_fake_d, out_fake_g;
  clearStepGradients(*discriminator_);
  torch::Tensor fake;
  torch::Tensor real_in = penalised && r1_gamma_ > 0 ? real.detach().requires_grad_(true) : real;
  torch::Tensor fake_in;
  {
    AutocastScope autocast(precision_, device_);
    out_real = discriminator_->forward(augmented(real_in)).to(torch::kFloat32);
    fake = generator_->forward(noise);
    fake_in = penalised && r2_gamma_ > 0 ? fake.detach().requires_grad_(true) : fake.detach();
    out_fake_d = discriminator_->forward(augmented(fake_in)).to(torch::kFloat32);
  }
  const DiscriminatorLoss loss_d = discriminatorLoss(loss_, out_real, out_fake_d);
  if (penalised) {
    // One backward through the loss and the penalties: they share D's forward graph.
    const torch::Tensor scale = scaler_.enabled() ? scaler_.scaleTensor() : torch::Tensor();
    torch::Tensor penalty = torch::zeros({}, out_real.options());
    if (r1_gamma_ > 0) penalty = penalty + zeroCentredGradientPenalty(out_real, real_in, r1_gamma_, scale);
    if (r2_gamma_ > 0) penalty = penalty + zeroCentredGradientPenalty(out_fake_d, fake_in, r2_gamma_, scale);
    scaler_.scale(loss_d.total + penalty * static_cast<double>(reg_every_)).backward();
  } else {
    for (const torch::Tensor& term : loss_d.terms) scaler_.scale(term).backward();
  }
  if (reduce_d_) reduce_d_->average();
  scaler_.step(*optimizer_d_);

  const torch::Tensor loss_g = generatorStep(real, fake, generator_learns, out_fake_g);

  torch::NoGradGuard no_grad;
  const auto f32 = [](const torch::Tensor& t) { return t.reshape({1}).to(torch::kFloat32); };
  // One small tensor, assembled before the scale update so it records the scale this step used.
  const auto options = torch::TensorOptions().device(device_).dtype(torch::kFloat32);
  auto stats = torch::cat({f32(loss_d.total), f32(loss_g), f32(torch::sigmoid(out_real).mean()),
                           f32(torch::sigmoid(out_fake_d).mean()), f32(torch::sigmoid(out_fake_g).mean()),
                           scaler_.enabled() ? scaler_.overflowTensor() : torch::zeros({1}, options),
                           scaler_.enabled() ? scaler_.scaleTensor() : torch::ones({1}, options),
                           f32(torch::sign(out_real).mean()),
                           augment_ ? f32(augment_->probability()) : torch::zeros({1}, options)})
                   .to(torch::kFloat64);
  if (group_) {
    // The job's means: every rank reports the same numbers (skipped and the scale agree already).
    group_->allReduceSum(stats);
    stats.div_(group_->worldSize());
  }
  if (augment_) augment_->adjust(stats[7]);  // the job's r_t: p moves alike on every rank
  scaler_.update();
  return stats;
}

// G through the updated D (rpgan pairs each image with D's logit on a real one, without a
// gradient). A critic-only step (n_critic) measures G's loss and does not learn from it.
torch::Tensor DcganStep::generatorStep(const torch::Tensor& real, const torch::Tensor& fake, bool learns,
                                       torch::Tensor& out_fake_g) {
  std::optional<torch::NoGradGuard> measuring;
  if (!learns) measuring.emplace();
  clearStepGradients(*generator_);
  torch::Tensor out_real_g;
  {
    AutocastScope autocast(precision_, device_);
    out_fake_g = discriminator_->forward(augmented(fake)).to(torch::kFloat32);
    if (generatorLossNeedsReal(loss_)) {
      torch::NoGradGuard no_grad;
      out_real_g = discriminator_->forward(augmented(real)).to(torch::kFloat32);
    }
  }
  torch::Tensor loss_g = generatorLoss(loss_, out_fake_g, out_real_g);
  if (!learns) return loss_g;
  scaler_.scale(loss_g).backward();
  if (reduce_g_) reduce_g_->average();
  scaler_.step(*optimizer_g_);
  return loss_g;
}

StepStats DcganStep::step(const torch::Tensor& real, const torch::Tensor& noise) {
  const auto row = trainStep(real, noise).to(torch::kCPU).contiguous();
  return StepStats::fromRow(row.data_ptr<double>());
}

}  // namespace streetgan
