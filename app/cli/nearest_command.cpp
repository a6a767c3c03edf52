// streetgan nearest: each sample's nearest training photographs (core/eval/nearest_training_images.h),
// the search the studio's Evaluate tab shows as pictures, as text or JSON.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "core/eval/nearest_training_images.h"
#include "core/latent/latent_explorer.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <limits>

namespace streetgan::cli {
namespace {

struct NearestRequest {
  std::vector<std::uint64_t> seeds;
  NearestTrainingImagesOptions search;
};

Result<NearestRequest> readRequest(const CommandLine& line) {
  NearestRequest request;
  if (line.has("--seeds")) {
    if (line.has("--seed") || line.has("--n")) return makeError("--seeds cannot be used with --seed or --n");
    auto seeds = parseSeedList("--seeds", line.value("--seeds"), kNearestMaxSamples);
    if (!seeds) return makeError(seeds.error());
    request.seeds = std::move(*seeds);
  } else {
    auto first = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max() - kNearestMaxSamples);
    if (!first) return makeError(first.error());
    auto n = line.integer("--n", 8, 1, kNearestMaxSamples);
    if (!n) return makeError(n.error());
    for (long long i = 0; i < *n; ++i) request.seeds.push_back(static_cast<std::uint64_t>(*first + i));
  }
  auto neighbours = line.integer("--neighbours", 3, 1, 64);
  if (!neighbours) return makeError(neighbours.error());
  auto max_train = line.integer("--max-train", 20000, 1, 100000000);
  if (!max_train) return makeError(max_train.error());
  auto draw_seed = line.integer("--draw-seed", 0, 0, std::numeric_limits<long long>::max());
  if (!draw_seed) return makeError(draw_seed.error());
  request.search.neighbours = static_cast<int>(*neighbours);
  request.search.max_train = *max_train;
  request.search.draw_seed = static_cast<std::uint64_t>(*draw_seed);
  return request;
}

std::string relativeToData(const std::string& path, const std::string& dataroot) {
  const auto relative = std::filesystem::path(path).lexically_relative(dataroot);
  return relative.empty() || relative.native().rfind("..", 0) == 0 ? path : relative.generic_string();
}

void printText(const NearestRequest& request, const NearestTrainingImages& found, const char* generator) {
  for (std::size_t i = 0; i < found.nearest.size(); ++i) {
    std::printf("seed %llu:", static_cast<unsigned long long>(request.seeds[i]));
    for (const TrainingNeighbour& neighbour : found.nearest[i])
      std::printf("  %.2f %s", neighbour.distance, relativeToData(neighbour.path, found.dataroot).c_str());
    std::printf("\n");
  }
  std::printf("searched %lld of %lld training images in %s (%lld unreadable), compared at %dx%d; generator %s\n",
              static_cast<long long>(found.train_searched), static_cast<long long>(found.train_total),
              found.dataroot.c_str(), static_cast<long long>(found.train_skipped), found.compare_size,
              found.compare_size, generator);
}

void printJson(const NearestRequest& request, const std::string& checkpoint, const char* generator,
               const NearestTrainingImages& found) {
  nlohmann::json samples = nlohmann::json::array();
  for (std::size_t i = 0; i < found.nearest.size(); ++i) {
    nlohmann::json nearest = nlohmann::json::array();
    for (const TrainingNeighbour& neighbour : found.nearest[i])
      nearest.push_back({{"path", neighbour.path}, {"distance", neighbour.distance}});
    samples.push_back({{"seed", request.seeds[i]}, {"nearest", nearest}});
  }
  const nlohmann::json out = {{"checkpoint", checkpoint},
                              {"generator", generator},
                              {"dataroot", found.dataroot},
                              {"compare_size", found.compare_size},
                              {"train_total", found.train_total},
                              {"train_searched", found.train_searched},
                              {"train_skipped", found.train_skipped},
                              {"samples", samples}};
  std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

int runNearest(const Args& args) {
  const ModelOptionsUse use = nearestModelUse();
  CommandLine line = nearestCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  auto request = readRequest(line);
  if (!request) return fail(line.program(), request.error(), kExitUsage);
  if (line.has("--dataroot") && line.value("--dataroot").empty())
    return fail(line.program(), "option '--dataroot': give a folder, not an empty name", kExitUsage);
  auto model = modelOptionsFrom(line, use);
  if (!model) return fail(line.program(), model.error(), kExitUsage);
  setComputeThreads(model->threads);
  auto config = readCheckpointConfig(model->checkpoint);
  if (!config) return fail(line.program(), config.error(), kExitFailure);
  if (line.has("--dataroot")) config->dataroot = line.value("--dataroot");
  if (config->dataroot.empty())
    return fail(line.program(),
                model->checkpoint + ": its run names no data folder (an imported run); give --dataroot DIR",
                kExitUsage);
  auto explorer = LatentExplorer::open(model->checkpoint, deviceName(model->device), model->generator);
  if (!explorer) return fail(line.program(), explorer.error(), kExitFailure);
  if ((*explorer)->channels() != 3)
    return fail(line.program(),
                model->checkpoint + ": the nearest training images need an RGB model; this one makes " +
                    std::to_string((*explorer)->channels()) + " channel" + ((*explorer)->channels() == 1 ? "" : "s"),
                kExitFailure);
  std::vector<Latent> latents;
  for (std::uint64_t seed : request->seeds) latents.push_back((*explorer)->latentOfSeed(seed));
  auto samples = (*explorer)->render(latents);
  if (!samples) return fail(line.program(), samples.error(), kExitFailure);
  auto found = NearestTrainingImagesSearch::find(*samples, *config, request->search);
  if (!found) return fail(line.program(), found.error(), kExitFailure);
  if (line.has("--json"))
    printJson(*request, model->checkpoint, (*explorer)->generatorName(), *found);
  else
    printText(*request, *found, (*explorer)->generatorName());
  return kExitOk;
}

}  // namespace streetgan::cli
