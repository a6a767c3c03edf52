#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "core/train/compute_device.h"
#include "core/train/dcgan_step.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>

namespace streetgan::cli {
namespace {

int benchTrain(const Args& args) {
  CommandLine line("bench train", "--preset NAME [--batch B --steps N ...]",
                   "Times the training step (D on real and fake, then G) on synthetic tensors,\n"
                   "with no data loading, and prints images per second. bench/bench_train.py runs\n"
                   "the same step in PyTorch eager mode beside it and prints the ratio.",
                   {{"--preset", "NAME", "naive-64, safe-64 or safe-128 (default naive-64)"},
                    {"--batch", "B", "batch size (default 64)"},
                    {"--steps", "N", "timed steps (default 20)"},
                    {"--warmup", "N", "untimed steps first (default 3)"},
                    {"--threads", "N", "CPU threads (0 = all cores; default 0)"},
                    {"--device", "DEV", "auto, cpu, cuda or cuda:N (default auto)"},
                    {"--precision", "P", "fp32, fp16 or bf16 (default fp32)"},
                    {"--json", "", "print one JSON object"}});
  if (auto done = line.parseOrExit(args)) return *done;
  auto config = presetConfig(line.value("--preset", "naive-64"));
  if (!config) return fail(line.program(), "option '--preset': " + config.error(), kExitUsage);
  auto batch = line.integer("--batch", 64, 1, 65536);
  auto steps = line.integer("--steps", 20, 1, 1000000);
  auto warmup = line.integer("--warmup", 3, 0, 1000000);
  auto threads = line.integer("--threads", 0, 0, 1024);
  for (const auto* value : {&batch, &steps, &warmup, &threads})
    if (!*value) return fail(line.program(), value->error(), kExitUsage);
  auto device = resolveDevice(line.value("--device", "auto"));
  if (!device) return fail(line.program(), "option '--device': " + device.error(), kExitUsage);
  auto precision = resolvePrecision(line.value("--precision", "fp32"), *device);
  if (!precision) return fail(line.program(), "option '--precision': " + precision.error(), kExitUsage);
  setComputeThreads(static_cast<int>(*threads));

  config->batch_size = static_cast<int>(*batch);
  DcganStep model(*config, *device, *precision);
  torch::manual_seed(1);
  const auto options = torch::TensorOptions().device(*device);
  const auto real = torch::rand({*batch, config->nc, config->img_size, config->img_size}, options) * 2 - 1;
  auto sync = [&] {
    if (device->is_cuda()) torch::cuda::synchronize(device->index());
  };
  for (long long i = 0; i < *warmup; ++i)
    model.step(real, torch::randn({*batch, config->nz, 1, 1}, options));
  sync();
  const auto start = std::chrono::steady_clock::now();
  for (long long i = 0; i < *steps; ++i)
    model.step(real, torch::randn({*batch, config->nz, 1, 1}, options));
  sync();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double images_per_s = static_cast<double>(*batch * *steps) / seconds;

  const nlohmann::json result = {{"preset", config->preset},  {"batch", *batch},
                                 {"steps", *steps},            {"device", deviceName(*device)},
                                 {"precision", precisionName(*precision)},
                                 {"threads", at::get_num_threads()},
                                 {"seconds", seconds},         {"images_per_s", images_per_s}};
  if (line.has("--json")) {
    std::printf("%s\n", result.dump().c_str());
  } else {
    std::printf("%-10s %6s %6s %-7s %-9s %7s %10s\n", "preset", "batch", "steps", "device",
                "precision", "threads", "images/s");
    std::printf("%-10s %6lld %6lld %-7s %-9s %7d %10.1f\n", config->preset.c_str(), *batch, *steps,
                deviceName(*device).c_str(), precisionName(*precision).c_str(),
                at::get_num_threads(), images_per_s);
  }
  return kExitOk;
}

}  // namespace

int runBench(const Args& args) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    std::fputs("Usage: streetgan bench <train|data> [options]\n\nBenchmarks:\n"
               "  train   time the training step on synthetic tensors (see bench train --help)\n"
               "  data    time the data loader alone (see bench data --help)\n",
               args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args.front() == "train") return benchTrain(Args(args.begin() + 1, args.end()));
  if (args.front() == "data") return runBenchData(Args(args.begin() + 1, args.end()));
  return fail("streetgan bench", "unknown benchmark '" + args.front() + "'; allowed: train, data", kExitUsage);
}

}  // namespace streetgan::cli
