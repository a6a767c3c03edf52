// `streetgan bench allreduce`: one rank of a gradient all-reduce benchmark (started by
// bench/bench_distributed.py, torchrun or by hand with RANK/WORLD_SIZE/MASTER_PORT set). Times,
// on the same gradients of both nets, the bucketed all-reduce training uses (GradientAllReduce)
// beside one flat all-reduce of every gradient, and both beside the step's own compute time
// (DcganStep alone) and the whole distributed step (DcganStep in the group). Rank 0 prints.
#include "app/cli/command_line.h"
#include "app/cli/bench_command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "core/train/compute_device.h"
#include "core/train/dcgan_step.h"
#include "core/distributed/gradient_all_reduce.h"
#include "core/distributed/rank_group.h"
#include "core/util/median.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace streetgan::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds of `work`, each repeat started together on every rank.
std::vector<double> timeRepeats(RankGroup* group, const c10::Device& device, long long repeats,
                                const std::function<void()>& work) {
  std::vector<double> ms;
  for (long long i = 0; i < repeats; ++i) {
    if (group) group->sumOnHost({0});
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    const auto start = Clock::now();
    work();
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

std::int64_t gradientBytes(DcganStep& model) {
  std::int64_t bytes = 0;
  for (torch::nn::Module* net : model.nets())
    for (const auto& p : net->parameters()) bytes += p.numel() * static_cast<std::int64_t>(p.element_size());
  return bytes;
}

}  // namespace

int runBenchAllReduce(const Args& args) {
  const ModelOptionsUse use = benchAllReduceModelUse();
  CommandLine line = benchAllReduceCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  auto placement = rankPlacementFromEnvironment();
  if (!placement) return fail(line.program(), placement.error(), kExitUsage);
  if (!*placement)
    return fail(line.program(), "runs as one rank of several: set RANK and WORLD_SIZE (bench/bench_distributed.py "
                "or torchrun does)", kExitUsage);
  auto config = presetConfig(line.value("--preset", "naive-64"));
  if (!config) return fail(line.program(), "option '--preset': " + config.error(), kExitUsage);
  auto batch = line.integer("--batch", 64, 1, 65536);
  auto repeats = line.integer("--repeats", 10, 1, 100000);
  auto threads = threadsOption(line);
  auto bucket_mb = line.integer("--bucket-mb", 25, 1, 4096);
  for (const auto* value : {&batch, &repeats, &threads, &bucket_mb})
    if (!*value) return fail(line.program(), value->error(), kExitUsage);
  auto device = resolveDeviceOption(rankDeviceSpec(line.value("--device", use.device_default), **placement));
  if (!device) return fail(line.program(), device.error(), kExitUsage);
  setComputeThreads(static_cast<int>(*threads));
  auto group = RankGroup::connect(**placement);
  if (!group) return fail(line.program(), group.error(), kExitFailure);
  if (Status ready = (*group)->useDevice(*device); !ready) return fail(line.program(), ready.error(), kExitFailure);
  RankGroup& ranks = **group;

  config->batch_size = static_cast<int>(*batch);
  DcganStep model(*config, *device, Precision::Fp32);
  const auto options = torch::TensorOptions().device(*device);
  torch::manual_seed(1 + ranks.rank());
  const auto real = torch::rand({*batch, config->nc, config->img_size, config->img_size}, options) * 2 - 1;
  const auto noise = torch::randn({*batch, config->nz, 1, 1}, options);
  const auto step = [&] { model.trainStep(real, noise); };
  for (int i = 0; i < 2; ++i) step();
  const auto alone = timeRepeats(&ranks, *device, *repeats, step);
  model.setRankGroup(&ranks, false);
  for (int i = 0; i < 2; ++i) step();
  const auto in_group = timeRepeats(&ranks, *device, *repeats, step);
  model.setRankGroup(nullptr, false);

  // The gradients the last step left on both nets, averaged both ways, alternately.
  GradientAllReduceOptions bucket_options;
  bucket_options.bucket_bytes = static_cast<std::int64_t>(*bucket_mb) << 20;
  GradientAllReduce g(ranks, model.generator()->parameters(), bucket_options);
  GradientAllReduce d(ranks, model.discriminator()->parameters(), bucket_options);
  std::vector<double> bucketed, flat;
  for (long long i = 0; i < *repeats; ++i) {
    const auto b = timeRepeats(&ranks, *device, 1, [&] { g.average(); d.average(); });
    const auto f = timeRepeats(&ranks, *device, 1, [&] { g.averageFlat(); d.averageFlat(); });
    bucketed.push_back(b.front());
    flat.push_back(f.front());
  }
  if (ranks.rank() != 0) return kExitOk;
  const nlohmann::json result = {{"preset", config->preset},
                                 {"batch", *batch},
                                 {"world_size", ranks.worldSize()},
                                 {"backend", ranks.backend()},
                                 {"device", deviceName(*device)},
                                 {"threads", at::get_num_threads()},
                                 {"gradient_mb", static_cast<double>(gradientBytes(model)) / (1 << 20)},
                                 {"buckets", g.bucketCount() + d.bucketCount()},
                                 {"step_ms", median(alone)},
                                 {"step_in_group_ms", median(in_group)},
                                 {"bucketed_ms", median(bucketed)},
                                 {"flat_ms", median(flat)},
                                 {"bucketed_over_flat", median(bucketed) / median(flat)}};
  std::printf("%s\n", result.dump().c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
