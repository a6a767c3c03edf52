#pragma once
// MultiTensorAdamW: torch::optim::AdamW (decoupled weight decay, no amsgrad) that updates all its
// parameters at once: ATen's fused AdamW kernel where the LibTorch has one for the device (CUDA
// from 2.0, the CPU from 2.4), else the multi-tensor `_foreach_` ops, one kernel per operation
// over the whole list instead of one per parameter. The arithmetic is torch::optim::AdamW's, and
// so is the state (exp_avg, exp_avg_sq, step per parameter) and its serialization: checkpoints
// written by either load into the other.
//
// stepUnlessOverflow() takes the loss scaler's found-inf flag (a device tensor): the fused kernel
// skips the update on the device; the `_foreach_` path has to read the flag on the host first
// (its one host round trip, only when a flag is passed).
#include "core/util/torch_compat.h"

#include <torch/optim/adamw.h>

#include <vector>

namespace streetgan {

class MultiTensorAdamW : public torch::optim::AdamW {
public:
  MultiTensorAdamW(std::vector<torch::Tensor> params, torch::optim::AdamWOptions options);

  /// Updates every parameter that has a gradient (the closure is not supported).
  torch::Tensor step(LossClosure closure = nullptr) override;
  /// As step(), unless `found_inf` (one-element float tensor) is non-zero: then nothing changes.
  void stepUnlessOverflow(const torch::Tensor& found_inf);
  /// The gradients of the parameters that have one, in parameter order.
  std::vector<torch::Tensor> gradients() const;
  /// Whether updates run as ATen's fused kernel on this optimizer's device.
  bool usesFusedKernel() const;

  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

private:
  void update(const torch::Tensor* found_inf);
  void writeStepsToState() const;

  // The fused kernel counts steps in float tensors on the device; the host counts in the
  // AdamW state are brought up to date from them before saving.
  mutable std::vector<torch::Tensor> device_steps_;
  mutable std::vector<torch_compat::OptimizerStateKey> device_step_keys_;
};

}  // namespace streetgan
