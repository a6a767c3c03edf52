#include "core/model/weight_init.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/utils.h>

namespace streetgan {

void initDcganWeights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& child : module.modules(/*include_self=*/true)) {
    if (auto* conv = child->as<torch::nn::Conv2d>()) {
      torch::nn::init::normal_(conv->weight, 0.0, 0.02);
    } else if (auto* deconv = child->as<torch::nn::ConvTranspose2d>()) {
      torch::nn::init::normal_(deconv->weight, 0.0, 0.02);
    } else if (auto* bn = child->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::normal_(bn->weight, 1.0, 0.02);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

std::int64_t countParameters(const torch::nn::Module& module) {
  std::int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

}  // namespace streetgan
