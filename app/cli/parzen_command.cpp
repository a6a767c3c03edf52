#include "app/cli/commands.h"
#include "app/cli/config_options.h"
#include "app/cli/stop_signal.h"

#include "core/data/image_dataset.h"
#include "core/eval/parzen_estimator.h"
#include "core/eval/parzen_inputs.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/util/atomic_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <limits>

namespace streetgan::cli {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Result<std::vector<double>> parseSigmas(const std::string& text) {
  std::vector<double> sigmas;
  for (const std::string& item : splitCommaList(text)) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(value > 0) || !std::isfinite(value))
      return makeError("option '--sigmas': \"" + item + "\" is not a positive number");
    sigmas.push_back(value);
  }
  return sigmas;
}

Result<std::vector<std::string>> imagesIn(const std::string& folder, const char* option) {
  auto dataset = ImageDataset::open(folder);
  if (!dataset) return makeError(std::string("option '") + option + "': " + dataset.error());
  std::vector<std::string> paths;
  for (const auto& e : dataset->entries()) paths.push_back(e.path);
  return paths;
}

Result<ImageRows> rowsOf(const std::vector<std::string>& paths, int size, int channels, double crop, const char* what) {
  auto rows = loadImageRows(paths, size, channels, crop);
  if (!rows) return makeError(std::string(what) + ": " + rows.error());
  for (const auto& skipped : rows->skipped) std::fprintf(stderr, "warning: skipped %s\n", skipped.reason.c_str());
  return rows;
}

