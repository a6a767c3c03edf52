#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"
#include "core/latent/direction_file.h"
#include "core/latent/latent_math.h"
#include "core/latent/latent_walk.h"
#include "core/latent/walk_exporter.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <system_error>

namespace streetgan::cli {

namespace {

/// Reads "RxC" (e.g. "3x3") into rows and columns of 1 to 16.
Result<std::pair<int, int>> parseGrid(const std::string& text) {
  const auto x = text.find('x');
  const std::string bad = "option '--grid': '" + text + "' is not allowed; allowed: ROWSxCOLUMNS, each 1 to 16 (e.g. 3x3)";
  if (x == std::string::npos || x == 0 || x + 1 >= text.size()) return makeError(bad);
  const std::string rows = text.substr(0, x), columns = text.substr(x + 1);
  if (rows.find_first_not_of("0123456789") != std::string::npos || columns.find_first_not_of("0123456789") != std::string::npos ||
      rows.size() > 2 || columns.size() > 2)
    return makeError(bad);
  const int r = std::stoi(rows), c = std::stoi(columns);
  if (r < 1 || r > 16 || c < 1 || c > 16) return makeError(bad);
  return std::make_pair(r, c);
}

/// The walk settings given on the command line, over `walk` (a loaded file's, or the defaults).
Status applyWalkOptions(const CommandLine& line, LatentWalk& walk) {
  auto frames = line.integer("--frames-per-key", walk.frames_per_key, 1, 100000);
  if (!frames) return makeError(frames.error());
  walk.frames_per_key = static_cast<int>(*frames);
  if (line.has("--mode")) {
    auto mode = parseInterpolation(line.value("--mode"));
    if (!mode) return makeError("option '--mode': " + mode.error());
    walk.mode = *mode;
  }
  if (line.has("--easing")) {
    auto easing = parseEasing(line.value("--easing"));
    if (!easing) return makeError("option '--easing': " + easing.error());
    walk.easing = *easing;
  }
  if (line.has("--loop")) walk.loop = true;
  return {};
}

Result<VideoExportOptions> videoOptions(const CommandLine& line) {
  VideoExportOptions video;
  if (line.has("--format")) {
    auto format = parseExportFormat(line.value("--format"));
    if (!format) return makeError("option '--format': " + format.error());
    video.format = *format;
  } else if (line.has("--out-dir")) {
    video.format = ExportFormat::PngSequence;
  } else {
    auto format = exportFormatForPath(line.value("--out"));
    if (!format) return makeError(format.error() + " (or give --format)");
    video.format = *format;
  }
  if (line.has("--out-dir") && video.format != ExportFormat::PngSequence)
    return makeError("--out-dir writes PNG frames; use --out FILE for " + exportFormatName(video.format));
  if (line.has("--out") && video.format == ExportFormat::PngSequence)
    return makeError("PNG frames go to a folder: use --out-dir DIR");
  auto fps = line.number("--fps", 30, 0, 1000);
  if (!fps) return makeError(fps.error());
  video.fps = *fps;
  auto size = line.integer("--size", 512, 0, 8192);
  if (!size) return makeError(size.error());
  video.long_side = static_cast<int>(*size);
  if (line.has("--filter")) {
    auto filter = parseScaleFilter(line.value("--filter"));
    if (!filter) return makeError("option '--filter': " + filter.error());
    video.scale_filter = *filter;
  }
  auto crf = line.integer("--crf", -1, -1, 63);
  if (!crf) return makeError(crf.error());
  video.crf = static_cast<int>(*crf);
  video.preset = line.value("--preset", video.preset);
  video.encoder = line.value("--encoder");
  video.gif_dither = !line.has("--no-dither");
  if (Status valid = validateExportOptions(video); !valid) return makeError(valid.error());
  return video;
}

/// What the options ask for, checked before the checkpoint is loaded.
struct WalkRequest {
  VideoExportOptions video;
  long long batch = 64;  ///< frames per generator call
  long long keys = 3;    ///< with --grid: keyframes per tile
  long long base = 0;    ///< with --grid: the first tile's first seed
  ModelOptions model;
  std::vector<std::uint64_t> seeds;         ///< --seeds; empty without it
  std::optional<std::pair<int, int>> grid;  ///< --grid's rows and columns
  std::pair<double, double> range{-3, 3};   ///< --range, with --direction
};

// "A,B": two different decimal numbers, each within ±1000 (no spaces, no hexadecimal).
Result<std::pair<double, double>> parseRange(const std::string& text) {
  const std::string bad = "option '--range': '" + text +
                          "' is not allowed; allowed: A,B, two different numbers from -1000 to 1000 (e.g. -3,3)";
  const auto comma = text.find(',');
  if (comma == std::string::npos) return makeError(bad);
  const auto parse = [](const std::string& part) -> std::optional<double> {
    double value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value, std::chars_format::general);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || !std::isfinite(value) ||
        std::fabs(value) > 1000)
      return std::nullopt;
    return value;
  };
  const std::optional<double> a = parse(text.substr(0, comma)), b = parse(text.substr(comma + 1));
  if (!a || !b || *a == *b) return makeError(bad);
  return std::make_pair(*a, *b);
}

