// `streetgan sample`: images from a checkpoint's generator, as a PNG grid or as float32 numbers
// (.npy), from seeded, listed, given (--latents) or the run's fixed latents.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "core/data/image_grid.h"
#include "core/formats/npy_array.h"
#include "core/latent/latent_math.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/util/atomic_file.h"
#include "core/util/regular_file.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

namespace streetgan::cli {

namespace {

// Where the latents come from: the options that choose them, checked together.
struct LatentSource {
  long long n = 64, seed = 0;
  std::optional<std::vector<std::uint64_t>> seeds;
};

Result<LatentSource> latentSource(const CommandLine& line) {
  int sources = 0;
  for (const char* option : {"--seeds", "--fixed", "--latents"}) sources += line.has(option) ? 1 : 0;
  if (sources > 1) return makeError("--seeds, --fixed and --latents cannot be used together");
  if (line.has("--latents"))
    for (const char* option : {"--n", "--seed"})
      if (line.has(option)) return makeError(std::string(option) + " cannot be used with --latents (the file gives the latents)");
  LatentSource source;
  auto n = line.integer("--n", 64, 1, kSampleMaxImages);
  if (!n) return makeError(n.error());
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  if (!seed) return makeError(seed.error());
  source.n = *n, source.seed = *seed;
  if (line.has("--seeds")) {
    auto parsed = parseSeedList("--seeds", line.value("--seeds"), kSampleMaxImages);
    if (!parsed) return makeError(parsed.error());
    source.seeds = std::move(*parsed);
  }
  return source;
}

// A float32 NumPy file of shape (N, nz) or (nz,): at most kSampleMaxImages latents, every number finite.
Result<torch::Tensor> latentsFromFile(const std::string& path, int nz) {
  const std::int64_t most = 65536 + static_cast<std::int64_t>(kSampleMaxImages) * nz * 4;
  auto bytes = RegularFile::readAll(path, most);
  if (!bytes) return makeError("--latents: " + bytes.error());
  auto array = NpyArray::fromBytes(*bytes);
  if (!array) return makeError("--latents: " + path + ": " + array.error());
  const auto& shape = array->shape;
  const bool matrix = shape.size() == 2 && shape[1] == nz && shape[0] >= 1 && shape[0] <= kSampleMaxImages;
  if (!matrix && !(shape.size() == 1 && shape[0] == nz))
    return makeError("--latents: " + path + ": the latents must be an array of shape (N, " + std::to_string(nz) +
                     ") with N from 1 to " + std::to_string(kSampleMaxImages) + " (this generator's nz is " + std::to_string(nz) + ")");
  for (std::size_t i = 0; i < array->values.size(); ++i)
    if (!std::isfinite(array->values[i]))
      return makeError("--latents: " + path + ": element " + std::to_string(i) + " is not a finite number (NaN or infinity)");
  const std::int64_t count = static_cast<std::int64_t>(array->values.size()) / nz;
  return torch::from_blob(array->values.data(), {count, nz, 1, 1}, torch::kFloat32).clone();
}

Result<torch::Tensor> latentsFor(const CommandLine& line, const LatentSource& source, const CheckpointGenerator& loaded) {
  const int nz = loaded.config.nz;
  if (line.has("--latents")) return latentsFromFile(line.value("--latents"), nz);
  if (source.seeds) {
    std::vector<torch::Tensor> latents;
    for (std::uint64_t s : *source.seeds) latents.push_back(latentFromSeed(s, nz));
    return torch::stack(latents).view({-1, nz, 1, 1});
  }
  if (line.has("--fixed")) return loaded.fixed_noise.narrow(0, 0, std::min<long long>(source.n, loaded.fixed_noise.size(0)));
  auto rng = at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(source.seed));
  return torch::randn({source.n, nz, 1, 1}, rng, torch::kFloat32);
}

// The images as a float32 .npy file (N, C, H, W), or as a PNG grid.
Status writeImages(const torch::Tensor& images, const std::string& out, int columns) {
  if (std::filesystem::path(out).extension() != ".npy") return writeImageGrid(images, out, columns);
  const torch::Tensor values = images.to(torch::kCPU, torch::kFloat32).contiguous();
  return writeFileAtomically(out, NpyArray::toBytes(values.sizes().vec(), values.data_ptr<float>(), values.numel()));
}

}  // namespace

int runSample(const Args& args) {
  const ModelOptionsUse use = sampleModelUse();
  CommandLine line = sampleCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "missing --out FILE.png or FILE.npy", kExitUsage);
  if (Status out = outputFileOption(line, {line.value("--checkpoint"), line.value("--latents")}); !out)
    return fail(line.program(), out.error(), kExitUsage);
  auto source = latentSource(line);
  if (!source) return fail(line.program(), source.error(), kExitUsage);
  auto columns = line.integer("--columns", 0, 0, 4096);
  if (!columns) return fail(line.program(), columns.error(), kExitUsage);
  auto model = modelOptionsFrom(line, use);
  if (!model) return fail(line.program(), model.error(), kExitUsage);
  const c10::Device device = model->device;

  setComputeThreads(model->threads);
  auto loaded = loadCheckpointGenerator(model->checkpoint, device, model->generator);
  if (!loaded) return fail(line.program(), loaded.error(), kExitFailure);
  auto noise = latentsFor(line, *source, *loaded);
  if (!noise) return fail(line.program(), noise.error(), kExitUsage);
  torch::NoGradGuard no_grad;
  if (line.has("--train-mode")) loaded->generator->train(); else loaded->generator->eval();
  const auto images = loaded->generator->forward(noise->to(device));
  if (Status written = writeImages(images, line.value("--out"), static_cast<int>(*columns)); !written)
    return fail(line.program(), written.error(), kExitFailure);
  const long long count = images.size(0);
  std::fprintf(stderr, "wrote %lld image%s (step %lld, generator %s) to %s\n", count, count == 1 ? "" : "s",
               static_cast<long long>(loaded->progress.step), loaded->generatorName(), line.value("--out").c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
