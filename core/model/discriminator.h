#pragma once
// The DCGAN discriminator of docs/model.md: D64 (img_size 64) or D128 (img_size 128, one more
// block). Maps images (B, nc, img_size, img_size) to one logit per image, shape (B). No sigmoid:
// the loss is BCE with logits. Every Conv has kernel 4 and no bias. Its normalisation (config key
// d_norm): BatchNorm after each inner Conv (the original), none, or spectral normalisation of every
// Conv's weight (spectral_norm.h), whose power iteration runs once a training step, in the first
// forward pass after startStep().
#include "core/model/sync_batch_norm.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

namespace streetgan {

enum class DiscriminatorNorm { BatchNorm, None, Spectral };

struct DiscriminatorOptions {
  int ndf = 64;       ///< width of the first layer
  int nc = 3;         ///< input channels
  int img_size = 64;  ///< 64 or 128
  DiscriminatorNorm norm = DiscriminatorNorm::BatchNorm;
};

class DiscriminatorImpl : public torch::nn::Module {
public:
  explicit DiscriminatorImpl(const DiscriminatorOptions& options);
  torch::Tensor forward(const torch::Tensor& images);
  const DiscriminatorOptions& options() const { return options_; }
  /// With a sum set, the BatchNorm layers in training mode use the statistics of every
  /// process's batch (sync_batch_norm.h); an empty one (the default) uses this batch's.
  void setBatchStatsSum(BatchStatsSum sum) { batch_stats_sum_ = std::move(sum); }
  /// A training step begins: with spectral normalisation, the next forward pass in training mode
  /// runs the power iteration (once a step, however often D runs in it).
  void startStep() { power_iteration_pending_ = true; }

private:
  DiscriminatorOptions options_;
  bool power_iteration_pending_ = false;
  std::vector<std::int64_t> conv_padding_;  ///< each Conv's padding, in order (the layer plan's)
  torch::nn::Sequential net_;
  BatchStatsSum batch_stats_sum_;
};
TORCH_MODULE(Discriminator);

}  // namespace streetgan