// The options read and checked against each other; every error is a usage error.
Result<WalkRequest> walkRequestFrom(const CommandLine& line, const ModelOptionsUse& use) {
  if (Status given = checkpointGiven(line); !given) return makeError(given.error());
  const int sources = line.has("--seeds") + line.has("--walk") + line.has("--grid") + line.has("--direction");
  if (sources != 1) return makeError("give exactly one of --seeds, --walk, --grid and --direction");
  if (line.has("--out") == line.has("--out-dir")) return makeError("give one of --out FILE and --out-dir DIR");
  if (line.has("--grid") && line.has("--save-walk"))
    return makeError("--save-walk saves a single walk; it cannot be used with --grid");
  if (!line.has("--grid") && line.has("--keys")) return makeError("--keys goes with --grid");
  if (!line.has("--grid") && !line.has("--direction") && line.has("--seed"))
    return makeError("--seed goes with --grid or --direction (use --seeds for a single walk)");
  if (!line.has("--direction") && line.has("--range")) return makeError("--range goes with --direction");
  if (line.has("--direction") && line.value("--direction").empty())
    return makeError("option '--direction': give a direction file (<run>/directions/NAME.json)");
  WalkRequest request;
  auto video = videoOptions(line);
  if (!video) return makeError(video.error());
  request.video = *video;
  auto batch = line.integer("--batch", 64, 1, 4096);
  if (!batch) return makeError(batch.error());
  request.batch = *batch;
  auto keys = line.integer("--keys", 3, 2, 1000);
  if (!keys) return makeError(keys.error());
  request.keys = *keys;
  auto base = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  if (!base) return makeError(base.error());
  request.base = *base;
  auto model = modelOptionsFrom(line, use);
  if (!model) return makeError(model.error());
  request.model = *model;
  if (line.has("--seeds")) {
    auto parsed = parseSeedList("--seeds", line.value("--seeds"), kMaxKeyframeSeeds);
    if (!parsed) return makeError(parsed.error());
    request.seeds = *parsed;
    if (request.seeds.size() < 2) return makeError("option '--seeds': a walk needs at least 2 seeds");
  }
  if (line.has("--grid")) {
    auto parsed = parseGrid(line.value("--grid"));
    if (!parsed) return makeError(parsed.error());
    request.grid = *parsed;
  }
  if (line.has("--range")) {
    auto parsed = parseRange(line.value("--range"));
    if (!parsed) return makeError(parsed.error());
    request.range = *parsed;
  }
  return request;
}

