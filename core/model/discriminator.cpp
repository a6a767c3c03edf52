#include "core/model/discriminator.h"

#include "core/model/conv_layout.h"
#include "core/model/layer_plan.h"
#include "core/model/sync_batch_norm.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <vector>

namespace streetgan {
namespace {

torch::nn::Conv2d downConv(const ConvLayer& layer) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(layer.in, layer.out, kConvKernel).stride(layer.stride).padding(layer.padding).bias(false));
}

torch::nn::LeakyReLU leaky() {
  return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2).inplace(true));
}

}  // namespace

DiscriminatorImpl::DiscriminatorImpl(const DiscriminatorOptions& options) : options_(options) {
  const std::vector<ConvLayer> layers = discriminatorLayers(options);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    net_->push_back(downConv(layers[i]));
    if (layers[i].batch_norm) net_->push_back(torch::nn::BatchNorm2d(layers[i].out));
    if (i + 1 < layers.size()) net_->push_back(leaky());
  }
  register_module("main", net_);
}

torch::Tensor DiscriminatorImpl::forward(const torch::Tensor& images) {
  torch::Tensor x = images;
  for (auto& layer : *net_) {
    if (auto* conv = layer.ptr()->as<torch::nn::Conv2d>()) {
      const auto in = x.size(2);
      const auto stride = (*conv->options.stride())[0];
      x = inConvLayout(x, in, stride == 2 ? in / 2 : 1);
    }
    if (batch_stats_sum_ && is_training())
      if (auto* norm = layer.ptr()->as<torch::nn::BatchNorm2d>()) {
        x = syncBatchNorm(x, *norm, batch_stats_sum_);
        continue;
      }
    x = layer.forward(x);
  }
  return x.reshape({-1});
}

}  // namespace streetgan
