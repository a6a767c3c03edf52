#include "app/cli/command_line.h"
#include "app/cli/commands.h"
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
namespace {

// The most images one grid holds, by --n or --seeds: 4,096 images of 64 px are a 4 MB PNG and
// some 200 MB while they are made; 128 px, four times that.
constexpr long long kMaxImages = 4096;

}  // namespace

int runSample(const Args& args) {
  // Every core, and the CPU unless --device says otherwise: sample takes no --threads.
  ModelOptionsUse use;
  use.threads = false;
  std::vector<OptionSpec> specs = {
      checkpointOptionSpec(use),
      {"--out", "FILE", "PNG file to write"},
      {"--n", "N", "number of images (default 64, at most " + std::to_string(kMaxImages) + ")"},
      {"--seed", "N", "latent seed (default 0)"},
      {"--seeds", "A,B,..",
       "one image per seed, in this order, at most " + std::to_string(kMaxImages) + " (instead of --n and --seed)"},
      {"--fixed", "", "use the run's fixed sample noise instead of --seed"},
      {"--columns", "N", "images per row (default: square grid)"},
      {"--train-mode", "", "use batch statistics in BatchNorm as the original tool did"}};
  for (const auto& spec : deviceOptionSpecs(use)) specs.push_back(spec);
  CommandLine line("sample", "--checkpoint FILE --out FILE.png [options]",
                   "Writes a PNG grid of images generated from a checkpoint. The latents are\n"
                   "drawn from --seed (the same seed gives the same images), one per seed with\n"
                   "--seeds (each seed's latent, as the explorer and walks use it), or with --fixed\n"
                   "are the run's fixed sample noise.",
                   specs);
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "missing --out FILE.png", kExitUsage);
  if (line.has("--seeds") && line.has("--fixed"))
    return fail(line.program(), "--seeds and --fixed cannot be used together", kExitUsage);
  auto n = line.integer("--n", 64, 1, kMaxImages);
  if (!n) return fail(line.program(), n.error(), kExitUsage);
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  if (!seed) return fail(line.program(), seed.error(), kExitUsage);
  auto columns = line.integer("--columns", 0, 0, 4096);
  if (!columns) return fail(line.program(), columns.error(), kExitUsage);
  std::optional<std::vector<std::uint64_t>> seeds;
  if (line.has("--seeds")) {
    auto parsed = parseSeedList("--seeds", line.value("--seeds"), kMaxImages);
    if (!parsed) return fail(line.program(), parsed.error(), kExitUsage);
    seeds = std::move(*parsed);
  }
  auto model = modelOptionsFrom(line, use);
  if (!model) return fail(line.program(), model.error(), kExitUsage);
  const c10::Device device = model->device;

  setComputeThreads(model->threads);
  auto loaded = loadCheckpointGenerator(model->checkpoint, device);
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
  std::fprintf(stderr, "wrote %lld images (step %lld) to %s\n", static_cast<long long>(images.size(0)),
               static_cast<long long>(loaded->progress.step), line.value("--out").c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
