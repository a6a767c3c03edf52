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

#include <sstream>

namespace streetgan::cli {
namespace {

// The recipe in a few words: the loss and D's normalisation, then each technique that is on.
std::string recipeSummary(const TrainConfig& config) {
  std::ostringstream out;
  out << config.loss << ", D " << config.d_norm;
  if (config.r1_gamma > 0) out << ", R1 " << config.r1_gamma;
  if (config.r2_gamma > 0) out << ", R2 " << config.r2_gamma;
  if (config.r1_gamma > 0 || config.r2_gamma > 0) out << " every " << config.reg_every;
  if (config.n_critic > 1) out << ", n_critic " << config.n_critic;
  if (config.lr_d > 0 || config.lr_g > 0)
    out << ", lr D " << (config.lr_d > 0 ? config.lr_d : config.lr) << " G " << (config.lr_g > 0 ? config.lr_g : config.lr);
  const TrainConfig defaults;
  if (config.beta1 != defaults.beta1 || config.beta2 != defaults.beta2)
    out << ", AdamW betas " << config.beta1 << " " << config.beta2;
  if (config.ema.half_life_images > 0) {
    out << ", EMA " << config.ema.half_life_images;
    if (config.ema.rampup > 0) out << " rampup " << config.ema.rampup;
  }
  if (!config.augment.diff.empty()) out << ", DiffAugment " << config.augment.diff;
  if (config.augment.ada_target > 0) out << ", ADA " << config.augment.ada_ops << " target " << config.augment.ada_target;
  else if (config.augment.ada_p > 0) out << ", ADA " << config.augment.ada_ops << " p " << config.augment.ada_p;
  return out.str();
}

// The counts come from the nets' layer plans: building the five pairs of nets (their random
// initialisation) took 2.5 s.
nlohmann::json describe(const TrainConfig& config) {
  const auto g = generatorLayers(generatorOptionsFor(config));
  const auto d = discriminatorLayers(discriminatorOptionsFor(config));
  return {{"preset", config.preset},     {"img_size", config.img_size}, {"nz", config.nz},
          {"ngf", config.ngf},           {"ndf", config.ndf},           {"nc", config.nc},
          {"batch_size", config.batch_size},
          {"params_g", parameterCount(g)},
          {"params_d", parameterCount(d)},
          {"loss", config.loss},         {"d_norm", config.d_norm},     {"recipe", recipeSummary(config)}};
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
  std::printf("\n\nthis config: img_size %d, nz %d, ngf %d, ndf %d, nc %d, batch_size %d\n", config->img_size,
              config->nz, config->ngf, config->ndf, config->nc, config->batch_size);
  std::printf("  G parameters: %lld\n  D parameters: %lld\n  recipe: %s\n\n", out["params_g"].get<long long>(),
              out["params_d"].get<long long>(), out["recipe"].get<std::string>().c_str());
  std::printf("%-10s %8s %5s %5s %5s %5s %14s %14s  %s\n", "preset", "img_size", "nz", "ngf", "ndf", "batch",
              "G parameters", "D parameters", "recipe");
  for (const auto& p : out["presets"])
    std::printf("%-10s %8d %5d %5d %5d %5d %14lld %14lld  %s\n", p["preset"].get<std::string>().c_str(),
                p["img_size"].get<int>(), p["nz"].get<int>(), p["ngf"].get<int>(), p["ndf"].get<int>(),
                p["batch_size"].get<int>(), p["params_g"].get<long long>(), p["params_d"].get<long long>(),
                p["recipe"].get<std::string>().c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
