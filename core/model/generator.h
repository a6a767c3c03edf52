#pragma once
// The DCGAN generator of docs/model.md: G64 (img_size 64) or G128 (img_size 128). Maps noise of
// shape (B, nz, 1, 1) to images (B, nc, img_size, img_size) in [-1, 1]. Every ConvTranspose has
// kernel 4 and no bias.
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
  const GeneratorOptions& options() const { return options_; }

private:
  GeneratorOptions options_;
  torch::nn::Sequential net_;
};
TORCH_MODULE(Generator);

}  // namespace streetgan
