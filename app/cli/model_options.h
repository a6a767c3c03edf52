#pragma once
// The model options of the commands that load a checkpoint's generator or run the model on a
// device: --checkpoint FILE, --device DEV and --threads N (sample, walk, serve, export, parzen and
// the bench commands). Their help lines and their parsing live here once, so every command words
// and checks them alike; ModelOptionsUse says what one command words differently and what it
// defaults to. The parsers return an Error that names the option; commands report it as a usage
// error (kExitUsage), before anything is loaded.
#include "app/cli/command_line.h"
#include "core/util/result.h"

#include <c10/core/Device.h>

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

/// The model options as given.
struct ModelOptions {
  std::string checkpoint;         ///< --checkpoint FILE; empty when not given
  c10::Device device{c10::kCPU};  ///< --device resolved (ModelOptionsUse::device_default when absent)
  int threads = 0;                ///< --threads; 0 = all cores, also for a command without it
};

/// --checkpoint FILE's line in the help.
OptionSpec checkpointOptionSpec(const ModelOptionsUse& use);
/// --device DEV, and --threads N where the command takes it, in the order `use` says.
std::vector<OptionSpec> deviceOptionSpecs(const ModelOptionsUse& use);

/// "missing --checkpoint FILE" unless --checkpoint was given.
Status checkpointGiven(const CommandLine& line);
/// --threads N: 0 (all cores; the default) to 1024.
Result<long long> threadsOption(const CommandLine& line);
/// `spec` (the --device value, or what the command made of it) as a device present here; the
/// Error starts "option '--device': ".
Result<c10::Device> resolveDeviceOption(const std::string& spec);
/// --device resolved, ModelOptionsUse::device_default when absent.
Result<c10::Device> deviceOption(const CommandLine& line, const ModelOptionsUse& use);
/// --threads (where the command takes it), then --device, and --checkpoint's path: for the
/// commands that check the two one after the other.
Result<ModelOptions> modelOptionsFrom(const CommandLine& line, const ModelOptionsUse& use);

}  // namespace streetgan::cli
