#pragma once
// The DCGAN generator of docs/model.md: G64 (img_size 64) or G128 (img_size 128). Maps noise of
// shape (B, nz, 1, 1) to images (B, nc, img_size, img_size) in [-1, 1]. Every ConvTranspose has
// kernel 4 and no bias.
#include "core/model/sync_batch_norm.h"

#include <functional>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

namespace streetgan {

struct GeneratorOptions {
  int nz = 100;       ///< latent size
  int ngf = 64;       ///< width of the last hidden layer
  int nc = 3;         ///< output channels
  int img_size = 64;  ///< 64 or 128
};

class GeneratorImpl : public torch::nn::Module {
public:
  explicit GeneratorImpl(const GeneratorOptions& options);
  torch::Tensor forward(const torch::Tensor& z);

  /// Where forward() shows a visitor a block's output: after its transposed convolution (before
  /// BatchNorm), and after its activation (ReLU; tanh for the last block, the image).
  enum class BlockStage { Convolved, Activated };
  using BlockVisitor = std::function<void(int block, BlockStage stage, torch::Tensor& x)>;
  /// forward() that calls `visit` at each block's stages, blocks numbered from 0 (the 4×4 one);
  /// the visitor may change the tensor in place (an ablation zeroes a channel).
  torch::Tensor forward(const torch::Tensor& z, const BlockVisitor& visit);
  /// Blocks of transposed convolution: 5 at 64 px, 6 at 128 px (the last makes the image).
  int blockCount() const;
  const GeneratorOptions& options() const { return options_; }
  /// With a sum set, the BatchNorm layers in training mode use the statistics of every
  /// process's batch (sync_batch_norm.h); an empty one (the default) uses this batch's.
  void setBatchStatsSum(BatchStatsSum sum) { batch_stats_sum_ = std::move(sum); }

private:
  GeneratorOptions options_;
  torch::nn::Sequential net_;
  BatchStatsSum batch_stats_sum_;
};
TORCH_MODULE(Generator);

}  // namespace streetgan