// Renders the walk and encodes it to --out or --out-dir, with a progress line on stderr;
// SIGINT or SIGTERM cancels it.
int writeWalk(const CommandLine& line, const WalkRequest& request, Generator& generator, const char* generator_name,
              const GridWalk& grid_walk) {
  const std::string program = line.program();
  const std::string out = line.has("--out") ? line.value("--out") : line.value("--out-dir");
  const std::atomic<bool>& stop = installStopHandlers();
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  WalkRenderOptions render;
  render.batch = request.batch;
  render.batch_statistics = line.has("--train-mode");
  render.device = request.model.device;
  render.padding = request.grid ? 2 : 0;
  const auto progress = [&](const WalkExportProgress& p) {
    std::fprintf(stderr, terminal ? "\rrendered %lld/%lld, encoded %lld/%lld" : "rendered %lld/%lld, encoded %lld/%lld\n",
                 static_cast<long long>(p.rendered), static_cast<long long>(p.total),
                 static_cast<long long>(p.encoded), static_cast<long long>(p.total));
    std::fflush(stderr);
    return !stop.load();
  };
  auto exported = WalkExporter::exportWalk(generator, grid_walk, render, out, request.video, progress);
  if (terminal) std::fputc('\n', stderr);
  if (!exported) {
    if (stop.load()) return fail(program, "export cancelled; nothing was written to " + out, kExitFailure);
    return fail(program, exported.error(), kExitFailure);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "wrote %lld frames of %dx%d (%s, %s, %g fps, generator %s) to %s in %.2f s (%.1f frames/s)\n",
               static_cast<long long>(exported->frames), exported->width, exported->height,
               exportFormatName(request.video.format).c_str(), exported->encoder.c_str(), request.video.fps,
               generator_name, out.c_str(), seconds, exported->frames / seconds);
  return kExitOk;
}

}  // namespace

int runWalk(const Args& args) {
  const ModelOptionsUse use = walkModelUse();
  CommandLine line = walkCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  const std::string program = line.program();
  auto request = walkRequestFrom(line, use);
  if (!request) return fail(program, request.error(), kExitUsage);

  setComputeThreads(request->model.threads);
  auto loaded = loadCheckpointGenerator(request->model.checkpoint, request->model.device, request->model.generator);
  if (!loaded) return fail(program, loaded.error(), kExitFailure);
  const int nz = static_cast<int>(loaded->config.nz);

  LatentWalk walk;
  if (line.has("--walk")) {
    auto read = LatentWalk::load(line.value("--walk"));
    if (!read) return fail(program, read.error(), kExitFailure);
    walk = std::move(*read);
    if (!walk.keyframes.empty() && walk.keyframes.front().latent.size(0) != nz)
      return fail(program, line.value("--walk") + ": its latents have " + std::to_string(walk.keyframes.front().latent.size(0)) +
                  " values but the checkpoint's generator takes " + std::to_string(nz), kExitFailure);
  } else if (!request->seeds.empty()) {
    walk = LatentWalk::fromSeeds(request->seeds, nz);
  } else if (line.has("--direction")) {
    auto direction = DirectionFile::read(line.value("--direction"), nz);
    if (!direction) return fail(program, direction.error(), kExitFailure);
    const auto seed = static_cast<std::uint64_t>(request->base);
    const torch::Tensor start = latentFromSeed(seed, nz);
    const torch::Tensor along = torch::tensor(direction->vector, torch::kFloat32);
    for (double t : {request->range.first, request->range.second})
      walk.keyframes.push_back({start + static_cast<float>(t) * along, std::nullopt});
    walk.mode = Interpolation::Lerp;
  }
  if (Status applied = applyWalkOptions(line, walk); !applied) return fail(program, applied.error(), kExitUsage);
  GridWalk grid_walk;
  if (request->grid) {
    grid_walk = GridWalk::fromSeedBase(request->grid->first, request->grid->second, static_cast<int>(request->keys),
                                       static_cast<std::uint64_t>(request->base), nz, walk);
  } else {
    grid_walk.tiles = {walk};
  }
  if (Status valid = grid_walk.validate(); !valid) return fail(program, valid.error(), kExitUsage);
  if (line.has("--save-walk")) {
    if (Status saved = walk.save(line.value("--save-walk")); !saved) return fail(program, saved.error(), kExitFailure);
  }
  return writeWalk(line, *request, loaded->generator, loaded->generatorName(), grid_walk);
}

}  // namespace streetgan::cli
