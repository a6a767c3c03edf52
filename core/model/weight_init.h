#pragma once
// DCGAN initialisation (docs/model.md): every Conv/ConvTranspose weight ~ N(0, 0.02), every
// BatchNorm weight ~ N(1, 0.02) and bias 0. Draws from LibTorch's default generator, so seed it
// (torch::manual_seed) first for a reproducible start.
#include <torch/nn/module.h>

#include <cstdint>

namespace streetgan {

void initDcganWeights(torch::nn::Module& module);

/// Number of trainable parameter values (buffers such as BatchNorm running stats not counted).
std::int64_t countParameters(const torch::nn::Module& module);

}  // namespace streetgan
