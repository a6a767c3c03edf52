#pragma once
// The DCGAN discriminator of docs/model.md: D64 (img_size 64) or D128 (img_size 128, one more
// block). Maps images (B, nc, img_size, img_size) to one logit per image, shape (B). No sigmoid:
// the loss is BCE with logits. Every Conv has kernel 4 and no bias.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

namespace streetgan {

struct DiscriminatorOptions {
  int ndf = 64;       ///< width of the first layer
  int nc = 3;         ///< input channels
  int img_size = 64;  ///< 64 or 128
};

class DiscriminatorImpl : public torch::nn::Module {
public:
  explicit DiscriminatorImpl(const DiscriminatorOptions& options);
  torch::Tensor forward(const torch::Tensor& images);
  const DiscriminatorOptions& options() const { return options_; }

private:
  DiscriminatorOptions options_;
  torch::nn::Sequential net_;
};
TORCH_MODULE(Discriminator);

}  // namespace streetgan
