#include "app/cli/config_options.h"

#include "app/cli/model_options.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>

namespace streetgan::cli {

namespace {

// The options that set one config key each: the one table of which option sets which key. Their
// bounds and allowed values are the key table's (core/config), checked by configOptionValue and
// applyConfigJson. A switch sets its key to true (false: SwitchOff); OnOff takes "on" or "off".
enum class OptionForm { Value, Switch, SwitchOff, OnOff };
struct KeyOption {
  const char* option;
  const char* key;
  OptionForm form = OptionForm::Value;
};
const KeyOption kKeyOptions[] = {
    {"--epochs", "epochs"},
    {"--device", "device"},
    {"--precision", "precision"},
    {"--threads", "threads"},
    {"--dataroot", "dataroot"},
    {"--workers", "data.workers"},
    {"--cache", "data.cache"},
    {"--cuda-graphs", "cuda_graphs", OptionForm::OnOff},
    {"--sync-batchnorm", "sync_batchnorm", OptionForm::Switch},
    {"--seed", "seed"},
    {"--cities", "data.cities"},
    {"--exclude-cities", "data.exclude_cities"},
    {"--holdout-cities", "data.holdout_cities"},
    {"--msls-split", "data.msls_split"},
    {"--subset", "data.subset"},
    {"--time-of-day", "data.time_of_day"},
    {"--drop-panoramas", "data.drop_panoramas", OptionForm::Switch},
    {"--full-decode", "data.reduced_decode", OptionForm::SwitchOff},
    {"--max-per-sequence", "data.max_per_sequence"},
    {"--holdout-seed", "data.holdout_seed"},
    {"--holdout-fraction", "data.holdout_fraction"},
    {"--prefetch", "data.prefetch"},
};

// `value` at `key` of `out`, a dotted key ("data.workers") as a nested object.
void put(nlohmann::json& out, const std::string& key, nlohmann::json value) {
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos)
    out[key] = std::move(value);
  else
    out[key.substr(0, dot)][key.substr(dot + 1)] = std::move(value);
}

// The value `option` gives its key.
Result<nlohmann::json> optionValue(const CommandLine& line, const KeyOption& option) {
  switch (option.form) {
    case OptionForm::Switch:
      return nlohmann::json(true);
    case OptionForm::SwitchOff:
      return nlohmann::json(false);
    case OptionForm::OnOff: {
      const std::string text = line.value(option.option);
      if (text == "on" || text == "off") return nlohmann::json(text == "on");
      return makeError("option '" + std::string(option.option) + "': '" + text +
                       "' is not allowed; allowed: on or off");
    }
    case OptionForm::Value:
      break;
  }
  return configOptionValue(option.key, option.option, line.value(option.option));
}

}  // namespace

Result<nlohmann::json> keyOptionsConfig(const CommandLine& line, ConfigScope scope) {
  nlohmann::json out = nlohmann::json::object();
  for (const KeyOption& option : kKeyOptions) {
    if (!line.has(option.option)) continue;
    if (scope == ConfigScope::Resume && !configKeyMayChangeOnResume(option.key)) continue;
    auto value = optionValue(line, option);
    if (!value) return makeError(value.error());
    put(out, option.key, std::move(*value));
  }
  return out;
}

Result<TrainConfig> configFromOptions(const CommandLine& line) {
  TrainConfig config;
  if (line.has("--preset")) {
    auto preset = presetConfig(line.value("--preset"));
    if (!preset) return makeError("option '--preset': " + preset.error());
    config = *preset;
  }
  if (line.has("--config")) {
    auto loaded = applyConfigFile(config, line.value("--config"));
    if (!loaded) return loaded;
    config = *loaded;
  }
  for (const auto& [flag, scope] :
       {std::pair<const char*, ConfigScope>{"-t", ConfigScope::Training},
        {"-c", ConfigScope::Checkpoint}}) {
    if (!line.has(flag)) continue;
    auto applied = applyConfigText(config, line.value(flag), scope, flag);
    if (!applied) return applied;
    config = *applied;
  }
  auto shortcuts = keyOptionsConfig(line, ConfigScope::All);
  if (!shortcuts) return makeError(shortcuts.error());
  return applyConfigJson(config, *shortcuts, ConfigScope::All, "command line");
}

std::vector<std::string> givenConfigOptions(const CommandLine& line) {
  std::vector<std::string> given;
  for (const char* name : {"--preset", "--config", "-c"})
    if (line.has(name)) given.push_back(name);
  for (const KeyOption& option : kKeyOptions)
    if (line.has(option.option) && !configKeyMayChangeOnResume(option.key)) given.push_back(option.option);
  return given;
}

std::string tunedOnResumeKeys() {
  std::string list;
  bool augment = false;
  for (const std::string& key : configKeyNames()) {
    if (!configKeyTunedOnResume(key)) continue;
    if (key.rfind("augment.", 0) == 0) {
      augment = true;
      continue;
    }
    list += (list.empty() ? "" : ", ") + key;
  }
  return list + (augment ? ", augment.*" : "");
}

std::string resumableOptions() {
  std::vector<std::string> names;
  for (const KeyOption& option : kKeyOptions)
    if (configKeyMayChangeOnResume(option.key)) names.push_back(option.option);
  names.push_back("-t with " + tunedOnResumeKeys());
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return list;
}

}  // namespace streetgan::cli
