#include "app/cli/model_options.h"

#include "core/runs/run_directory.h"
#include "core/train/compute_device.h"
#include "core/util/atomic_file.h"

#include <filesystem>

namespace streetgan::cli {

Status checkpointGiven(const CommandLine& line) {
  if (!line.has("--checkpoint")) return makeError("missing --checkpoint FILE");
  if (line.value("--checkpoint").empty()) return makeError("option '--checkpoint' needs a value (--checkpoint FILE), not an empty one");
  return {};
}

Result<GeneratorChoice> generatorOption(const CommandLine& line) {
  if (!line.has("--generator")) return GeneratorChoice::Default;
  auto choice = generatorChoiceNamed(line.value("--generator"));
  if (!choice) return makeError("option '--generator': " + choice.error());
  return choice;
}

Status outputFileOption(const CommandLine& line, const std::vector<std::string>& read) {
  const std::string out = line.value("--out");
  if (out.empty()) return makeError("option '--out' needs a file");
  if (Status writable = checkReplaceableFile(out); !writable) return writable;
  if (const auto run = RunDirectory::owning(out))
    return makeError(out + ": one of the files of the run " + run->name() +
                     " (its config, events and folders are training's); choose a path outside them");
  for (const std::string& input : read) {
    std::error_code error;
    if (std::filesystem::equivalent(out, input, error))
      return makeError(out + ": this is a file the command reads; choose another --out");
  }
  return {};
}

Result<long long> threadsOption(const CommandLine& line) { return line.integer("--threads", 0, 0, 1024); }

Result<c10::Device> resolveDeviceOption(const std::string& spec) {
  auto device = resolveDevice(spec);
  if (!device) return makeError("option '--device': " + device.error());
  return device;
}

Result<c10::Device> deviceOption(const CommandLine& line, const ModelOptionsUse& use) {
  return resolveDeviceOption(line.value("--device", use.device_default));
}

Result<ModelOptions> modelOptionsFrom(const CommandLine& line, const ModelOptionsUse& use) {
  ModelOptions options;
  options.checkpoint = line.value("--checkpoint");
  if (use.threads) {
    auto threads = threadsOption(line);
    if (!threads) return makeError(threads.error());
    options.threads = static_cast<int>(*threads);
  }
  auto device = deviceOption(line, use);
  if (!device) return makeError(device.error());
  options.device = *device;
  auto generator = generatorOption(line);
  if (!generator) return makeError(generator.error());
  options.generator = *generator;
  return options;
}

}  // namespace streetgan::cli
