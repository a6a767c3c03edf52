#pragma once
// The smallest DCGAN the engine's suites train in a moment: nz 16, 8 filters a layer, batches
// of 8, from `seed`. One definition, so suites that compare steps train the same model.
#include "core/config/train_config.h"

#include <cstdint>

namespace streetgan::test {

inline TrainConfig tinyTrainConfig(std::int64_t seed = 5) {
  TrainConfig config;
  config.nz = 16;
  config.ngf = 8;
  config.ndf = 8;
  config.batch_size = 8;
  config.seed = seed;
  return config;
}

}  // namespace streetgan::test