// --save: the result goes into the run directory, evaluations/parzen-<name>.json, written atomically
// (the studio's Runs and Evaluate tabs read it back).
Status saveEvaluation(const std::string& run_dir, const std::string& name, json result) {
  result["v"] = 1;
  result["time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string folder = run_dir + "/evaluations";
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return makeError("cannot create " + folder + ": " + error.message());
  return writeFileAtomically(folder + "/parzen-" + name + ".json", result.dump(2) + "\n");
}

// The run a checkpoint belongs to: <run>/checkpoints/<file>.
Result<std::string> runOfCheckpoint(const std::string& checkpoint) {
  const std::filesystem::path path = std::filesystem::absolute(checkpoint);
  if (path.parent_path().filename() != "checkpoints")
    return makeError("option '--save': " + checkpoint + " is not in a run's checkpoints/ folder");
  return path.parent_path().parent_path().string();
}

struct Splits {
  ImageRows valid, test;
};

// The validation and test rows: every image of --valid and --test, or one seeded shuffle of the
// held-out split of --dataroot (filters from the options, else from `model`'s config).
Result<Splits> loadSplits(const CommandLine& line, const TrainConfig& model, std::uint64_t seed,
                          std::size_t n_valid, std::size_t n_test) {
  std::vector<std::string> valid_paths, test_paths;
  if (line.has("--valid")) {
    auto valid = imagesIn(line.value("--valid"), "--valid");
    if (!valid) return makeError(valid.error());
    auto test = imagesIn(line.value("--test"), "--test");
    if (!test) return makeError(test.error());
    valid_paths = *valid, test_paths = *test;
  } else {
    DatasetFilter filter = model.data.filter;
    bool given = false;
    for (const auto& spec : dataFilterOptionSpecs()) given = given || line.has(spec.name);
    if (given) {
      auto parsed = configFromOptions(line);
      if (!parsed) return makeError(parsed.error());
      filter = parsed->data.filter;
    }
    if (!filter.hasHoldout())
      return makeError("no held-out split: pass --holdout-cities or --holdout-fraction (the "
                       "checkpoint's config has none), or --valid DIR --test DIR");
    const std::string root = line.value("--dataroot", model.dataroot);
    auto held = ImageDataset::open(root, filter, DatasetPart::Holdout);
    if (!held) return makeError(held.error());
    if (held->size() < 2)
      return makeError(root + ": the held-out split has " + std::to_string(held->size()) +
                       " image(s); it needs at least 2 (validation and test)");
    // Validation and test come from one seeded shuffle of the held-out images and never overlap.
    const std::size_t valid_count = std::min(n_valid, held->size() / 2);
    valid_paths = shuffledPaths(*held, seed, 0, valid_count);
    test_paths = shuffledPaths(*held, seed, valid_count, n_test);
  }
  auto valid = rowsOf(valid_paths, model.img_size, model.nc, model.augment.crop_scale, "validation split");
  if (!valid) return makeError(valid.error());
  auto test = rowsOf(test_paths, model.img_size, model.nc, model.augment.crop_scale, "test split");
  if (!test) return makeError(test.error());
  return Splits{std::move(*valid), std::move(*test)};
}

// Every checkpoint of a run at one σ (given, or chosen on the latest checkpoint).
int parzenOverRun(const CommandLine& line, std::int64_t n_samples, std::size_t n_valid, std::size_t n_test,
                  std::uint64_t seed, std::int64_t batch, ParzenOptions options) {
  const RunDirectory run(line.value("--run"));
  const auto checkpoints = run.checkpoints();
  if (checkpoints.empty())
    return fail(line.program(), run.path() + ": no checkpoint in " + run.checkpointsDir(), kExitFailure);
  auto latest = loadCheckpointGenerator(checkpoints.back(), options.device);
  if (!latest) return fail(line.program(), latest.error(), kExitFailure);
  auto splits = loadSplits(line, latest->config, seed, n_valid, n_test);
  if (!splits) return fail(line.program(), splits.error(), kExitFailure);
  const bool train_mode = line.has("--train-mode");
  double sigma = 0;
  json curve = json::array();
  if (line.has("--sigma")) {
    auto given = parseSigmas(line.value("--sigma"));
    if (!given || given->size() != 1) return fail(line.program(), "option '--sigma': give one positive number", kExitUsage);
    sigma = given->front();
  } else {
    const auto samples = generateSampleRows(latest->generator, latest->config.nz, n_samples, seed, batch,
                                            options.device, train_mode);
    auto chosen = ParzenEstimator::evaluate(samples, splits->valid.rows, splits->test.rows, options);
    if (!chosen) return fail(line.program(), chosen.error(), kExitFailure);
    sigma = chosen->sigma;
    for (const auto& point : chosen->curve) curve.push_back({{"sigma", point.sigma}, {"mean_ll", point.mean_ll}});
  }
  json rows = json::array();
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {
    std::fprintf(stderr, "checkpoint %zu/%zu: %s\n", i + 1, checkpoints.size(), checkpoints[i].c_str());
    auto loaded = loadCheckpointGenerator(checkpoints[i], options.device);
    if (!loaded) return fail(line.program(), loaded.error(), kExitFailure);
    const auto samples = generateSampleRows(loaded->generator, loaded->config.nz, n_samples, seed, batch,
                                            options.device, train_mode);
    auto scored = ParzenEstimator::evaluateAt(samples, splits->test.rows, sigma, options);
    if (!scored) return fail(line.program(), scored.error(), kExitFailure);
    rows.push_back({{"checkpoint", std::filesystem::path(checkpoints[i]).filename().string()},
                    {"epoch", loaded->progress.epoch}, {"step", loaded->progress.step},
                    {"images_seen", loaded->progress.images_seen}, {"mean_ll", scored->mean_ll},
                    {"stderr", scored->stderr_ll}, {"n_test", scored->n_test}});
  }
  const json result = {{"kind", "run"}, {"sigma", sigma}, {"sigma_given", line.has("--sigma")}, {"curve", curve}, {"checkpoints", rows}};
  if (line.has("--save")) {
    if (Status saved = saveEvaluation(run.path(), "run", result); !saved)
      return fail(line.program(), saved.error(), kExitFailure);
  }
  if (line.has("--json")) {
    std::printf("%s\n", result.dump(2).c_str());
    return kExitOk;
  }
  std::printf("σ %.4f (%s)\n%8s %10s %14s %10s\n", sigma, line.has("--sigma") ? "given" : "chosen on the latest checkpoint",
              "epoch", "step", "test mean LL", "stderr");
  for (const auto& row : rows)
    std::printf("%8lld %10lld %14.2f %10.2f\n", row["epoch"].get<long long>(), row["step"].get<long long>(),
                row["mean_ll"].get<double>(), row["stderr"].get<double>());
  return kExitOk;
}

}  // namespace

