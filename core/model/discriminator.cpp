#include "core/model/discriminator.h"

#include "core/model/conv_layout.h"
#include "core/model/layer_plan.h"
#include "core/model/spectral_norm.h"
#include "core/model/sync_batch_norm.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <utility>
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
    conv_padding_.push_back(layers[i].padding);
    if (layers[i].batch_norm) net_->push_back(torch::nn::BatchNorm2d(layers[i].out));
    if (i + 1 < layers.size()) net_->push_back(leaky());
  }
  register_module("main", net_);
  // After every weight exists: the u and v draws come after the weights' own, as when
  // torch.nn.utils.spectral_norm wraps a built net.
  if (options.norm == DiscriminatorNorm::Spectral)
    for (auto& layer : *net_)
      if (auto* conv = layer.ptr()->as<torch::nn::Conv2d>()) attachSpectralNorm(*conv);
}

torch::Tensor DiscriminatorImpl::forward(const torch::Tensor& images) {
  const bool spectral = options_.norm == DiscriminatorNorm::Spectral;
  const bool iterate = spectral && is_training() && std::exchange(power_iteration_pending_, false);
  torch::Tensor x = images;
  std::size_t conv_index = 0;
  for (auto& layer : *net_) {
    if (auto* conv = layer.ptr()->as<torch::nn::Conv2d>()) {
      const auto in = x.size(2);
      const auto stride = (*conv->options.stride())[0];
      x = inConvLayout(x, in, stride == 2 ? in / 2 : 1);
      if (spectral) {
        const std::int64_t padding = conv_padding_[conv_index++];
        x = torch::conv2d(x, spectrallyNormalisedWeight(*conv, iterate), {}, {stride, stride}, {padding, padding});
        continue;
      }
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
