#include "core/model/layer_plan.h"

#include "core/model/discriminator.h"
#include "core/model/generator.h"

#include <stdexcept>

namespace streetgan {

std::vector<ConvLayer> generatorLayers(const GeneratorOptions& options) {
  if (options.img_size != 64 && options.img_size != 128)
    throw std::invalid_argument("Generator: img_size must be 64 or 128");
  int mult = options.img_size == 64 ? 8 : 16;
  std::vector<ConvLayer> layers{{options.nz, mult * options.ngf, 1, 0, true}};
  for (; mult > 1; mult /= 2) layers.push_back({mult * options.ngf, mult / 2 * options.ngf, 2, 1, true});
  layers.push_back({options.ngf, options.nc, 2, 1, false});
  return layers;
}

std::vector<ConvLayer> discriminatorLayers(const DiscriminatorOptions& options) {
  if (options.img_size != 64 && options.img_size != 128)
    throw std::invalid_argument("Discriminator: img_size must be 64 or 128");
  const int last = options.img_size == 64 ? 8 : 16;
  std::vector<ConvLayer> layers{{options.nc, options.ndf, 2, 1, false}};
  const bool batch_norm = options.norm == DiscriminatorNorm::BatchNorm;
  for (int mult = 1; mult < last; mult *= 2)
    layers.push_back({mult * options.ndf, 2 * mult * options.ndf, 2, 1, batch_norm});
  layers.push_back({last * options.ndf, 1, 1, 0, false});
  return layers;
}

std::int64_t parameterCount(const std::vector<ConvLayer>& layers) {
  std::int64_t total = 0;
  for (const ConvLayer& layer : layers) {
    total += std::int64_t{layer.in} * layer.out * kConvKernel * kConvKernel;
    if (layer.batch_norm) total += 2 * std::int64_t{layer.out};
  }
  return total;
}

}  // namespace streetgan
