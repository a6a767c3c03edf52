#include "core/train/network_options.h"

namespace streetgan {

GeneratorOptions generatorOptionsFor(const TrainConfig& config) {
  return GeneratorOptions{config.nz, config.ngf, config.nc, config.img_size};
}

DiscriminatorOptions discriminatorOptionsFor(const TrainConfig& config) {
  DiscriminatorOptions options;
  options.ndf = config.ndf;
  options.nc = config.nc;
  options.img_size = config.img_size;
  options.norm = config.d_norm == "spectral" ? DiscriminatorNorm::Spectral
                 : config.d_norm == "none"   ? DiscriminatorNorm::None
                                             : DiscriminatorNorm::BatchNorm;
  return options;
}

}  // namespace streetgan
