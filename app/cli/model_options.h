#pragma once
// The model options of the commands that load a checkpoint's generator or run the model on a
// device: --checkpoint FILE, --device DEV and --threads N (sample, walk, serve, export, parzen and
// the bench commands). Their parsing lives here once and their help lines in option_specs.h, so
// every command words and checks them alike; ModelOptionsUse says what one command words
// differently and what it defaults to. The parsers return an Error that names the option;
// commands report it as a usage error (kExitUsage), before anything is loaded.
#include "app/cli/command_line.h"
#include "app/cli/option_specs.h"
#include "core/train/checkpoint.h"
#include "core/util/result.h"

#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace streetgan::cli {

/// The model options as given.
struct ModelOptions {
  std::string checkpoint;         ///< --checkpoint FILE; empty when not given
  c10::Device device{c10::kCPU};  ///< --device resolved (ModelOptionsUse::device_default when absent)
  int threads = 0;                ///< --threads; 0 = all cores, also for a command without it
  GeneratorChoice generator = GeneratorChoice::Default;  ///< --generator; Default without it
};

/// "missing --checkpoint FILE" unless --checkpoint was given.
Status checkpointGiven(const CommandLine& line);
/// --generator ema|raw; GeneratorChoice::Default when absent. The Error starts "option '--generator': ".
Result<GeneratorChoice> generatorOption(const CommandLine& line);
/// The file --out names, checked before any work: given, not a link or anything but a regular
/// file, not one of a run's own files (run_directory.h), and none of `read` (the files the command
/// reads: its checkpoint, its latents).
Status outputFileOption(const CommandLine& line, const std::vector<std::string>& read);
/// --threads N: 0 (all cores; the default) to 1024.
Result<long long> threadsOption(const CommandLine& line);
/// `spec` (the --device value, or what the command made of it) as a device present here; the
/// Error starts "option '--device': ".
Result<c10::Device> resolveDeviceOption(const std::string& spec);
/// --device resolved, ModelOptionsUse::device_default when absent.
Result<c10::Device> deviceOption(const CommandLine& line, const ModelOptionsUse& use);
/// --threads (where the command takes it), then --device, --generator and --checkpoint's path:
/// for the commands that check them one after the other.
Result<ModelOptions> modelOptionsFrom(const CommandLine& line, const ModelOptionsUse& use);

}  // namespace streetgan::cli
