#include "core/train/launch_check.h"

#include "core/distributed/rank_placement.h"
#include "core/runs/event_fields.h"
#include "core/train/graphed_train_step.h"

#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>
#include <utility>

namespace streetgan {
namespace {

// 2 as "2", 0.5 as "0.5": a figure as the user wrote it.
std::string shownNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// On resume, a key the command line does not give keeps the stored config's value: the messages
// then name it as the run's, and say which option changes it.
bool keptFromRun(const TrainerOptions& options, const char* key) {
  return options.resume && !options.resume_overrides.contains(key);
}

std::string graphsHint(const TrainerOptions& options) {
  return keptFromRun(options, "cuda_graphs") ? " (resume with --cuda-graphs off)" : "";
}

// The launcher's view: a host starts `ranks_per_host` ranks, rank i on cuda:i with "cuda", and
// with "auto" where CUDA is visible.
Status checkDevicesPerHost(const TrainConfig& config, const TrainerOptions& options, const LaunchWorld& world) {
  const std::string& spec = config.device;
  const bool stored_device = keptFromRun(options, "device");
  const std::string device_said = (stored_device ? "the run's device " : "--device ") + spec;
  const std::string ranks_with =
      "--nproc " + std::to_string(world.ranks_per_host) + (stored_device ? " with " : " ") + device_said;
  static const std::regex one_gpu("cuda:[0-9]{1,2}");
  const int gpus = visibleCudaDevices();
  if (std::regex_match(spec, one_gpu) && world.ranks_per_host > 1)
    return makeError(device_said +
                     " would put every rank on one GPU; with --nproc use --device cuda (rank i trains on cuda:i)");
  if (spec == "cuda" && gpus < world.ranks_per_host)
    return makeError(ranks_with + " needs a CUDA device for each rank: " +
                     (gpus == 0 ? cudaAbsence() : std::to_string(gpus) + " visible"));
  if (spec == "auto" && gpus > 0 && gpus < world.ranks_per_host)
    return makeError(ranks_with + " would put rank i on cuda:i, but " + std::to_string(gpus) +
                     " CUDA device(s) are visible; use --device cpu, or --nproc " + std::to_string(gpus));
  return {};
}

// The device this process checks: a rank its own (rank i on cuda:i), the launcher its first
// rank's ("cuda" is cuda:0), a single process the config's.
std::string deviceToResolve(const TrainConfig& config, const TrainerOptions& options) {
  return options.placement ? rankDeviceSpec(config.device, *options.placement) : config.device;
}

// A graph replays one recording of the step: it cannot hold a step that differs from step to
// step. `what` names the config's schedule; `key` is the one to set to 1. On resume the recipe is
// the run's: only the graphs can go.
Status refuseGraphsWith(const TrainerOptions& options, const std::string& what, const std::string& key,
                        const std::string& off = "1") {
  return makeError(
      "config key \"cuda_graphs\": true cannot go with " + std::string(options.resume ? "the run's " : "") + what +
      (options.resume ? "; resume with --cuda-graphs off" : "; set " + key + " to " + off + " or cuda_graphs to false"));
}

// Lazy penalties (every reg_every-th step), G learning every n_critic-th step, and augmentation.
Status checkGraphableSchedule(const TrainConfig& config, const TrainerOptions& options) {
  if (config.reg_every > 1 && (config.r1_gamma > 0 || config.r2_gamma > 0)) {
    std::string penalties;
    for (const auto& [key, gamma] :
         {std::pair<const char*, double>{"r1_gamma", config.r1_gamma}, {"r2_gamma", config.r2_gamma}})
      if (gamma > 0) penalties += std::string(penalties.empty() ? "" : " and ") + key + " " + shownNumber(gamma);
    return refuseGraphsWith(
        options, "lazy regularisation (reg_every " + std::to_string(config.reg_every) + " with " + penalties + ")",
        "reg_every");
  }
  if (config.n_critic > 1)
    return refuseGraphsWith(options,
                            "n_critic " + std::to_string(config.n_critic) + " (G learns every " +
                                std::to_string(config.n_critic) + " steps)",
                            "n_critic");
  // The augmentations' draws come from a generator of their own, which a graph would replay.
  if (!config.augment.diff.empty())
    return refuseGraphsWith(options, "augment.diff \"" + config.augment.diff + "\"", "augment.diff", "\"\"");
  if (config.augment.ada_target > 0)
    return refuseGraphsWith(options, "ADA (augment.ada_target " + shownNumber(config.augment.ada_target) + ")",
                            "augment.ada_target", "0");
  if (config.augment.ada_p > 0)
    return refuseGraphsWith(options, "ADA (augment.ada_p " + shownNumber(config.augment.ada_p) + ")", "augment.ada_p",
                            "0");
  return {};
}

Status checkCudaGraphs(const TrainerOptions& options, LaunchChoice& choice, bool precision_known) {
  const std::string said = precision_known ? choice.description : "";
  if (const std::string refused = cudaGraphsRefusal(choice.device, 1, said); !refused.empty())
    return makeError(refused + graphsHint(options));
  choice.description += "; the step runs as a CUDA graph";
  return {};
}

}  // namespace

Result<std::optional<LaunchChoice>> checkLaunchable(const TrainConfig& config, const TrainerOptions& options,
                                                    const LaunchWorld& world) {
  // A graph holds one process's step, never the ranks' all-reduce, whatever the device.
  if (config.cuda_graphs && world.world_size > 1)
    return makeError(cudaGraphsRefusal(c10::Device(c10::kCUDA, 0), world.world_size) + graphsHint(options));
  if (config.cuda_graphs)
    if (Status schedule = checkGraphableSchedule(config, options); !schedule) return makeError(schedule.error());
  if (config.device.empty()) return std::optional<LaunchChoice>();
  if (world.starts_ranks)
    if (Status fits = checkDevicesPerHost(config, options, world); !fits) return makeError(fits.error());
  auto device = resolveDevice(deviceToResolve(config, options));
  if (!device) return makeError(device.error());
  LaunchChoice choice;
  choice.device = *device;
  const bool precision_known = !config.precision.empty();
  if (precision_known) {
    auto precision = resolvePrecision(config.precision, choice.device);
    if (!precision)
      // The config key is spelt as run_started's field (event_fields.h), which reports its value.
      return makeError(keptFromRun(options, events::field::kPrecision)
                           ? precision.error() + " (resume with --precision to choose another)"
                           : precision.error());
    choice.precision = *precision;
    choice.description = describeDeviceChoice(config.device, choice.device, choice.precision);
  }
  if (config.cuda_graphs)
    if (Status graphs = checkCudaGraphs(options, choice, precision_known); !graphs) return makeError(graphs.error());
  return std::optional<LaunchChoice>(choice);
}

}  // namespace streetgan
