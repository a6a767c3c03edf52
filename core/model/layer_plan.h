#pragma once
// The convolutions of G and D (docs/model.md) as plain numbers: each one's channels, stride and
// padding, and whether a BatchNorm follows it. GeneratorImpl and DiscriminatorImpl build their
// networks from these plans, and parameterCount counts a network from its plan without building
// it: `streetgan info` counts five pairs of nets, whose random initialisation alone took seconds.
#include <cstdint>
#include <vector>

namespace streetgan {

struct GeneratorOptions;
struct DiscriminatorOptions;

/// Every convolution of G and D is 4×4 and has no bias.
constexpr int kConvKernel = 4;

struct ConvLayer {
  int in = 0, out = 0;  ///< channels
  int stride = 1, padding = 0;
  bool batch_norm = false;  ///< a BatchNorm of `out` channels follows
};

/// G's transposed convolutions, from the noise to the image. Throws std::invalid_argument for an
/// img_size other than 64 or 128.
std::vector<ConvLayer> generatorLayers(const GeneratorOptions& options);
/// D's convolutions, from the image to the logit. Throws as generatorLayers.
std::vector<ConvLayer> discriminatorLayers(const DiscriminatorOptions& options);
/// The parameters of a network of these layers: each convolution's weights and each BatchNorm's
/// weight and bias per channel (what torch::nn::Module::parameters() holds).
std::int64_t parameterCount(const std::vector<ConvLayer>& layers);

}  // namespace streetgan
