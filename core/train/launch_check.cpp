#include "core/train/launch_check.h"

#include "core/distributed/rank_placement.h"
#include "core/train/graphed_train_step.h"

#include <nlohmann/json.hpp>

#include <regex>

namespace streetgan {
namespace {

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
      return makeError(options.resume ? precision.error() + " (resume with --precision to choose another)"
                                      : precision.error());
    choice.precision = *precision;
    choice.description = describeDeviceChoice(config.device, choice.device, choice.precision);
  }
  if (config.cuda_graphs)
    if (Status graphs = checkCudaGraphs(options, choice, precision_known); !graphs) return makeError(graphs.error());
  return std::optional<LaunchChoice>(choice);
}

}  // namespace streetgan
