#include "app/cli/option_specs.h"

#include "core/config/preset_names.h"

namespace streetgan::cli {

OptionSpec checkpointOptionSpec(const ModelOptionsUse& use) {
  return {"--checkpoint", "FILE", use.checkpoint_help + "; or a run folder (its newest checkpoint), RUN@STEP (its "
                                  "newest at or before STEP) or RUN@latest"};
}

OptionSpec generatorOptionSpec() {
  return {"--generator", "G",
          "ema (G's moving average, the default when the checkpoint holds one) or raw (G itself)"};
}

std::vector<OptionSpec> deviceOptionSpecs(const ModelOptionsUse& use) {
  const OptionSpec device{"--device", "DEV",
                          use.device_help.empty()
                              ? "auto, cpu, cuda, cuda:N or hpu (default " + use.device_default + ")"
                              : use.device_help};
  if (!use.threads) return {device};
  const OptionSpec threads{"--threads", "N", use.threads_help};
  if (use.threads_first) return {threads, device};
  return {device, threads};
}

std::vector<OptionSpec> configOptionSpecs() {
  std::vector<OptionSpec> specs{
      {"--preset", "NAME", "start from a preset: " + presetNameList(" or ")},
      {"--config", "FILE", "JSON config file (any config key; see docs/config.md)"},
      {"-t", "JSON",
       "training keys as JSON, as the original tool took them (nc nz ngf ndf lr beta1 beta2 "
       "batch_size img_size weight_decay), and the recipe and augment keys (docs/config.md)"},
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

}  // namespace streetgan::cli
