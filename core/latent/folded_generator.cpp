#include "core/latent/folded_generator.h"

#include "core/latent/latent_math.h"
#include "core/model/generator.h"

#include <torch/torch.h>

#include <memory>

namespace streetgan {

FoldedGenerator::FoldedGenerator(GeneratorImpl& g) {
  torch::NoGradGuard no_grad;
  std::vector<std::shared_ptr<torch::nn::Module>> layers;
  for (const auto& child : g.children())
    for (const auto& layer : child->children()) layers.push_back(layer);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    auto* conv = layers[i]->as<torch::nn::ConvTranspose2d>();
    if (!conv) continue;
    Block block;
    torch::Tensor weight = conv->weight.detach();
    torch::Tensor bias = torch::zeros({weight.size(1)}, weight.options());
    auto* norm = i + 1 < layers.size() ? layers[i + 1]->as<torch::nn::BatchNorm2d>() : nullptr;
    if (norm) {
      const torch::Tensor scale = norm->weight / torch::sqrt(norm->running_var + norm->options.eps());
      weight = weight * scale.view({1, -1, 1, 1});
      bias = norm->bias - norm->running_mean * scale;
    } else if (i + 1 != layers.size() - 1 || !layers[i + 1]->as<torch::nn::Tanh>()) {
      blocks_.clear();
      return;
    }
    block.weight = weight.contiguous();
    block.bias = bias.contiguous();
    block.last = !norm;
    blocks_.push_back(block);
  }
  if (blocks_.empty() || !blocks_.back().last) {
    blocks_.clear();
    return;
  }
  // DCGAN's blocks after the first double the size (stride 2, padding 1); a probe checks that
  // the folded form computes what G computes, else it is not used.
  const bool was_training = g.is_training();
  g.eval();
  const torch::Tensor probe =
      torch::stack({latentFromSeed(0, g.options().nz), latentFromSeed(1, g.options().nz)}).view({2, -1}).to(blocks_.front().weight.device());
  const torch::Tensor expected = g.forward(probe.view({2, -1, 1, 1}));
  g.train(was_training);
  if (!torch::allclose(forward(probe), expected, 1e-4, 1e-5)) blocks_.clear();
}

torch::Tensor FoldedGenerator::forward(const torch::Tensor& latents) const {
  const torch::Tensor z = latents.flatten(1);
  // The first block maps 1×1 to 4×4: a matrix product, as G does it.
  const Block& first = blocks_.front();
  torch::Tensor x = torch::addmm(first.bias.repeat_interleave(first.weight.size(2) * first.weight.size(3)), z,
                                 first.weight.flatten(1))
                        .view({z.size(0), first.weight.size(1), first.weight.size(2), first.weight.size(3)})
                        .relu();
  for (std::size_t i = 1; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    if (x.device().is_cpu() && x.size(2) == 4) {
      // 4×4 to 8×8 (the widest block): one matrix product over the whole batch, then col2im, beats
      // LibTorch's transposed convolution, which runs a product per image (bench/README.md); the
      // larger blocks are faster as they are.
      const std::int64_t n = x.size(0), in = x.size(1), out = b.weight.size(1), h = x.size(2), w = x.size(3);
      const torch::Tensor columns = torch::mm(x.permute({0, 2, 3, 1}).reshape({n * h * w, in}), b.weight.reshape({in, out * 16}));
      x = torch::col2im(columns.view({n, h * w, out * 16}).transpose(1, 2), {2 * h, 2 * w}, {4, 4}, {1, 1}, {1, 1}, {2, 2}) +
          b.bias.view({1, -1, 1, 1});
    } else {
      x = torch::conv_transpose2d(x, b.weight, b.bias, 2, 1);
    }
    x = b.last ? x.tanh() : x.relu();
  }
  return x;
}

}  // namespace streetgan
