#include "core/train/discriminator_augment.h"

#include "core/train/compute_device.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

namespace streetgan {

DiscriminatorAugment::DiscriminatorAugment(const TrainConfig& config, const c10::Device& device)
    : policies_(diffAugmentPoliciesOf(config.augment.diff)),
      ada_ops_(adaOpsNamed(config.augment.ada_ops)),
      ada_target_(config.augment.ada_target),
      ada_kimg_(config.augment.ada_kimg),
      ada_start_p_(config.augment.ada_p),
      batch_size_(config.batch_size),
      device_(device),
      // Apart from the weights' (seed), the training noise's (2·seed + 1) and the data's streams.
      generator_(makeDeviceGenerator(device, static_cast<std::uint64_t>(config.seed) * 2 + 3)),
      p_(torch::full({}, config.augment.ada_p, torch::TensorOptions().dtype(torch::kFloat32).device(device))),
      rt_sum_(torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device))) {}

void DiscriminatorAugment::setShard(std::int64_t rank, std::int64_t world) {
  rank_ = rank;
  world_ = world;
}

torch::Tensor DiscriminatorAugment::operator()(const torch::Tensor& x) {
  if (!enabled()) return x;
  // Every rank draws the job's rows (W × the batch size; a short last batch uses the first ones)
  // and keeps its own: the rows one process with the whole batch would give these images.
  const std::int64_t n = x.size(0);
  const std::int64_t rows = world_ * std::max(batch_size_, n);
  torch::Tensor y = x;
  if (ada()) y = applyAda(y, ada_ops_, drawAda(rows, generator_, device_).rowsOf(rank_, world_, n), p_);
  if (!policies_.empty()) {
    const DiffAugmentDraws job = drawDiffAugment(policies_, rows, y.size(2), y.size(3), generator_, device_);
    y = applyDiffAugment(y, policies_, job.rowsOf(rank_, world_, n));
  }
  return y;
}

double DiscriminatorAugment::nextProbability(double p, double mean_rt, double target, double kimg,
                                             std::int64_t interval_images) {
  const double sign = mean_rt > target ? 1.0 : mean_rt < target ? -1.0 : 0.0;
  return std::clamp(p + sign * static_cast<double>(interval_images) / (kimg * 1000), 0.0, 1.0);
}

void DiscriminatorAugment::adjust(const torch::Tensor& rt) {
  if (!adaptive()) return;
  torch::NoGradGuard no_grad;
  rt_sum_.add_(rt.to(torch::kFloat32));
  if (++interval_steps_ < kAdaInterval) return;
  const double step = static_cast<double>(world_ * batch_size_ * kAdaInterval) / (ada_kimg_ * 1000);
  // At most 1: every operation then always runs (the paper lets p pass 1 to the same effect).
  p_.add_(torch::sign(rt_sum_ / kAdaInterval - ada_target_) * step).clamp_(0, 1);
  rt_sum_.zero_();
  interval_steps_ = 0;
}

torch::Tensor DiscriminatorAugment::adaState() const {
  return torch::stack({p_.to(torch::kCPU, torch::kFloat64), rt_sum_.to(torch::kCPU, torch::kFloat64),
                       torch::tensor(static_cast<double>(interval_steps_), torch::kFloat64)});
}

void DiscriminatorAugment::restoreAdaState(const torch::Tensor& state) {
  if (state.dim() != 1 || state.size(0) != 3 || !state.is_floating_point())
    throw std::invalid_argument("ADA's state must hold 3 numbers");
  const torch::Tensor values = state.to(torch::kCPU, torch::kFloat64);
  const double p = values[0].item<double>(), sum = values[1].item<double>(), steps = values[2].item<double>();
  if (!(p >= 0 && p <= 1) || !std::isfinite(sum) || std::fabs(sum) > kAdaInterval ||
      !(steps >= 0 && steps < kAdaInterval) || steps != std::floor(steps))
    throw std::invalid_argument("ADA's state is out of range");
  p_.fill_(p);
  rt_sum_.fill_(sum);
  interval_steps_ = static_cast<std::int64_t>(steps);
}

void DiscriminatorAugment::setProbability(double p) { p_.fill_(std::clamp(p, 0.0, 1.0)); }

torch::Tensor DiscriminatorAugment::rngState() const {
  std::lock_guard<std::mutex> lock(generator_.mutex());
  return generator_.get_state();
}

std::string DiscriminatorAugment::rngKind() const { return generatorKind(device_); }

bool DiscriminatorAugment::restoreRng(const torch::Tensor& state, const std::string& kind) {
  if (kind != rngKind()) return false;
  std::lock_guard<std::mutex> lock(generator_.mutex());
  generator_.set_state(state);
  return true;
}

}  // namespace streetgan
