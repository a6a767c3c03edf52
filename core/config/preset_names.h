#pragma once
// The names of the config presets (presetConfig in core/config/train_config.h says what each
// holds), apart from TrainConfig so that the `streetgan` front end lists them in its help
// without the engine's libraries.
#include <string>
#include <vector>

namespace streetgan {

/// naive-64, safe-64, safe-128, demo, modern-64 and modern-128, in that order.
std::vector<std::string> presetNames();
/// The preset names as one line: "naive-64, safe-64, …, modern-128", the last one after `last_separator`.
std::string presetNameList(const std::string& last_separator = ", ");

}  // namespace streetgan
