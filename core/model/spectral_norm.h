#pragma once
// Spectral normalisation of a convolution's weight (Miyato et al. 2018, "Spectral Normalization for
// Generative Adversarial Networks"), as torch.nn.utils.spectral_norm computes it: the weight W,
// flattened to a matrix of one row per output channel, divided by σ, its largest singular value,
// estimated by power iteration on vectors u (one entry per output channel) and v (one per input
// weight) kept between steps. The conv keeps its parameter `weight` (PyTorch renames it
// `weight_orig`) and gains the buffers `weight_u` and `weight_v`, which checkpoints carry.
#include <torch/nn/modules/conv.h>

namespace streetgan {

/// Registers `weight_u` and `weight_v` on `conv`: unit vectors drawn from the global generator
/// (N(0, 1), normalised), as torch.nn.utils.spectral_norm starts them.
void attachSpectralNorm(torch::nn::Conv2dImpl& conv);

/// W / σ for `conv`. `iterate`: first one power iteration (v ← normalise(Wᵀu), u ← normalise(Wv),
/// no gradient), written back to the buffers; σ = uᵀWv with u and v held constant, so that the
/// gradient flows through W alone, as in the paper.
torch::Tensor spectrallyNormalisedWeight(torch::nn::Conv2dImpl& conv, bool iterate);

}  // namespace streetgan
