// `streetgan bench explore`: the render rate of the studio's Explore preview, which was a test's
// assertion (tst_studio_explore, "the worker renders ≥ 30 frames/s") until a busy 2-core machine
// failed it. The preview's worker renders a looped walk through the keyframes with
// LatentExplorer::renderFrames, 8 frames a job, one job at a time, and plays them at 30 frames/s
// by default; this times the same calls on the same kind of walk and prints the rate beside
// that target.
#include "app/cli/command_line.h"
#include "app/cli/bench_command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "core/latent/latent_explorer.h"
#include "core/train/compute_device.h"
#include "core/util/median.h"

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace streetgan::cli {

namespace {

using Clock = std::chrono::steady_clock;

// The result as one JSON line (--json), or as a table and the runs' rates.
void printResult(const nlohmann::json& result, bool json, long long repeats) {
  if (json) {
    std::printf("%s\n", result.dump().c_str());
    return;
  }
  const long long page = result["page"].get<long long>();
  std::printf("%-17s %6s %5s %4s %7s %7s %10s %10s %4s\n", "benchmark", "frames", "image", page > 0 ? "page" : "job",
              "threads", "repeats", "frames/s", "target", "met");
  std::printf("%-17s %6lld %5d %4lld %7d %7lld %10.1f %10.1f %4s\n", result["benchmark"].get<std::string>().c_str(),
              result["frames"].get<long long>(), result["image_size"].get<int>(),
              page > 0 ? page : result["job"].get<long long>(), result["threads"].get<int>(), repeats,
              result["median_frames_per_s"].get<double>(), result["target_frames_per_s"].get<double>(),
              result["met"].get<bool>() ? "yes" : "no");
  std::printf("runs (frames/s):");
  for (const auto& r : result["frames_per_s"]) std::printf(" %.1f", r.get<double>());
  std::printf("\n");
}

}  // namespace

int runBenchExplore(const Args& args) {
  const ModelOptionsUse use = studioModelUse();
  CommandLine line = benchExploreCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  const std::string program = line.program();
  if (Status given = checkpointGiven(line); !given) return fail(program, given.error(), kExitUsage);
  auto keys = line.integer("--keys", 3, 2, 1000);
  auto per_key = line.integer("--frames-per-key", 30, 1, 100000);
  auto job = line.integer("--job", 8, 1, 4096);
  auto repeats = line.integer("--repeats", 3, 1, 1000);
  auto warmup = line.integer("--warmup", 1, 0, 1000);
  auto threads = threadsOption(line);
  for (const auto* value : {&keys, &per_key, &job, &repeats, &warmup, &threads})
    if (!*value) return fail(program, value->error(), kExitUsage);
  auto target = line.number("--target", 30, 0, 100000);
  if (!target) return fail(program, target.error(), kExitUsage);
  if (line.has("--threads")) setComputeThreads(static_cast<int>(*threads));

  // Checked here, like every command's --device (a usage error, exit 2), before LatentExplorer opens it.
  if (auto device = deviceOption(line, use); !device) return fail(program, device.error(), kExitUsage);
  auto explorer = LatentExplorer::open(line.value("--checkpoint"), line.value("--device", use.device_default));
  if (!explorer) return fail(program, explorer.error(), kExitFailure);
  WalkPlan plan;  // the preview's defaults: slerp, ease-in-out, looped
  plan.frames_per_key = static_cast<int>(*per_key);
  plan.loop = true;
  for (long long seed = 1; seed <= *keys; ++seed) {
    plan.keys.push_back((*explorer)->latentOfSeed(static_cast<std::uint64_t>(seed)));
    plan.seeds.emplace_back(static_cast<std::uint64_t>(seed));
  }
  auto total = (*explorer)->frameCount(plan);
  if (!total) return fail(program, total.error(), kExitUsage);
  auto page = line.integer("--page", 0, 1, 4096);
  if (!page) return fail(program, page.error(), kExitUsage);
  // The sliders: a frame is the page of seeds 0..N−1 plus t times SeFa's strongest direction,
  // t sweeping −3 to 3 over the walk's frame count, as a slider dragged across.
  std::vector<Latent> seeds;
  Latent direction;
  if (*page > 0) {
    auto found = (*explorer)->findDirections("sefa", 1);
    if (!found) return fail(program, found.error(), kExitFailure);
    direction = found->front().vector;
    for (long long i = 0; i < *page; ++i) seeds.push_back((*explorer)->latentOfSeed(static_cast<std::uint64_t>(i)));
  }
  auto renderPage = [&](std::int64_t frame) -> Status {
    const float t = static_cast<float>(-3.0 + 6.0 * static_cast<double>(frame) / static_cast<double>(*total));
    std::vector<Latent> latents = seeds;
    for (Latent& z : latents)
      for (std::size_t i = 0; i < z.size(); ++i) z[i] += t * direction[i];
    auto images = (*explorer)->render(latents);
    if (!images) return makeError(images.error());
    return {};
  };

  // One pass over the walk, job after job, as the preview's worker goes; the seconds it took.
  auto renderWalk = [&](long long jobs_limit) -> Result<double> {
    const auto start = Clock::now();
    long long jobs = 0;
    if (*page > 0) {
      for (std::int64_t frame = 0; frame < *total && (jobs_limit < 0 || frame < jobs_limit); ++frame)
        if (Status s = renderPage(frame); !s) return makeError(s.error());
      return std::chrono::duration<double>(Clock::now() - start).count();
    }
    for (std::int64_t begin = 0; begin < *total && (jobs_limit < 0 || jobs < jobs_limit); begin += *job, ++jobs) {
      auto frames = (*explorer)->renderFrames(plan, begin, std::min<std::int64_t>(*job, *total - begin));
      if (!frames) return makeError(frames.error());
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  if (*warmup > 0) {
    if (auto warm = renderWalk(*warmup); !warm) return fail(program, warm.error(), kExitFailure);
  }
  std::vector<double> rates;
  std::vector<double> seconds;
  for (long long r = 0; r < *repeats; ++r) {
    auto took = renderWalk(-1);
    if (!took) return fail(program, took.error(), kExitFailure);
    seconds.push_back(*took);
    rates.push_back(static_cast<double>(*total) / std::max(*took, 1e-9));
  }
  const double rate = median(rates);
  const bool met = rate >= *target;

  const std::string name = *page > 0 ? "direction sliders" : "explore preview";
  nlohmann::json result = {{"benchmark", name},
                           {"page", *page},
                           {"checkpoint", line.value("--checkpoint")},
                           {"image_size", (*explorer)->imageSize()},
                           {"nz", (*explorer)->nz()},
                           {"frames", *total},
                           {"job", *job},
                           {"threads", at::get_num_threads()},
                           {"seconds", seconds},
                           {"frames_per_s", rates},
                           {"median_frames_per_s", rate},
                           {"target_frames_per_s", *target},
                           {"met", met}};
  printResult(result, line.has("--json"), *repeats);
  return kExitOk;
}

}  // namespace streetgan::cli
