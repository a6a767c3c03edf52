#include "config_options.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace streetgan::cli {

std::vector<OptionSpec> configOptionSpecs() {
  return {
      {"--preset", "NAME", "start from a preset: naive-64, safe-64 or safe-128"},
      {"--config", "FILE", "JSON config file (any config key; see docs/config.md)"},
      {"-t", "JSON", "training keys as JSON, as the original tool took them: nc nz ngf ndf lr "
                     "beta1 beta2 batch_size img_size weight_decay augment"},
      {"-c", "JSON", "checkpoint keys as JSON: name root log_frequency save_frequency keep_checkpoints"},
      {"--seed", "N", "random seed (weights, data order, augmentation, noise)"},
      {"--device", "DEV", "auto, cpu, cuda or cuda:N (default auto)"},
      {"--threads", "N", "CPU threads (0 = all cores)"},
  };
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
  return applyConfigJson(config, shortcuts, ConfigScope::All, "command line");
}

std::vector<std::string> givenConfigOptions(const CommandLine& line) {
  std::vector<std::string> given;
  for (const char* name : {"--preset", "--config", "-t", "-c", "--seed", "--precision"})
    if (line.has(name)) given.push_back(name);
  return given;
}

}  // namespace streetgan::cli
