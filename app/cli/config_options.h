#pragma once
// The config options shared by `train`, `info`, `bench`, `data` and `cache`: --preset, --config,
// -t, -c and the single-key shortcuts (including the data filters), applied in that order on top
// of the defaults.
#include "app/cli/command_line.h"
#include "app/cli/option_specs.h"
#include "core/config/train_config.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace streetgan::cli {

/// Builds the config the options describe; errors name the option, file, key and value.
Result<TrainConfig> configFromOptions(const CommandLine& line);

/// The options given that set one config key each (--epochs, --workers, --cities, …) as a partial
/// config: with ConfigScope::Resume only those a resumed run may change. An integer or number out
/// of its key's bounds is refused here, naming the option; text values are checked when the
/// partial config is applied (applyConfigJson).
Result<nlohmann::json> keyOptionsConfig(const CommandLine& line, ConfigScope scope);

/// The keys `-t` may change on --resume (with a warning): "lr, lr_d, ..., augment.*".
std::string tunedOnResumeKeys();
/// The config options given that a resumed run may not change (refused on --resume): --preset,
/// --config, -c and the key options of other keys; -t's keys are checked when it is read.
std::vector<std::string> givenConfigOptions(const CommandLine& line);

/// The options a resumed run may take again: "--epochs, --device, … and --cuda-graphs".
std::string resumableOptions();

}  // namespace streetgan::cli
