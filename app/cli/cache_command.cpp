#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/config_options.h"
#include "app/cli/stop_signal.h"

#include "core/data/image_cache.h"
#include "core/data/image_cache_builder.h"
#include "core/data/image_dataset.h"
#include "core/data/sample_pipeline.h"
#include "core/util/progress_line.h"

#include <cstdio>

namespace streetgan::cli {
namespace {

int cacheBuild(const Args& args) {
  CommandLine line = cacheBuildCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.positionals().empty())
    return fail(line.program(), "unexpected argument '" + line.positionals().front() + "'", kExitUsage);
  for (const char* required : {"--dataroot", "--out"})
    if (!line.has(required)) return fail(line.program(), std::string("option '") + required + "' is required", kExitUsage);
  auto config = configFromOptions(line);
  if (!config) return fail(line.program(), config.error(), kExitUsage);
  auto dataset = ImageDataset::open(config->dataroot, config->data.filter, DatasetPart::All);
  if (!dataset) return fail(line.program(), dataset.error(), kExitFailure);
  const SamplePipeline pipeline(config->augment, config->img_size, config->nc, config->data.reduced_decode);

  CacheBuildOptions options;
  options.workers = config->data.workers;
  options.cancel = &installStopHandlers();
  int last_percent = -1;
  const bool progress_lines = line.has("--progress");
  options.progress = [&](std::int64_t done, std::int64_t total) {
    const int percent = static_cast<int>(100 * done / std::max<std::int64_t>(1, total));
    if (percent == last_percent) return;
    last_percent = percent;
    if (progress_lines) {
      if (total > 0) printProgressLine(stderr, {kProgressTaskCacheBuild, done, total, {}});
      return;
    }
    std::printf("%3d%%  %lld/%lld images\n", percent, static_cast<long long>(done),
                static_cast<long long>(total));
    std::fflush(stdout);
  };
  std::printf("caching %zu images of %s at 1/%d size (%d channel(s)) into %s\n", dataset->size(),
              config->dataroot.c_str(), pipeline.reduction(), pipeline.channels(),
              line.value("--out").c_str());
  auto summary = ImageCacheBuilder::build(*dataset, pipeline, line.value("--out"), options);
  if (!summary) return fail(line.program(), summary.error(), kExitFailure);
  for (const auto& skipped : summary->skipped) std::fprintf(stderr, "warning: skipped %s\n", skipped.reason.c_str());
  std::printf("wrote %s: %lld images, %.1f MiB; %zu skipped\n", line.value("--out").c_str(),
              static_cast<long long>(summary->records), summary->bytes / 1048576.0, summary->skipped.size());
  return kExitOk;
}

int cacheInfo(const Args& args) {
  CommandLine line = cacheInfoCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.positionals().size() != 1) return fail(line.program(), "give exactly one cache file", kExitUsage);
  auto cache = ImageCache::open(line.positionals().front());
  if (!cache) return fail(line.program(), cache.error(), kExitFailure);
  std::size_t damaged = 0;
  for (std::size_t i = 0; i < (*cache)->size(); ++i)
    if (auto view = (*cache)->image(i); !view) {
      std::fprintf(stderr, "%s\n", view.error().c_str());
      ++damaged;
    }
  std::printf("%s: version %u, %zu images, %d channel(s), decoded at 1/%d size, %zu damaged\n",
              line.positionals().front().c_str(), ImageCache::kVersion, (*cache)->size(),
              (*cache)->channels(), (*cache)->reduction(), damaged);
  return damaged == 0 ? kExitOk : kExitFailure;
}

}  // namespace

int runCache(const Args& args) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    std::fputs("Usage: streetgan cache <build|info> [options]\n\n"
               "  build   decode a data set once into a memory-mapped cache file\n"
               "  info    check a cache file and print what it holds\n",
               args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args.front() == "build") return cacheBuild(rest);
  if (args.front() == "info") return cacheInfo(rest);
  return fail("streetgan cache", "unknown subcommand '" + args.front() + "'; allowed: build, info", kExitUsage);
}

}  // namespace streetgan::cli
