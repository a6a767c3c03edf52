#include "app/cli/bench_command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/config_options.h"

#include "core/data/batch_prefetcher.h"
#include "core/data/image_cache.h"
#include "core/data/image_cache_builder.h"
#include "core/data/image_dataset.h"
#include "core/data/image_decoder.h"
#include "core/util/run_on_threads.h"

#include <nlohmann/json.hpp>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>

namespace streetgan::cli {
namespace {

using Clock = std::chrono::steady_clock;

double peakResidentMiB() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

// Decode only (no augmentation), every file in turn on `workers` threads, for `seconds`.
double decodeRate(const ImageDataset& dataset, int channels, int reduction, int workers, double seconds,
                  std::int64_t& images) {
  std::atomic<std::int64_t> next{0}, done{0};
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  auto work = [&] {
    while (Clock::now() < deadline) {
      const std::size_t i = static_cast<std::size_t>(next.fetch_add(1)) % dataset.size();
      if (ImageDecoder::decode(dataset.path(i), channels, reduction)) done.fetch_add(1);
    }
  };
  runOnThreads(workers, [&](int) { work(); });
  images = done.load();
  return images / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int runBenchData(const Args& args) {
  CommandLine line = benchDataCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.has("--dataroot")) return fail(line.program(), "option '--dataroot' is required", kExitUsage);
  auto config = configFromOptions(line);
  if (!config) return fail(line.program(), config.error(), kExitUsage);
  auto img_size = line.integer("--img-size", 64, 8, 1024);
  auto batch = line.integer("--batch", 64, 1, 65536);
  auto seconds = line.integer("--seconds", 10, 1, 3600);
  for (const auto* value : {&img_size, &batch, &seconds})
    if (!*value) return fail(line.program(), value->error(), kExitUsage);
  auto dataset = ImageDataset::open(config->dataroot, config->data.filter, DatasetPart::Train);
  if (!dataset) return fail(line.program(), dataset.error(), kExitFailure);
  const int workers = resolveWorkerCount(config->data.workers);

  std::string source;
  std::int64_t images = 0;
  double rate = 0;
  int reduction = 1;
  if (line.has("--decode-only")) {
    auto r = line.integer("--decode-only", 1, 1, 8);
    if (!r || (*r != 1 && *r != 2 && *r != 4 && *r != 8))
      return fail(line.program(), "option '--decode-only': allowed: 1, 2, 4 or 8", kExitUsage);
    reduction = static_cast<int>(*r);
    source = "decode";
    rate = decodeRate(*dataset, config->nc, reduction, workers, static_cast<double>(*seconds), images);
  } else {
    const SamplePipeline pipeline(config->augment, static_cast<int>(*img_size), config->nc,
                                  config->data.reduced_decode);
    reduction = pipeline.reduction();
    std::shared_ptr<const ImageCache> cache;
    source = "jpeg";
    if (!config->data.cache.empty()) {
      auto opened = ImageCache::open(config->data.cache);
      if (!opened) return fail(line.program(), opened.error(), kExitFailure);
      if (auto mismatch = BatchLoader::cacheMismatch(**opened, pipeline); !mismatch.empty())
        return fail(line.program(), mismatch, kExitFailure);
      cache = std::move(*opened);
      source = "cache";
    }
    const BatchLoader loader(std::move(*dataset), pipeline, static_cast<int>(*batch),
                             static_cast<std::uint64_t>(config->seed), cache);
    BatchPrefetcher prefetcher(loader, workers, config->data.prefetch, 0, 0, 1000000);
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::seconds(*seconds);
    while (Clock::now() < deadline && prefetcher.hasNext()) {
      auto next = prefetcher.next();
      if (!next) return fail(line.program(), next.error(), kExitFailure);
      images += next->batch.images.size(0);
    }
    rate = images / std::chrono::duration<double>(Clock::now() - start).count();
  }
  if (line.has("--json")) {
    const nlohmann::json out = {{"source", source},     {"workers", workers},
                                {"img_size", *img_size}, {"reduction", reduction},
                                {"images", images},      {"peak_rss_mib", peakResidentMiB()},
                                {"images_per_s", rate}};
    std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  }
  std::printf("%-7s %7s %8s %9s %8s %13s\n", "source", "workers", "img_size", "reduction", "images", "peak_rss_mib");
  std::printf("%-7s %7d %8lld %9d %8lld %13.0f\n", source.c_str(), workers, *img_size, reduction,
              static_cast<long long>(images), peakResidentMiB());
  std::printf("%.1f images/s\n", rate);
  return kExitOk;
}

}  // namespace streetgan::cli
