#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/config_options.h"
#include "core/model/discriminator.h"
#include "core/model/generator.h"
#include "core/model/layer_plan.h"
#include "core/train/network_options.h"
#include "core/train/compute_device.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/version.h>

#include <cstdio>

namespace streetgan::cli {
namespace {

// The counts come from the nets' layer plans: building the five pairs of nets (their random
// initialisation) took 2.5 s.
nlohmann::json describe(const TrainConfig& config) {
  const auto g = generatorLayers(generatorOptionsFor(config));
  const auto d = discriminatorLayers(discriminatorOptionsFor(config));
  return {{"preset", config.preset},     {"img_size", config.img_size}, {"nz", config.nz},
          {"ngf", config.ngf},           {"ndf", config.ndf},           {"nc", config.nc},
          {"params_g", parameterCount(g)},
          {"params_d", parameterCount(d)}};
}

}  // namespace

int runInfo(const Args& args) {
  CommandLine line = infoCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.positionals().empty())
    return fail(line.program(), "unexpected argument '" + line.positionals().front() + "'", kExitUsage);
  auto config = configFromOptions(line);
  if (!config) return fail(line.program(), config.error(), kExitUsage);

  nlohmann::json out = describe(*config);
  out["devices"] = availableDevices();
  out["version"] = STREETGAN_VERSION;
  out["libtorch"] = TORCH_VERSION;
  out["threads"] = at::get_num_threads();
  out["presets"] = nlohmann::json::array();
  for (const auto& name : presetNames()) out["presets"].push_back(describe(*presetConfig(name)));

  if (line.has("--json")) {
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::printf("streetgan %s (LibTorch %s, %d CPU threads)\n", STREETGAN_VERSION, TORCH_VERSION,
              at::get_num_threads());
  std::printf("devices: ");
  for (std::size_t i = 0; i < out["devices"].size(); ++i)
    std::printf("%s%s", i ? ", " : "", out["devices"][i].get<std::string>().c_str());
  std::printf("\n\nthis config: img_size %d, nz %d, ngf %d, ndf %d, nc %d\n", config->img_size,
              config->nz, config->ngf, config->ndf, config->nc);
  std::printf("  G parameters: %lld\n  D parameters: %lld\n\n",
              out["params_g"].get<long long>(), out["params_d"].get<long long>());
  std::printf("%-10s %8s %5s %5s %5s %14s %14s\n", "preset", "img_size", "nz", "ngf", "ndf",
              "G parameters", "D parameters");
  for (const auto& p : out["presets"])
    std::printf("%-10s %8d %5d %5d %5d %14lld %14lld\n", p["preset"].get<std::string>().c_str(),
                p["img_size"].get<int>(), p["nz"].get<int>(), p["ngf"].get<int>(),
                p["ndf"].get<int>(), p["params_g"].get<long long>(), p["params_d"].get<long long>());
  return kExitOk;
}

}  // namespace streetgan::cli
