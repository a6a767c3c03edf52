#include "app/cli/config_options.h"

#include "app/cli/model_options.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <limits>
#include <tuple>

namespace streetgan::cli {

namespace {

Status addDataShortcuts(const CommandLine& line, nlohmann::json& data) {
  for (const auto& [flag, key] : {std::pair<const char*, const char*>{"--cities", "cities"},
                                  {"--exclude-cities", "exclude_cities"},
                                  {"--holdout-cities", "holdout_cities"},
                                  {"--msls-split", "msls_split"},
                                  {"--subset", "subset"},
                                  {"--time-of-day", "time_of_day"},
                                  {"--cache", "cache"}})
    if (line.has(flag)) data[key] = line.value(flag);
  if (line.has("--drop-panoramas")) data["drop_panoramas"] = true;
  if (line.has("--full-decode")) data["reduced_decode"] = false;
  for (const auto& [flag, key, hi] :
       {std::tuple<const char*, const char*, long long>{"--max-per-sequence", "max_per_sequence", 1000000},
        {"--holdout-seed", "holdout_seed", std::numeric_limits<long long>::max()},
        {"--workers", "workers", 1024},
        {"--prefetch", "prefetch", 1024}}) {
    if (!line.has(flag)) continue;
    auto value = line.integer(flag, 0, 0, hi);
    if (!value) return makeError(value.error());
    data[key] = *value;
  }
  if (line.has("--holdout-fraction")) {
    const std::string text = line.value("--holdout-fraction");
    char* end = nullptr;
    const double fraction = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
      return makeError("option '--holdout-fraction': \"" + text + "\" is not a number");
    data["holdout_fraction"] = fraction;
  }
  return {};
}

}  // namespace

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
  nlohmann::json shortcuts = nlohmann::json::object();
  if (line.has("--seed")) {
    auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
    if (!seed) return makeError(seed.error());
    shortcuts["seed"] = *seed;
  }
  if (line.has("--epochs")) {
    auto epochs = line.integer("--epochs", 0, 1, 1000000);
    if (!epochs) return makeError(epochs.error());
    shortcuts["epochs"] = *epochs;
  }
  if (line.has("--threads")) {
    auto threads = line.integer("--threads", 0, 0, 1024);
    if (!threads) return makeError(threads.error());
    shortcuts["threads"] = *threads;
  }
  if (line.has("--device")) shortcuts["device"] = line.value("--device");
  if (line.has("--dataroot")) shortcuts["dataroot"] = line.value("--dataroot");
  if (line.has("--precision")) shortcuts["precision"] = line.value("--precision");
  nlohmann::json data = nlohmann::json::object();
  if (Status added = addDataShortcuts(line, data); !added) return makeError(added.error());
  if (!data.empty()) shortcuts["data"] = data;
  return applyConfigJson(config, shortcuts, ConfigScope::All, "command line");
}

std::vector<std::string> givenConfigOptions(const CommandLine& line) {
  std::vector<std::string> given;
  for (const char* name : {"--preset", "--config", "-t", "-c", "--seed"})
    if (line.has(name)) given.push_back(name);
  for (const auto& spec : dataFilterOptionSpecs())
    if (line.has(spec.name)) given.push_back(spec.name);
  for (const char* name : {"--prefetch", "--full-decode"})
    if (line.has(name)) given.push_back(name);
  return given;
}

}  // namespace streetgan::cli
