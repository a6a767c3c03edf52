#include "app/cli/command_line.h"
#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/stop_signal.h"
#include "core/data/demo_data_generator.h"
#include "core/util/progress_line.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <limits>

namespace streetgan::cli {

int runDemoData(const Args& args) {
  CommandLine line = demoDataCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.has("--out")) return fail(line.program(), "missing --out DIR", kExitUsage);
  DemoDataOptions options;
  options.out_dir = line.value("--out");
  auto cities = line.integer("--cities", options.cities, 1, 8);
  auto sequences = line.integer("--sequences", options.sequences_per_city, 1, 1000);
  auto frames = line.integer("--frames", options.frames_per_sequence, 1, 1000);
  auto seed = line.integer("--seed", 1, 0, std::numeric_limits<long long>::max());
  for (const auto* value : {&cities, &sequences, &frames, &seed})
    if (!*value) return fail(line.program(), value->error(), kExitUsage);
  options.cities = static_cast<int>(*cities);
  options.sequences_per_city = static_cast<int>(*sequences);
  options.frames_per_sequence = static_cast<int>(*frames);
  options.seed = static_cast<std::uint64_t>(*seed);

  const bool progress_lines = line.has("--progress");
  const bool terminal = ::isatty(::fileno(stderr)) == 1;
  // What a failure half-way removes: only what this command made (the generator refuses a folder
  // that already holds train_val/, and that refusal must not delete it).
  std::error_code ec;
  const std::filesystem::path out_dir = options.out_dir, train_val = out_dir / "train_val";
  const bool had_out_dir = std::filesystem::exists(out_dir, ec), had_train_val = std::filesystem::exists(train_val, ec);
  bool mid_line = false;
  // SIGINT or SIGTERM stops after the image being written, and what was written is removed below.
  const std::atomic<bool>& stop = installStopHandlers();
  auto summary = DemoDataGenerator(options).generate([&](int done, int total) {
    if (progress_lines) {
      if (done % 16 == 0 || done == total) printProgressLine(stderr, {kProgressTaskDemoData, done, total, {}});
      return !stop.load();
    }
    // A terminal gets one line redrawn; a log file a plain line every 250 images, no "\r".
    if (terminal && (done % 16 == 0 || done == total)) {
      std::fprintf(stderr, "\rrendered %d/%d images", done, total);
      mid_line = done != total;
      if (done == total) std::fputc('\n', stderr);
    } else if (!terminal && (done % 250 == 0 || done == total)) {
      std::fprintf(stderr, "rendered %d/%d images\n", done, total);
    }
    return !stop.load();
  });
  if (!summary) {
    if (mid_line) std::fputc('\n', stderr);
    std::string removed;
    if (!had_train_val && std::filesystem::exists(train_val, ec) && std::filesystem::remove_all(train_val, ec) > 0 && !ec)
      removed = " (the images written so far were removed)";
    if (!had_out_dir) std::filesystem::remove(out_dir, ec);  // only if this left it empty
    return fail(line.program(), summary.error() + removed, kExitFailure);
  }
  std::printf("wrote %d images in %zu cities to %s\n", summary->images, summary->cities.size(),
              options.out_dir.c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
