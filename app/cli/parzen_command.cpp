#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/config_options.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"

#include "core/data/image_dataset.h"
#include "core/eval/held_out_splits.h"
#include "core/eval/parzen_estimator.h"
#include "core/runs/parzen_evaluation_file.h"
#include "core/eval/parzen_inputs.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/util/progress_line.h"

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

// The run a checkpoint belongs to, for --save.
Result<std::string> runOfParzenCheckpoint(const std::string& checkpoint) {
  const auto run = RunDirectory::ofCheckpoint(checkpoint);
  if (!run) return makeError("option '--save': " + checkpoint + " is not in a run's checkpoints/ folder");
  return run->path();
}

// The validation and test rows: every image of --valid and --test, or one seeded shuffle of the
// held-out split of --dataroot (filters from the options, else from `model`'s config).
Result<HeldOutSplits> loadSplits(const CommandLine& line, const TrainConfig& model, std::uint64_t seed,
                                 std::size_t n_valid, std::size_t n_test) {
  HeldOutSplitsRequest request = HeldOutSplitsRequest::forModel(model);
  request.seed = seed;
  request.n_valid = n_valid;
  request.n_test = n_test;
  request.on_skipped = [](const SkippedFile& skipped) { std::fprintf(stderr, "warning: skipped %s\n", skipped.reason.c_str()); };
  if (line.has("--valid")) {
    request.from_folders = true;
    request.valid_folder = line.value("--valid");
    request.test_folder = line.value("--test");
    request.valid_folder_name = "option '--valid'";
    request.test_folder_name = "option '--test'";
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
    request.filter = filter;
    request.dataroot = line.value("--dataroot", model.dataroot);
  }
  return HeldOutSplits::load(request);
}

