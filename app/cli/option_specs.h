#pragma once
// The help lines of the options several commands share: the model options (--checkpoint,
// --device, --threads), the config options (--preset ... --seed) and the data options. Built
// without LibTorch: streetgan answers --help and a bad option from them itself
// (app/cli/command_lines.h), and the engine's commands parse with the same lines.
#include "app/cli/command_line.h"

#include <string>
#include <vector>

namespace streetgan::cli {

/// How one command words and defaults the model options. The defaults are what most say.
struct ModelOptionsUse {
  /// --checkpoint FILE's help: what the command does with the checkpoint.
  std::string checkpoint_help = "checkpoint (.pt) of a run";
  /// --device's value when the option is absent: "cpu" where the images are for a person to look
  /// at (sample, walk), "auto" where the fastest device is wanted (parzen, bench train).
  std::string device_default = "cpu";
  /// --device's help; empty: "auto, cpu, cuda, cuda:N or hpu (default <device_default>)". The
  /// benchmarks that take fewer devices, or choose one per rank, say so here.
  std::string device_help;
  /// Whether the command takes --threads N. Without it the command uses every core (0).
  bool threads = true;
  /// --threads' help: parzen words it as train's config option does; bench explore leaves
  /// LibTorch's own count when it is absent.
  std::string threads_help = "CPU threads (0 = all cores; default 0)";
  /// The help lists --threads before --device, as the bench commands always have.
  bool threads_first = false;
};

/// --checkpoint FILE's line in the help.
OptionSpec checkpointOptionSpec(const ModelOptionsUse& use);
/// --generator ema|raw's line: which of a checkpoint's generators renders.
OptionSpec generatorOptionSpec();
/// --device DEV, and --threads N where the command takes it, in the order `use` says.
std::vector<OptionSpec> deviceOptionSpecs(const ModelOptionsUse& use);

/// --preset, --config, -t, -c, --seed, --device and --threads: the config keys' options.
std::vector<OptionSpec> configOptionSpecs();
/// The data options (filters, held-out split, loader): --cities ... --cache; they set "data" keys.
std::vector<OptionSpec> dataFilterOptionSpecs();
std::vector<OptionSpec> dataLoaderOptionSpecs();

}  // namespace streetgan::cli
