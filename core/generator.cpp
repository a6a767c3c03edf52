#include "generator.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <stdexcept>

namespace streetgan {
namespace {

torch::nn::ConvTranspose2d upConv(int in, int out, int stride, int padding) {
  return torch::nn::ConvTranspose2d(
      torch::nn::ConvTranspose2dOptions(in, out, 4).stride(stride).padding(padding).bias(false));
}

}  // namespace

GeneratorImpl::GeneratorImpl(const GeneratorOptions& options) : options_(options) {
  if (options.img_size != 64 && options.img_size != 128)
    throw std::invalid_argument("Generator: img_size must be 64 or 128");
  int mult = options.img_size == 64 ? 8 : 16;
  net_->push_back(upConv(options.nz, mult * options.ngf, 1, 0));
  net_->push_back(torch::nn::BatchNorm2d(mult * options.ngf));
  net_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  for (; mult > 1; mult /= 2) {
    net_->push_back(upConv(mult * options.ngf, mult / 2 * options.ngf, 2, 1));
    net_->push_back(torch::nn::BatchNorm2d(mult / 2 * options.ngf));
    net_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  }
  net_->push_back(upConv(options.ngf, options.nc, 2, 1));
  net_->push_back(torch::nn::Tanh());
  register_module("main", net_);
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& z) { return net_->forward(z); }

}  // namespace streetgan