// Every checkpoint of a run at one σ (given, or chosen on the latest checkpoint).
int parzenOverRun(const CommandLine& line, std::int64_t n_samples, std::size_t n_valid, std::size_t n_test,
                  std::uint64_t seed, std::int64_t batch, GeneratorChoice choice, ParzenOptions options) {
  const RunDirectory run(line.value("--run"));
  const auto checkpoints = run.checkpoints();
  if (checkpoints.empty())
    return fail(line.program(), run.path() + ": no checkpoint in " + run.checkpointsDir(), kExitFailure);
  auto latest = loadCheckpointGenerator(checkpoints.back(), options.device, choice);
  if (!latest) return fail(line.program(), latest.error(), kExitFailure);
  auto splits = loadSplits(line, latest->config, seed, n_valid, n_test);
  if (!splits) return fail(line.program(), splits.error(), kExitFailure);
  const bool train_mode = line.has("--train-mode");
  ParzenEvaluation result;
  result.kind = ParzenEvaluation::Kind::Run;
  result.sigma_given = line.has("--sigma");
  if (line.has("--sigma")) {
    auto given = parseSigmas(line.value("--sigma"));
    if (!given || given->size() != 1) return fail(line.program(), "option '--sigma': give one positive number", kExitUsage);
    result.sigma = given->front();
  } else {
    const auto samples = generateSampleRows(latest->generator, latest->config.nz, n_samples, seed, batch,
                                            options.device, train_mode);
    auto chosen = ParzenEstimator::evaluate(samples, splits->valid.rows, splits->test.rows, options);
    if (!chosen) return fail(line.program(), chosen.error(), kExitFailure);
    result.sigma = chosen->sigma;
    for (const auto& point : chosen->curve) result.curve.push_back({point.sigma, point.mean_ll});
  }
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {
    if (line.has("--progress"))  // done: the checkpoints scored before this one
      printProgressLine(stderr, {kProgressTaskParzenRun, static_cast<std::int64_t>(i),
                                 static_cast<std::int64_t>(checkpoints.size()), checkpoints[i]});
    else
      std::fprintf(stderr, "checkpoint %zu/%zu: %s\n", i + 1, checkpoints.size(), checkpoints[i].c_str());
    auto loaded = loadCheckpointGenerator(checkpoints[i], options.device, choice);
    if (!loaded) return fail(line.program(), loaded.error(), kExitFailure);
    const auto samples = generateSampleRows(loaded->generator, loaded->config.nz, n_samples, seed, batch,
                                            options.device, train_mode);
    auto scored = ParzenEstimator::evaluateAt(samples, splits->test.rows, result.sigma, options);
    if (!scored) return fail(line.program(), scored.error(), kExitFailure);
    ParzenEvaluation::CheckpointScore row;
    row.checkpoint = {std::filesystem::path(checkpoints[i]).filename().string(), loaded->progress.epoch,
                      loaded->progress.step, loaded->progress.images_seen, loaded->generatorName()};
    row.mean_ll = scored->mean_ll;
    row.stderr_ll = scored->stderr_ll;
    row.n_test = scored->n_test;
    result.checkpoints.push_back(std::move(row));
  }
  if (line.has("--progress"))  // every checkpoint scored
    printProgressLine(stderr, {kProgressTaskParzenRun, static_cast<std::int64_t>(checkpoints.size()),
                               static_cast<std::int64_t>(checkpoints.size()), {}});
  if (line.has("--save")) {
    if (Status saved = ParzenEvaluationFile::write(run.path(), "run", result); !saved)
      return fail(line.program(), saved.error(), kExitFailure);
  }
  if (line.has("--json")) {
    std::printf("%s\n", ParzenEvaluationFile::toJson(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::printf("σ %.4f (%s; generator %s)\n%8s %10s %14s %10s\n", result.sigma,
              line.has("--sigma") ? "given" : "chosen on the latest checkpoint", latest->generatorName(), "epoch", "step",
              "test mean LL", "stderr");
  for (const auto& row : result.checkpoints)
    std::printf("%8lld %10lld %14.2f %10.2f\n", static_cast<long long>(row.checkpoint.epoch),
                static_cast<long long>(row.checkpoint.step), row.mean_ll, row.stderr_ll);
  return kExitOk;
}

/// What the options ask for, checked before anything is loaded.
struct ParzenRequest {
  std::string save_run;  ///< with --save and --checkpoint: the run folder the result goes into
  std::int64_t n_samples = 10000;
  std::size_t n_valid = 1000, n_test = 1000;
  int img_size = 64;  ///< the size of --samples' images (a checkpoint has its own)
  std::uint64_t seed = 0;
  std::int64_t batch = 256;
  int threads = 0;
  GeneratorChoice generator = GeneratorChoice::Default;  ///< --generator
  ParzenOptions options;  ///< the σ grid and the device
};

// The options read and checked against each other; every error is a usage error.
Result<ParzenRequest> parzenRequestFrom(const CommandLine& line, const ModelOptionsUse& use) {
  if (int(line.has("--checkpoint")) + int(line.has("--samples")) + int(line.has("--run")) != 1)
    return makeError("give one of --checkpoint FILE, --samples DIR or --run DIR");
  if (line.has("--checkpoint"))
    if (Status given = checkpointGiven(line); !given) return makeError(given.error());
  if (line.has("--valid") != line.has("--test")) return makeError("--valid and --test go together");
  if (line.has("--sigma") && !line.has("--run"))
    return makeError("--sigma goes with --run (otherwise σ is chosen on the validation split; "
                     "--sigmas sets the grid)");
  if (line.has("--generator") && line.has("--samples"))
    return makeError("--generator goes with --checkpoint or --run (the samples of --samples are images)");
  if (line.has("--save") && line.has("--samples"))
    return makeError("--save goes with --checkpoint or --run (a run folder to save into)");
  ParzenRequest request;
  if (line.has("--save") && line.has("--checkpoint")) {
    auto run = runOfParzenCheckpoint(line.value("--checkpoint"));
    if (!run) return makeError(run.error());
    request.save_run = *run;
  }
  if (line.has("--valid") && line.has("--dataroot"))
    return makeError("give --dataroot DIR (its held-out split) or --valid DIR --test DIR, not both");
  // A checkpoint or a run knows its data set: its held-out split is the default.
  if (!line.has("--valid") && !line.has("--dataroot") && !line.has("--run") && !line.has("--checkpoint"))
    return makeError("give --dataroot DIR (its held-out split) or --valid DIR --test DIR");
  auto n_samples = line.integer("--n-samples", 10000, 1, 10000000);
  auto n_valid = line.integer("--n-valid", 1000, 1, 10000000);
  auto n_test = line.integer("--n-test", 1000, 1, 10000000);
  auto img_size = line.integer("--img-size", 64, 1, 4096);
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  auto batch = line.integer("--batch", 256, 1, 65536);
  auto threads = threadsOption(line);
  for (const auto* value : {&n_samples, &n_valid, &n_test, &img_size, &seed, &batch, &threads})
    if (!*value) return makeError(value->error());
  request.n_samples = *n_samples;
  request.n_valid = static_cast<std::size_t>(*n_valid);
  request.n_test = static_cast<std::size_t>(*n_test);
  request.img_size = static_cast<int>(*img_size);
  request.seed = static_cast<std::uint64_t>(*seed);
  request.batch = *batch;
  request.threads = static_cast<int>(*threads);
  if (line.has("--sigmas")) {
    auto sigmas = parseSigmas(line.value("--sigmas"));
    if (!sigmas) return makeError(sigmas.error());
    request.options.sigmas = *sigmas;
  }
  auto device = deviceOption(line, use);
  if (!device) return makeError(device.error());
  request.options.device = *device;
  auto generator = generatorOption(line);
  if (!generator) return makeError(generator.error());
  request.generator = *generator;
  return request;
}

/// The samples to score, and what the held-out images must look like.
struct ParzenSamples {
  torch::Tensor rows;
  /// What the images must look like, and which held-out split: the checkpoint's config, unless
  /// filter options say otherwise (loadSplits); without a checkpoint the defaults at --img-size.
  TrainConfig model_config;
  TrainingProgress checkpoint_progress;  ///< with --checkpoint
  std::string generator;                 ///< with --checkpoint: "ema" or "raw"
  double seconds = 0;                    ///< to generate or read them
};

// Generated by --checkpoint's generator, or the images of --samples. Errors are runtime failures.
Result<ParzenSamples> samplesToScore(const CommandLine& line, const ParzenRequest& request) {
  ParzenSamples samples;
  samples.model_config.img_size = request.img_size;
  const auto start = Clock::now();
  if (line.has("--checkpoint")) {
    auto loaded = loadCheckpointGenerator(line.value("--checkpoint"), request.options.device, request.generator);
    if (!loaded) return makeError(loaded.error());
    samples.generator = loaded->generatorName();
    samples.model_config = loaded->config;
    samples.checkpoint_progress = loaded->progress;
    samples.rows = generateSampleRows(loaded->generator, loaded->config.nz, request.n_samples, request.seed,
                                      request.batch, request.options.device, line.has("--train-mode"));
  } else {
    auto paths = imagesIn(line.value("--samples"), "--samples");
    if (!paths) return makeError(paths.error());
    const TrainConfig& model = samples.model_config;
    auto rows = rowsOf(*paths, model.img_size, model.nc, model.augment.crop_scale, "--samples");
    if (!rows) return makeError(rows.error());
    samples.rows = rows->rows;
  }
  samples.seconds = secondsSince(start);
  return samples;
}

// The result for one set of samples: as JSON (--json) and into the run folder (--save), or as
// the σ curve and the estimate for a person.
int reportParzen(const CommandLine& line, const ParzenRequest& request, const ParzenSamples& samples,
                 const ParzenResult& result, double estimator_seconds) {
  if (line.has("--json") || line.has("--save")) {
    ParzenEvaluation out;
    out.kind = ParzenEvaluation::Kind::Checkpoint;
    out.sigma = result.sigma;
    out.mean_ll = result.mean_ll;
    out.stderr_ll = result.stderr_ll;
    out.n_test = result.n_test;
    out.n_valid = result.n_valid;
    out.n_samples = result.n_samples;
    out.dimensions = samples.rows.size(1);
    out.samples_seconds = samples.seconds;
    out.estimator_seconds = estimator_seconds;
    for (const auto& point : result.curve) out.curve.push_back({point.sigma, point.mean_ll});
    if (line.has("--checkpoint"))
      out.checkpoint = ParzenEvaluation::Checkpoint{std::filesystem::path(line.value("--checkpoint")).filename().string(),
                                                    samples.checkpoint_progress.epoch, samples.checkpoint_progress.step,
                                                    samples.checkpoint_progress.images_seen, samples.generator};
    if (!request.save_run.empty()) {
      const std::string name = std::filesystem::path(line.value("--checkpoint")).stem().string();
      if (Status saved = ParzenEvaluationFile::write(request.save_run, name, out); !saved)
        return fail(line.program(), saved.error(), kExitFailure);
    }
    if (line.has("--json")) {
      std::printf("%s\n", ParzenEvaluationFile::toJson(out).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return kExitOk;
    }
  }
  std::printf("%10s %16s\n", "sigma", "valid mean LL");
  for (const auto& point : result.curve)
    std::printf("%10.4f %16.2f%s\n", point.sigma, point.mean_ll, point.sigma == result.sigma ? "  <- chosen" : "");
  std::printf("\nParzen log-likelihood (test): %.2f ± %.2f (σ %.4f; %lld test, %lld validation images; "
              "%lld samples, d %lld)\n",
              result.mean_ll, result.stderr_ll, result.sigma, static_cast<long long>(result.n_test),
              static_cast<long long>(result.n_valid), static_cast<long long>(result.n_samples),
              static_cast<long long>(samples.rows.size(1)));
  if (!samples.generator.empty()) std::printf("generator: %s\n", samples.generator.c_str());
  std::printf("time: samples %.1f s, estimator %.1f s\n", samples.seconds, estimator_seconds);
  return kExitOk;
}

}  // namespace

int runParzen(const Args& args) {
  const ModelOptionsUse use = scoringModelUse();
  CommandLine line = parzenCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  auto request = parzenRequestFrom(line, use);
  if (!request) return fail(line.program(), request.error(), kExitUsage);
  ParzenOptions options = request->options;
  setComputeThreads(request->threads);
  if (line.has("--run"))
    return parzenOverRun(line, request->n_samples, request->n_valid, request->n_test, request->seed, request->batch,
                         request->generator, options);

  auto samples = samplesToScore(line, *request);
  if (!samples) return fail(line.program(), samples.error(), kExitFailure);

  auto splits = loadSplits(line, samples->model_config, request->seed, request->n_valid, request->n_test);
  if (!splits) return fail(line.program(), splits.error(), splits.error().rfind("no held-out split", 0) == 0 ? kExitUsage : kExitFailure);
  const auto& valid = splits->valid;
  const auto& test = splits->test;

  const auto& stop = installStopHandlers();
  int last_percent = -1;
  const bool interactive = !line.has("--json") && !line.has("--progress");
  const bool progress_lines = line.has("--progress");
  options.progress = [&](double fraction) {
    const int percent = static_cast<int>(fraction * 100);
    if (interactive && percent != last_percent) std::fprintf(stderr, "\rParzen estimate: %3d%%", percent);
    if (progress_lines && percent != last_percent) printProgressLine(stderr, {kProgressTaskParzen, percent, 100, {}});
    last_percent = percent;
    return !stop.load();
  };
  const auto estimator_start = Clock::now();
  auto result = ParzenEstimator::evaluate(samples->rows, valid.rows, test.rows, options);
  const double estimator_seconds = secondsSince(estimator_start);
  if (interactive) std::fputc('\n', stderr);
  if (!result) return fail(line.program(), result.error(), kExitFailure);
  return reportParzen(line, *request, *samples, *result, estimator_seconds);
}

}  // namespace streetgan::cli
