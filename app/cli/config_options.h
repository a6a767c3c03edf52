#pragma once
// The config options shared by `train`, `info`, `bench`, `data` and `cache`: --preset, --config,
// -t, -c and the single-key shortcuts (including the data filters), applied in that order on top
// of the defaults.
#include "app/cli/command_line.h"
#include "app/cli/option_specs.h"
#include "core/config/train_config.h"

#include <vector>

namespace streetgan::cli {

/// Builds the config the options describe; errors name the option, file, key and value.
Result<TrainConfig> configFromOptions(const CommandLine& line);

/// True when any option that changes the config was given (used to refuse them on --resume).
std::vector<std::string> givenConfigOptions(const CommandLine& line);

}  // namespace streetgan::cli