int runParzen(const Args& args) {
  auto specs = std::vector<OptionSpec>{
      {"--checkpoint", "FILE", "score samples of this checkpoint's generator"},
      {"--run", "DIR", "score every checkpoint of a run at one σ (the curve over epochs)"},
      {"--sigma", "S", "with --run: this σ instead of the one chosen on the latest checkpoint"},
      {"--samples", "DIR", "score the images in DIR as the samples instead"},
      {"--dataroot", "DIR", "held-out split of this data set (default: the checkpoint's own data set)"},
      {"--valid", "DIR", "every image in DIR is the validation split"},
      {"--test", "DIR", "every image in DIR is the test split"},
      {"--n-samples", "N", "generated samples (default 10000)"},
      {"--n-valid", "N", "validation images from the held-out split (default 1000)"},
      {"--n-test", "N", "test images from the held-out split (default 1000)"},
      {"--sigmas", "A,B,..", "the σ grid (default logspace(-1, 0, 10))"},
      {"--img-size", "S", "image size without a checkpoint (default 64)"},
      {"--seed", "N", "seed of the sample noise and of the split draw (default 0)"},
      {"--batch", "B", "generator batch size (default 256)"},
      {"--train-mode", "", "sample with BatchNorm batch statistics, as the original tool did"},
      {"--device", "DEV", "auto, cpu, cuda, cuda:N or hpu (default auto)"},
      {"--threads", "N", "CPU threads (0 = all cores)"},
      {"--json", "", "print one JSON object"},
      {"--save", "", "also write the result into the run folder (evaluations/parzen-*.json)"},
      {"--progress", "", "with --json: progress lines on stderr"}};
  for (const auto& spec : dataFilterOptionSpecs()) specs.push_back(spec);
  CommandLine line("parzen", "(--checkpoint FILE | --samples DIR | --run DIR) [--dataroot DIR | --valid DIR --test DIR]",
                   "Parzen-window log-likelihood of held-out images under generated samples\n"
                   "(Goodfellow et al.): σ is chosen on the validation split, the mean and its\n"
                   "standard error are reported on the test split.",
                   specs);
  if (auto done = line.parseOrExit(args)) return *done;
  if (int(line.has("--checkpoint")) + int(line.has("--samples")) + int(line.has("--run")) != 1)
    return fail(line.program(), "give one of --checkpoint FILE, --samples DIR or --run DIR", kExitUsage);
  if (line.has("--valid") != line.has("--test"))
    return fail(line.program(), "--valid and --test go together", kExitUsage);
  if (line.has("--sigma") && !line.has("--run"))
    return fail(line.program(), "--sigma goes with --run (otherwise σ is chosen on the validation split; "
                "--sigmas sets the grid)", kExitUsage);
  if (line.has("--save") && line.has("--samples"))
    return fail(line.program(), "--save goes with --checkpoint or --run (a run folder to save into)", kExitUsage);
  std::string save_run;
  if (line.has("--save") && line.has("--checkpoint")) {
    auto run = runOfCheckpoint(line.value("--checkpoint"));
    if (!run) return fail(line.program(), run.error(), kExitUsage);
    save_run = *run;
  }
  if (line.has("--valid") && line.has("--dataroot"))
    return fail(line.program(), "give --dataroot DIR (its held-out split) or --valid DIR --test DIR, not both", kExitUsage);
  // A checkpoint or a run knows its data set: its held-out split is the default.
  if (!line.has("--valid") && !line.has("--dataroot") && !line.has("--run") && !line.has("--checkpoint"))
    return fail(line.program(), "give --dataroot DIR (its held-out split) or --valid DIR --test DIR", kExitUsage);
  auto n_samples = line.integer("--n-samples", 10000, 1, 10000000);
  auto n_valid = line.integer("--n-valid", 1000, 1, 10000000);
  auto n_test = line.integer("--n-test", 1000, 1, 10000000);
  auto img_size = line.integer("--img-size", 64, 1, 4096);
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  auto batch = line.integer("--batch", 256, 1, 65536);
  auto threads = line.integer("--threads", 0, 0, 1024);
  for (const auto* value : {&n_samples, &n_valid, &n_test, &img_size, &seed, &batch, &threads})
    if (!*value) return fail(line.program(), value->error(), kExitUsage);
  ParzenOptions options;
  if (line.has("--sigmas")) {
    auto sigmas = parseSigmas(line.value("--sigmas"));
    if (!sigmas) return fail(line.program(), sigmas.error(), kExitUsage);
    options.sigmas = *sigmas;
  }
  auto device = resolveDevice(line.value("--device", "auto"));
  if (!device) return fail(line.program(), "option '--device': " + device.error(), kExitUsage);
  options.device = *device;
  setComputeThreads(static_cast<int>(*threads));
  if (line.has("--run"))
    return parzenOverRun(line, *n_samples, static_cast<std::size_t>(*n_valid), static_cast<std::size_t>(*n_test),
                         static_cast<std::uint64_t>(*seed), *batch, options);

  // What the images must look like, and which held-out split: the checkpoint's config, unless
  // filter options say otherwise.
  TrainConfig model_config;
  TrainingProgress checkpoint_progress;
  model_config.img_size = static_cast<int>(*img_size);
  const auto samples_start = Clock::now();
  torch::Tensor samples;
  if (line.has("--checkpoint")) {
    auto loaded = loadCheckpointGenerator(line.value("--checkpoint"), *device);
    if (!loaded) return fail(line.program(), loaded.error(), kExitFailure);
    model_config = loaded->config;
    checkpoint_progress = loaded->progress;
    samples = generateSampleRows(loaded->generator, loaded->config.nz, *n_samples, static_cast<std::uint64_t>(*seed),
                                 *batch, *device, line.has("--train-mode"));
  } else {
    auto paths = imagesIn(line.value("--samples"), "--samples");
    if (!paths) return fail(line.program(), paths.error(), kExitFailure);
    auto rows = rowsOf(*paths, model_config.img_size, model_config.nc, model_config.augment.crop_scale, "--samples");
    if (!rows) return fail(line.program(), rows.error(), kExitFailure);
    samples = rows->rows;
  }
  const double samples_seconds = secondsSince(samples_start);

  auto splits = loadSplits(line, model_config, static_cast<std::uint64_t>(*seed), static_cast<std::size_t>(*n_valid),
                           static_cast<std::size_t>(*n_test));
  if (!splits) return fail(line.program(), splits.error(), splits.error().rfind("no held-out split", 0) == 0 ? kExitUsage : kExitFailure);
  const auto& valid = splits->valid;
  const auto& test = splits->test;

  const auto& stop = installStopHandlers();
  int last_percent = -1;
  const bool interactive = !line.has("--json");
  const bool progress_lines = line.has("--json") && line.has("--progress");
  options.progress = [&](double fraction) {
    const int percent = static_cast<int>(fraction * 100);
    if (interactive && percent != last_percent) std::fprintf(stderr, "\rParzen estimate: %3d%%", percent);
    if (progress_lines && percent != last_percent) std::fprintf(stderr, "Parzen estimate: %d%%\n", percent);
    last_percent = percent;
    return !stop.load();
  };
  const auto estimator_start = Clock::now();
  auto result = ParzenEstimator::evaluate(samples, valid.rows, test.rows, options);
  const double estimator_seconds = secondsSince(estimator_start);
  if (interactive) std::fputc('\n', stderr);
  if (!result) return fail(line.program(), result.error(), kExitFailure);

  if (line.has("--json") || line.has("--save")) {
    json out = {{"kind", "checkpoint"}, {"sigma", result->sigma}, {"mean_ll", result->mean_ll}, {"stderr", result->stderr_ll},
                {"n_test", result->n_test}, {"n_valid", result->n_valid}, {"n_samples", result->n_samples},
                {"dimensions", samples.size(1)}, {"curve", json::array()},
                {"seconds", {{"samples", samples_seconds}, {"estimator", estimator_seconds}}}};
    for (const auto& point : result->curve) out["curve"].push_back({{"sigma", point.sigma}, {"mean_ll", point.mean_ll}});
    if (line.has("--checkpoint")) {
      out["checkpoint"] = std::filesystem::path(line.value("--checkpoint")).filename().string();
      out["epoch"] = checkpoint_progress.epoch;
      out["step"] = checkpoint_progress.step;
      out["images_seen"] = checkpoint_progress.images_seen;
    }
    if (!save_run.empty()) {
      const std::string name = std::filesystem::path(line.value("--checkpoint")).stem().string();
      if (Status saved = saveEvaluation(save_run, name, out); !saved) return fail(line.program(), saved.error(), kExitFailure);
    }
    if (line.has("--json")) {
      std::printf("%s\n", out.dump(2).c_str());
      return kExitOk;
    }
  }
  std::printf("%10s %16s\n", "sigma", "valid mean LL");
  for (const auto& point : result->curve)
    std::printf("%10.4f %16.2f%s\n", point.sigma, point.mean_ll, point.sigma == result->sigma ? "  <- chosen" : "");
  std::printf("\nParzen log-likelihood (test): %.2f ± %.2f (σ %.4f; %lld test, %lld validation images; "
              "%lld samples, d %lld)\n",
              result->mean_ll, result->stderr_ll, result->sigma, static_cast<long long>(result->n_test),
              static_cast<long long>(result->n_valid), static_cast<long long>(result->n_samples),
              static_cast<long long>(samples.size(1)));
  std::printf("time: samples %.1f s, estimator %.1f s\n", samples_seconds, estimator_seconds);
  return kExitOk;
}

}  // namespace streetgan::cli
