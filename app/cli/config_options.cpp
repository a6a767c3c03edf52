#include "app/cli/config_options.h"

#include "app/cli/model_options.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <limits>
#include <tuple>

namespace streetgan::cli {

std::vector<OptionSpec> configOptionSpecs() {
  std::vector<OptionSpec> specs{
      {"--preset", "NAME", "start from a preset: naive-64, safe-64, safe-128 or demo"},
      {"--config", "FILE", "JSON config file (any config key; see docs/config.md)"},
      {"-t", "JSON", "training keys as JSON, as the original tool took them: nc nz ngf ndf lr "
                     "beta1 beta2 batch_size img_size weight_decay augment"},
      {"-c", "JSON", "checkpoint keys as JSON: name root log_frequency save_frequency keep_checkpoints"},
      {"--seed", "N", "random seed (weights, data order, augmentation, noise)"},
  };
  // --device and --threads worded as the commands that run a model word them; here they set the
  // config keys "device" and "threads".
  ModelOptionsUse use;
  use.device_default = "auto";
  use.threads_help = "CPU threads (0 = all cores)";
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  return specs;
}

std::vector<OptionSpec> dataFilterOptionSpecs() {
  return {
      {"--cities", "A,B", "use only these cities (MSLS) or top-level folders"},
      {"--exclude-cities", "A,B", "leave out these cities"},
      {"--msls-split", "S", "MSLS top folder: all, train_val or test (default all)"},
      {"--subset", "S", "MSLS images: all, database or query (default all)"},
      {"--drop-panoramas", "", "leave out panoramas (needs raw.csv)"},
      {"--time-of-day", "T", "all, day or night (needs postprocessed.csv; default all)"},
      {"--max-per-sequence", "N", "keep at most N evenly spaced frames per sequence (needs seq_info.csv)"},
      {"--holdout-cities", "A,B", "hold these cities out of training (for evaluation)"},
      {"--holdout-fraction", "F", "hold out this seeded fraction of the sequences (0 to 1)"},
      {"--holdout-seed", "N", "seed of --holdout-fraction (default 0)"},
  };
}

std::vector<OptionSpec> dataLoaderOptionSpecs() {
  return {
      {"--workers", "N", "data loading threads (0 = one per core; default 0)"},
      {"--prefetch", "N", "ready batches kept ahead of training (default 2)"},
      {"--cache", "FILE", "read images from a cache made by 'streetgan cache build'"},
      {"--full-decode", "", "decode JPEGs at full size (no DCT reduction)"},
  };
}

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
