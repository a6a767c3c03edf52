#include "core/model/generator.h"

#include "core/model/conv_layout.h"
#include "core/model/layer_plan.h"
#include "core/model/sync_batch_norm.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/torch.h>

#include <vector>

namespace streetgan {
namespace {

torch::nn::ConvTranspose2d upConv(const ConvLayer& layer) {
  return torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(layer.in, layer.out, kConvKernel)
                                        .stride(layer.stride)
                                        .padding(layer.padding)
                                        .bias(false));
}

}  // namespace

GeneratorImpl::GeneratorImpl(const GeneratorOptions& options) : options_(options) {
  const std::vector<ConvLayer> layers = generatorLayers(options);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    net_->push_back(upConv(layers[i]));
    if (layers[i].batch_norm) net_->push_back(torch::nn::BatchNorm2d(layers[i].out));
    if (i + 1 < layers.size()) net_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
  }
  net_->push_back(torch::nn::Tanh());
  register_module("main", net_);
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& z) { return forward(z, {}); }

torch::Tensor GeneratorImpl::forward(const torch::Tensor& z, const BlockVisitor& visit) {
  torch::Tensor x = z;
  std::size_t index = 0;
  int block = -1;
  for (auto& layer : *net_) {
    auto* conv = layer.ptr()->as<torch::nn::ConvTranspose2d>();
    if (conv) ++block;
    if (index++ == 0 && z.size(2) == 1 && z.size(3) == 1) {
      // The first layer maps a 1×1 input to 4×4: as a ConvTranspose it is exactly the matrix
      // product z·W, which runs ~10× faster as one.
      const auto& w = conv->weight;
      x = torch::mm(z.flatten(1), w.flatten(1)).view({z.size(0), w.size(1), w.size(2), w.size(3)});
      if (visit) visit(block, BlockStage::Convolved, x);
      continue;
    }
    if (conv) x = inConvLayout(x, x.size(2), x.size(2) * 2);
    if (batch_stats_sum_ && is_training())
      if (auto* norm = layer.ptr()->as<torch::nn::BatchNorm2d>()) {
        x = syncBatchNorm(x, *norm, batch_stats_sum_);
        continue;
      }
    x = layer.forward(x);
    if (visit && conv) visit(block, BlockStage::Convolved, x);
    if (visit && (layer.ptr()->as<torch::nn::ReLU>() || layer.ptr()->as<torch::nn::Tanh>())) visit(block, BlockStage::Activated, x);
  }
  return x;
}

int GeneratorImpl::blockCount() const { return options_.img_size == 64 ? 5 : 6; }

}  // namespace streetgan
