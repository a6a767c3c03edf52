#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/config_options.h"

#include "core/data/augmentation_preview.h"
#include "core/data/image_dataset.h"
#include "core/data/image_grid.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdio>

namespace streetgan::cli {
namespace {

using json = nlohmann::json;

int dataStats(const Args& args) {
  CommandLine line = dataStatsCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.positionals().size() != 1)
    return fail(line.program(), "give exactly one data folder (see --help)", kExitUsage);
  auto config = configFromOptions(line);
  if (!config) return fail(line.program(), config.error(), kExitUsage);
  const std::string root = line.positionals().front();
  auto dataset = ImageDataset::open(root, config->data.filter,
                                    line.has("--holdout") ? DatasetPart::Holdout : DatasetPart::Train);
  if (!dataset) return fail(line.program(), dataset.error(), kExitFailure);

  const auto counts = dataset->groupCounts();
  const double total = static_cast<double>(dataset->size());
  std::int64_t sequences = 0;
  for (const auto& c : counts) sequences += c.sequences;
  const bool msls = dataset->layout() == DatasetLayout::Msls;
  if (line.has("--json")) {
    json out = {{"root", root},
                {"layout", layoutName(dataset->layout())},
                {"part", line.has("--holdout") ? "held-out" : "training"},
                {"images", dataset->size()},
                {"sequences", sequences},
                {"other_part", dataset->otherPartSize()},
                {"filters", json::array()},
                {"groups", json::array()}};
    for (const auto& step : dataset->filterSteps())
      out["filters"].push_back({{"step", step.name}, {"remaining", step.remaining}});
    for (const auto& c : counts)
      out["groups"].push_back({{"name", c.group}, {"images", c.images},
                               {"share", c.images / total}, {"sequences", c.sequences}});
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  std::printf("%s: %s layout, %zu images", root.c_str(), layoutName(dataset->layout()), dataset->size());
  if (dataset->otherPartSize() > 0)
    std::printf(" (%s part; %lld images on the other side of the split)",
                line.has("--holdout") ? "held-out" : "training",
                static_cast<long long>(dataset->otherPartSize()));
  std::printf("\nfilters:");
  for (const auto& step : dataset->filterSteps())
    std::printf(" %s %lld%s", step.name.c_str(), static_cast<long long>(step.remaining),
                &step == &dataset->filterSteps().back() ? "" : " ->");
  std::printf("\n\n%-24s %9s %7s %10s\n", msls ? "city" : "folder", "images", "share", "sequences");
  for (const auto& c : counts)
    std::printf("%-24s %9lld %6.1f%% %10lld\n", c.group.c_str(), static_cast<long long>(c.images),
                100.0 * c.images / total, static_cast<long long>(c.sequences));
  std::printf("%-24s %9lld %6.1f%% %10lld\n", "total", static_cast<long long>(dataset->size()), 100.0,
              static_cast<long long>(sequences));
  return kExitOk;
}

int dataPreview(const Args& args) {
  CommandLine line = dataPreviewCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.positionals().size() != 1)
    return fail(line.program(), "give exactly one image (see --help)", kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "option '--out' is required", kExitUsage);
  auto count = line.integer("--n", 16, 1, 1024);
  if (!count) return fail(line.program(), count.error(), kExitUsage);
  auto base = configFromOptions(line);
  if (!base) return fail(line.program(), base.error(), kExitUsage);
  json overrides = json::object();
  if (line.has("--img-size")) {
    auto size = line.integer("--img-size", 64, 1, 4096);
    if (!size) return fail(line.program(), size.error(), kExitUsage);
    overrides["img_size"] = *size;
  }
  for (const auto& [flag, key] : {std::pair<const char*, const char*>{"--shift", "shift"},
                                  {"--crop-scale", "crop_scale"},
                                  {"--noise-std", "noise_std"},
                                  {"--rotate-deg", "rotate_deg"},
                                  {"--scale-jitter", "scale_jitter"}}) {
    if (!line.has(flag)) continue;
    try {
      std::size_t used = 0;
      const std::string text = line.value(flag);
      overrides["augment"][key] = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception&) {
      return fail(line.program(), std::string("option '") + flag + "': \"" + line.value(flag) + "\" is not a number", kExitUsage);
    }
  }
  if (line.has("--flip")) overrides["augment"]["flip"] = true;
  auto config = applyConfigJson(*base, overrides, ConfigScope::All, "command line");
  if (!config) return fail(line.program(), config.error(), kExitUsage);
  const SamplePipeline pipeline(config->augment, config->img_size, config->nc, !line.has("--full-decode"));
  auto variants = augmentedVariants(pipeline, line.positionals().front(), static_cast<int>(*count),
                                    static_cast<std::uint64_t>(config->seed));
  if (!variants) return fail(line.program(), variants.error(), kExitFailure);
  if (Status written = writeImageGrid(*variants, line.value("--out")); !written)
    return fail(line.program(), written.error(), kExitFailure);
  std::printf("%s\n", line.value("--out").c_str());
  return kExitOk;
}

}  // namespace

int runData(const Args& args) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    std::fputs("Usage: streetgan data <stats|preview> [options]\n\n"
               "  stats     images per city (folder) after the filters, with shares\n"
               "  preview   augmented variants of one image as a grid\n",
               args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args.front() == "stats") return dataStats(rest);
  if (args.front() == "preview") return dataPreview(rest);
  return fail("streetgan data", "unknown subcommand '" + args.front() + "'; allowed: stats, preview", kExitUsage);
}

}  // namespace streetgan::cli
