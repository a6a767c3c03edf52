#include "app/cli/command_line.h"
#include "app/cli/bench_command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "core/train/compute_device.h"
#include "core/data/batch_loader.h"
#include "core/data/batch_prefetcher.h"
#include "core/data/image_cache.h"
#include "core/data/image_cache_builder.h"
#include "core/data/image_dataset.h"
#include "core/data/sample_pipeline.h"
#include "core/train/dcgan_step.h"
#include "core/train/device_batch_feeder.h"
#include "core/train/graphed_train_step.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

namespace streetgan::cli {
namespace {

using Clock = std::chrono::steady_clock;

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// The step as training runs it: DcganStep's, or its CUDA graph (--cuda-graphs on).
using TrainStep = std::function<torch::Tensor(const torch::Tensor& real, const torch::Tensor& noise)>;

// Synthetic tensors already on the device: the step alone.
double syntheticRate(const TrainStep& model, const TrainConfig& config, const c10::Device& device,
                     long long batch, long long warmup, long long steps) {
  const auto options = torch::TensorOptions().device(device);
  torch::manual_seed(1);
  const auto real = torch::rand({batch, config.nc, config.img_size, config.img_size}, options) * 2 - 1;
  for (long long i = 0; i < warmup; ++i) model(real, torch::randn({batch, config.nz, 1, 1}, options));
  synchronize(device);
  const auto start = Clock::now();
  for (long long i = 0; i < steps; ++i) model(real, torch::randn({batch, config.nz, 1, 1}, options));
  synchronize(device);
  return static_cast<double>(batch * steps) / std::chrono::duration<double>(Clock::now() - start).count();
}

// Real batches through the whole loader as training runs it: the cache, the worker threads,
// uint8 batches (pinned off the CPU), the copy and the noise on the device, then the step.
Result<double> realRate(const TrainStep& model, const TrainConfig& config, const c10::Device& device,
                        const std::string& dataroot, const std::string& cache_path, long long batch,
                        long long warmup, long long steps) {
  auto dataset = ImageDataset::open(dataroot, config.data.filter, DatasetPart::Train);
  if (!dataset) return makeError(dataset.error());
  const SamplePipeline pipeline(config.augment, config.img_size, config.nc, config.data.reduced_decode);
  auto cache = ImageCache::open(cache_path);
  if (!cache) return makeError(cache.error());
  if (auto mismatch = BatchLoader::cacheMismatch(**cache, pipeline); !mismatch.empty())
    return makeError(mismatch);
  BatchLoader loader(std::move(*dataset), pipeline, static_cast<int>(batch),
                     static_cast<std::uint64_t>(config.seed), *cache);
  if (loader.uncachedCount() > 0)
    return makeError(cache_path + ": " + std::to_string(loader.uncachedCount()) + " of " +
                     std::to_string(loader.datasetSize()) + " images of " + dataroot +
                     " are not in the cache; build it for this folder (streetgan cache build)");
  loader.setPinnedMemory(!device.is_cpu());
  BatchPrefetcher prefetcher(loader, resolveWorkerCount(config.data.workers), config.data.prefetch,
                             0, 0, 1000000);
  DeviceBatchFeeder feeder(device, config.augment.noise_std, static_cast<std::uint64_t>(config.seed));
  auto generator = at::globalContext().defaultGenerator(device).clone();
  const auto options = torch::TensorOptions().device(device);
  long long images = 0;
  Clock::time_point start;
  for (long long i = 0; i < warmup + steps; ++i) {
    if (i == warmup) {
      synchronize(device);
      start = Clock::now();
      images = 0;
    }
    if (!feeder.hasStaged()) {
      auto next = prefetcher.next();
      if (!next) return makeError(next.error());
      feeder.stage(std::move(*next));
    }
    DeviceBatch real = feeder.take();
    const auto n = real.images.size(0);
    if (n > 0) model(real.images, torch::randn({n, config.nz, 1, 1}, generator, options));
    images += n;
    auto next = prefetcher.next();
    if (!next) return makeError(next.error());
    feeder.stage(std::move(*next));
  }
  synchronize(device);
  return static_cast<double>(images) / std::chrono::duration<double>(Clock::now() - start).count();
}

int benchTrain(const Args& args) {
  const ModelOptionsUse use = benchTrainModelUse();
  CommandLine line = benchTrainCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  auto config = presetConfig(line.value("--preset", "naive-64"));
  if (!config) return fail(line.program(), "option '--preset': " + config.error(), kExitUsage);
  if (line.has("-t")) config = applyConfigText(*config, line.value("-t"), ConfigScope::Training, "-t");
  if (!config) return fail(line.program(), config.error(), kExitUsage);
  auto batch = line.integer("--batch", 64, 1, 65536);
  auto steps = line.integer("--steps", 20, 1, 1000000);
  auto warmup = line.integer("--warmup", 3, 0, 1000000);
  auto threads = threadsOption(line);
  auto workers = line.integer("--workers", 0, 0, 1024);
  for (const auto* value : {&batch, &steps, &warmup, &threads, &workers})
    if (!*value) return fail(line.program(), value->error(), kExitUsage);
  if (line.has("--data") && !line.has("--dataroot"))
    return fail(line.program(), "option '--data' needs --dataroot DIR (the folder the cache was built from)", kExitUsage);
  auto device = deviceOption(line, use);
  if (!device) return fail(line.program(), device.error(), kExitUsage);
  auto precision = resolvePrecision(line.value("--precision", "fp32"), *device);
  if (!precision) return fail(line.program(), "option '--precision': " + precision.error(), kExitUsage);
  setComputeThreads(static_cast<int>(*threads));

  const std::string graphs_value = line.value("--cuda-graphs", "off");
  if (graphs_value != "on" && graphs_value != "off")
    return fail(line.program(), "option '--cuda-graphs': '" + graphs_value + "' is not allowed; allowed: on or off", kExitUsage);
  const bool graphs = graphs_value == "on";
  if (graphs)
    if (const std::string why = cudaGraphsUnavailable(*device, 1); !why.empty())
      return fail(line.program(), "option '--cuda-graphs on' " + why, kExitUsage);

  config->batch_size = static_cast<int>(*batch);
  config->data.workers = static_cast<int>(*workers);
  DcganStep model(*config, *device, *precision);
  std::unique_ptr<GraphedTrainStep> graphed;
  std::string graph_warning;
  if (graphs) {
    GraphedTrainStepOptions graph_options;
    graph_options.batch_size = *batch;
    graphed = std::make_unique<GraphedTrainStep>(
        model, [&graph_warning](const std::string& message) { graph_warning = message; }, graph_options);
  }
  std::int64_t images_trained = 0;
  const TrainStep step = [&](const torch::Tensor& real, const torch::Tensor& noise) {
    torch::Tensor stats = graphed ? graphed->trainStep(real, noise) : model.trainStep(real, noise);
    model.updateAverage(images_trained, real.size(0));
    images_trained += real.size(0);
    return stats;
  };
  // The graph's warm-up steps and its recording stay out of the timing.
  const long long untimed = graphs ? std::max<long long>(*warmup, GraphedTrainStepOptions{}.warmup_steps + 1) : *warmup;
  const double synthetic = syntheticRate(step, *config, *device, *batch, untimed, *steps);
  if (!graph_warning.empty()) return fail(line.program(), graph_warning, kExitFailure);
  std::optional<double> real;
  if (line.has("--data")) {
    auto rate = realRate(step, *config, *device, line.value("--dataroot"), line.value("--data"),
                         *batch, *warmup, *steps);
    if (!rate) return fail(line.program(), rate.error(), kExitFailure);
    real = *rate;
  }

  nlohmann::json result = {{"preset", config->preset},  {"batch", *batch},
                           {"steps", *steps},            {"device", deviceName(*device)},
                           {"precision", precisionName(*precision)},
                           {"threads", at::get_num_threads()},
                           {"cuda_graphs", graphs},
                           {"images_per_s", synthetic}};
  if (real) {
    result["real_images_per_s"] = *real;
    result["real_share"] = *real / synthetic;
  }
  if (line.has("--json")) {
    std::printf("%s\n", result.dump().c_str());
  } else {
    std::printf("%-10s %6s %6s %-7s %-9s %7s %10s", "preset", "batch", "steps", "device",
                "precision", "threads", "images/s");
    if (real) std::printf(" %10s %10s", "real img/s", "real share");
    std::printf("\n%-10s %6lld %6lld %-7s %-9s %7d %10.1f", config->preset.c_str(), *batch, *steps,
                deviceName(*device).c_str(), precisionName(*precision).c_str(),
                at::get_num_threads(), synthetic);
    if (real) std::printf(" %10.1f %9.1f%%", *real, 100.0 * *real / synthetic);
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace

int runBench(const Args& args) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    std::fputs("Usage: streetgan bench <train|data|allreduce|explore|metrics> [options]\n\nBenchmarks:\n"
               "  train       time the training step on synthetic tensors (see bench train --help)\n"
               "  data        time the data loader alone (see bench data --help)\n"
               "  allreduce   as one rank: time the gradient all-reduce of distributed training\n"
               "  explore     time the studio's walk preview rendering against its 30 frames/s\n"
               "  metrics     time the quality metrics on bench/bench_metrics.py's inputs\n",
               args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args.front() == "train") return benchTrain(Args(args.begin() + 1, args.end()));
  if (args.front() == "data") return runBenchData(Args(args.begin() + 1, args.end()));
  if (args.front() == "allreduce") return runBenchAllReduce(Args(args.begin() + 1, args.end()));
  if (args.front() == "explore") return runBenchExplore(Args(args.begin() + 1, args.end()));
  if (args.front() == "metrics") return runBenchMetrics(Args(args.begin() + 1, args.end()));
  return fail("streetgan bench", "unknown benchmark '" + args.front() + "'; allowed: train, data, allreduce, explore, metrics",
              kExitUsage);
}

}  // namespace streetgan::cli
