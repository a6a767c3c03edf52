#include "core/train/multi_tensor_adamw.h"

#include "core/util/torch_compat.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace streetgan {
MultiTensorAdamW::MultiTensorAdamW(std::vector<torch::Tensor> params,
                                   torch::optim::AdamWOptions options)
    : torch::optim::AdamW(std::move(params), options) {
  if (options.amsgrad()) throw std::invalid_argument("MultiTensorAdamW: amsgrad is not supported");
}

torch::Tensor MultiTensorAdamW::step(LossClosure closure) {
  if (closure) throw std::invalid_argument("MultiTensorAdamW: a closure is not supported");
  update(nullptr);
  return {};
}

void MultiTensorAdamW::stepUnlessOverflow(const torch::Tensor& found_inf) { update(&found_inf); }

std::vector<torch::Tensor> MultiTensorAdamW::gradients() const {
  std::vector<torch::Tensor> grads;
  for (const auto& group : param_groups())
    for (const auto& p : group.params())
      if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

bool MultiTensorAdamW::usesFusedKernel() const {
  for (const auto& group : param_groups())
    for (const auto& p : group.params()) return torch_compat::hasFusedAdamW(p.device());
  return false;
}

void MultiTensorAdamW::update(const torch::Tensor* found_inf) {
  torch::NoGradGuard no_grad;
  const bool fused = usesFusedKernel();
  if (!fused && found_inf && found_inf->item<float>() != 0.0f) return;

  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double lr = options.lr(), weight_decay = options.weight_decay(), eps = options.eps();
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs;
    std::vector<torch_compat::OptimizerStateKey> keys;
    std::vector<torch::optim::AdamWParamState*> states;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      TORCH_CHECK(!p.grad().is_sparse(), "MultiTensorAdamW does not support sparse gradients");
      const auto key = torch_compat::optimizerStateKey(p);
      auto found = state().find(key);
      if (found == state().end()) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        found = state().emplace(key, std::move(fresh)).first;
      }
      auto& s = static_cast<torch::optim::AdamWParamState&>(*found->second);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(s.exp_avg());
      exp_avg_sqs.push_back(s.exp_avg_sq());
      keys.push_back(key);
      states.push_back(&s);
    }
    if (params.empty()) continue;

    if (fused) {
      if (device_step_keys_ != keys) {
        writeStepsToState();
        device_steps_.clear();
        for (auto* s : states)
          device_steps_.push_back(torch::full({}, static_cast<double>(s->step()),
                                              torch::TensorOptions().dtype(torch::kFloat32).device(params.front().device())));
        device_step_keys_ = keys;
      }
      at::_foreach_add_(device_steps_, 1);
      torch_compat::fusedAdamW(params, grads, exp_avgs, exp_avg_sqs, device_steps_,
                 {lr, beta1, beta2, weight_decay, eps},
                 found_inf ? std::optional<torch::Tensor>(*found_inf) : std::nullopt);
      if (found_inf)  // view(at::IntArrayRef{}): in 2.x, view({}) is view(ScalarType), a byte view
        at::_foreach_sub_(device_steps_, std::vector<torch::Tensor>(device_steps_.size(), found_inf->view(at::IntArrayRef{})));
      continue;
    }

    // torch::optim::AdamW's arithmetic, each line over the whole list.
    std::vector<at::Scalar> bias_sqrt2, step_sizes;
    for (auto* s : states) {
      s->step(s->step() + 1);
      const double bias1 = 1 - std::pow(beta1, static_cast<double>(s->step()));
      const double bias2 = 1 - std::pow(beta2, static_cast<double>(s->step()));
      bias_sqrt2.emplace_back(std::sqrt(bias2));
      step_sizes.emplace_back(-lr / bias1);
    }
    if (weight_decay != 0) at::_foreach_mul_(params, 1 - lr * weight_decay);
    at::_foreach_mul_(exp_avgs, beta1);
    at::_foreach_add_(exp_avgs, grads, 1 - beta1);
    at::_foreach_mul_(exp_avg_sqs, beta2);
    at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
    auto denoms = at::_foreach_sqrt(exp_avg_sqs);
    at::_foreach_div_(denoms, bias_sqrt2);
    at::_foreach_add_(denoms, eps);
    at::_foreach_addcdiv_(params, exp_avgs, denoms, step_sizes);
  }
}

void MultiTensorAdamW::writeStepsToState() const {
  if (device_steps_.empty()) return;
  const auto host = torch::stack(device_steps_).to(torch::kCPU, torch::kFloat64);
  const double* values = host.data_ptr<double>();
  auto& states = const_cast<MultiTensorAdamW*>(this)->state();
  for (std::size_t i = 0; i < device_step_keys_.size(); ++i) {
    auto found = states.find(device_step_keys_[i]);
    if (found != states.end())
      static_cast<torch::optim::AdamWParamState&>(*found->second).step(std::llround(values[i]));
  }
}

void MultiTensorAdamW::save(torch::serialize::OutputArchive& archive) const {
  writeStepsToState();
  torch::optim::AdamW::save(archive);
}

void MultiTensorAdamW::load(torch::serialize::InputArchive& archive) {
  torch::optim::AdamW::load(archive);
  device_steps_.clear();
  device_step_keys_.clear();
}

}  // namespace streetgan
