#pragma once
// FoldedGenerator: a generator in eval mode with each BatchNorm folded into the transposed
// convolution before it (the weight scaled by γ/σ per output channel, a bias β − γμ/σ), run in
// NCHW: the same function as G.eval() up to rounding, with no BatchNorm pass (forward or, under
// autograd, backward). At the small batches of a projection or an Explore page NCHW also beats
// the channels-last layout G uses for training batches (bench/README.md). Built from a
// generator's current weights and running statistics (a copy: later changes to G are not seen);
// a probe checks that it computes what G computes, and usable() is false when it does not or when
// G's layers are not DCGAN's blocks. Nothing here throws except LibTorch's own errors.
#include <torch/types.h>

#include <vector>

namespace streetgan {

class GeneratorImpl;

class FoldedGenerator {
public:
  /// Folds `g` (left in the mode it was in).
  explicit FoldedGenerator(GeneratorImpl& g);
  /// One that is not usable (for the batch-statistics mode, where nothing folds).
  static FoldedGenerator none() { return FoldedGenerator(); }
  bool usable() const { return !blocks_.empty(); }
  /// Images (B, C, H, W) in [-1, 1] for latents (B, nz) or (B, nz, 1, 1) on G's device.
  torch::Tensor forward(const torch::Tensor& z) const;

private:
  FoldedGenerator() = default;
  struct Block {
    torch::Tensor weight, bias;
    bool last = false;
  };
  std::vector<Block> blocks_;
};

}  // namespace streetgan
