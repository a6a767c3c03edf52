#pragma once
// The networks a config trains: GeneratorOptions and DiscriminatorOptions from a TrainConfig (its
// nz, ngf, ndf, nc, img_size and d_norm), the one place that reads a config into a net's shape.
#include "core/config/train_config.h"
#include "core/model/discriminator.h"
#include "core/model/generator.h"

namespace streetgan {

GeneratorOptions generatorOptionsFor(const TrainConfig& config);
/// d_norm "batchnorm", "none" or "spectral" (the key table refuses any other).
DiscriminatorOptions discriminatorOptionsFor(const TrainConfig& config);

}  // namespace streetgan
