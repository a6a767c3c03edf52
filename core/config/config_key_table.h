#pragma once
// The config key table: every key of TrainConfig (docs/config.md) with its group, how a JSON value
// is read into the config (the one home of each key's bounds and allowed values, and of the error
// that names them) and how it is written back, and the keys a resumed run may change. Internal to
// core/config: train_config.h is the public face.
#include "core/config/train_config.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace streetgan {

enum class KeyGroup { Training, Recipe, Checkpoint, Run, Augment, Data, Parzen, Metrics };

// How a key's value is written: what configOptionValue reads a command line's text as.
enum class KeyKind { Integer, Number, Other };

// A config key: how to read it into a TrainConfig (returning an error text, empty when valid)
// and how to write it back.
struct ConfigKey {
  std::string name;
  KeyGroup group;
  std::function<std::string(TrainConfig&, const nlohmann::json&)> set;
  std::function<nlohmann::json(const TrainConfig&)> get;
  KeyKind kind = KeyKind::Other;
  std::string allowed;  ///< its allowed values in words, as its errors say them
};

/// Every key, group after group: the order the studio's form and configToJson list them in.
const std::vector<ConfigKey>& configKeyTable();
/// The key named `name` (dotted: "data.workers"), or null.
const ConfigKey* findConfigKey(const std::string& name);
/// The keys a resumed run may change: where and how long it trains, not what it learns.
const std::set<std::string>& resumableConfigKeys();
// The resumable keys that change what the run learns from then on (learning rates, penalties,
// augmentation): a resume that changes one says so in a warning.
const std::set<std::string>& resumeTunedConfigKeys();
/// A value as error messages show it, cut to 60 characters.
std::string shownConfigValue(const nlohmann::json& value);

}  // namespace streetgan
