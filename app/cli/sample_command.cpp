#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "core/data/image_grid.h"
#include "core/latent/latent_math.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstdio>
#include <limits>
#include <optional>

namespace streetgan::cli {

int runSample(const Args& args) {
  const ModelOptionsUse use = sampleModelUse();
  CommandLine line = sampleCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "missing --out FILE.png", kExitUsage);
  if (line.has("--seeds") && line.has("--fixed"))
    return fail(line.program(), "--seeds and --fixed cannot be used together", kExitUsage);
  auto n = line.integer("--n", 64, 1, kSampleMaxImages);
  if (!n) return fail(line.program(), n.error(), kExitUsage);
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  if (!seed) return fail(line.program(), seed.error(), kExitUsage);
  auto columns = line.integer("--columns", 0, 0, 4096);
  if (!columns) return fail(line.program(), columns.error(), kExitUsage);
  std::optional<std::vector<std::uint64_t>> seeds;
  if (line.has("--seeds")) {
    auto parsed = parseSeedList("--seeds", line.value("--seeds"), kSampleMaxImages);
    if (!parsed) return fail(line.program(), parsed.error(), kExitUsage);
    seeds = std::move(*parsed);
  }
  auto model = modelOptionsFrom(line, use);
  if (!model) return fail(line.program(), model.error(), kExitUsage);
  const c10::Device device = model->device;

  setComputeThreads(model->threads);
  auto loaded = loadCheckpointGenerator(model->checkpoint, device, model->generator);
  if (!loaded) return fail(line.program(), loaded.error(), kExitFailure);
  torch::Tensor noise;
  if (seeds) {
    std::vector<torch::Tensor> latents;
    for (std::uint64_t s : *seeds) latents.push_back(latentFromSeed(s, loaded->config.nz));
    noise = torch::stack(latents).view({-1, loaded->config.nz, 1, 1});
  } else if (line.has("--fixed")) {
    noise = loaded->fixed_noise.narrow(0, 0, std::min<long long>(*n, loaded->fixed_noise.size(0)));
  } else {
    auto rng = at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(*seed));
    noise = torch::randn({*n, loaded->config.nz, 1, 1}, rng, torch::kFloat32);
  }
  torch::NoGradGuard no_grad;
  if (line.has("--train-mode")) loaded->generator->train(); else loaded->generator->eval();
  const auto images = loaded->generator->forward(noise.to(device));
  if (Status written = writeImageGrid(images, line.value("--out"), static_cast<int>(*columns)); !written)
    return fail(line.program(), written.error(), kExitFailure);
  const long long count = images.size(0);
  std::fprintf(stderr, "wrote %lld image%s (step %lld, generator %s) to %s\n", count, count == 1 ? "" : "s",
               static_cast<long long>(loaded->progress.step), loaded->generatorName(), line.value("--out").c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
