#include "core/model/discriminator.h"

#include "core/model/conv_layout.h"
#include "core/model/sync_batch_norm.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <stdexcept>

namespace streetgan {
namespace {

torch::nn::Conv2d downConv(int in, int out, int stride, int padding) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, 4).stride(stride).padding(padding).bias(false));
}

torch::nn::LeakyReLU leaky() {
  return torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2).inplace(true));
}

}  // namespace

DiscriminatorImpl::DiscriminatorImpl(const DiscriminatorOptions& options) : options_(options) {
  if (options.img_size != 64 && options.img_size != 128)
    throw std::invalid_argument("Discriminator: img_size must be 64 or 128");
  const int last = options.img_size == 64 ? 8 : 16;
  net_->push_back(downConv(options.nc, options.ndf, 2, 1));
  net_->push_back(leaky());
  for (int mult = 1; mult < last; mult *= 2) {
    net_->push_back(downConv(mult * options.ndf, 2 * mult * options.ndf, 2, 1));
    net_->push_back(torch::nn::BatchNorm2d(2 * mult * options.ndf));
    net_->push_back(leaky());
  }
  net_->push_back(downConv(last * options.ndf, 1, 1, 0));
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
