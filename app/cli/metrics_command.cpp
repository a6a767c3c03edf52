// `streetgan metrics`: the quality metric suite (core/eval/quality_suite.h) for one checkpoint,
// every checkpoint of a run, or a folder of sample images, against training images.
#include "app/cli/commands.h"
#include "app/cli/model_command_lines.h"
#include "app/cli/command_line.h"
#include "app/cli/model_options.h"
#include "app/cli/stop_signal.h"

#include "core/data/image_cache.h"
#include "core/data/image_dataset.h"
#include "core/eval/network_features.h"
#include "core/eval/parzen_inputs.h"
#include "core/runs/quality_evaluation_file.h"
#include "core/eval/quality_alarms.h"
#include "core/eval/quality_suite.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/util/progress_line.h"
#include "core/util/own_folder.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

namespace streetgan::cli {
namespace {

using json = nlohmann::json;

struct MetricsRequest {
  std::int64_t n_samples = 10000, n_train = 10000;
  int img_size = 64;
  std::uint64_t seed = 0;
  std::int64_t batch = 256;
  int threads = 0;
  int features_size = 299;
  FeaturesWorkerOptions features_worker;
  c10::Device device = c10::kCPU;
  GeneratorChoice generator = GeneratorChoice::Default;  ///< --generator
  QualitySuiteOptions suite;
};

Result<MetricsRequest> metricsRequestFrom(const CommandLine& line, const ModelOptionsUse& use) {
  if (int(line.has("--checkpoint")) + int(line.has("--samples")) + int(line.has("--run")) != 1)
    return makeError("give one of --checkpoint FILE, --run DIR or --samples DIR");
  if (line.has("--checkpoint"))
    if (Status given = checkpointGiven(line); !given) return makeError(given.error());
  if (line.has("--every-checkpoint") && !line.has("--run")) return makeError("--every-checkpoint goes with --run DIR");
  if (line.has("--generator") && line.has("--samples"))
    return makeError("--generator goes with --checkpoint or --run (the samples of --samples are images)");
  if (line.has("--save") && line.has("--samples"))
    return makeError("--save goes with --checkpoint or --run (a run folder to save into)");
  if (line.has("--samples") && !line.has("--dataroot") && !line.has("--cache"))
    return makeError("--samples needs --dataroot DIR or --cache FILE (the training images to compare with)");
  if (line.has("--dataroot") && line.has("--cache")) return makeError("give --dataroot DIR or --cache FILE, not both");
  for (const char* option : {"--features-size", "--features-memory", "--features-timeout"})
    if (line.has(option) && !line.has("--features")) return makeError(std::string(option) + " goes with --features FILE.pt");
  MetricsRequest request;
  auto n = line.integer("--n", 10000, 2, 10000000);
  auto n_train = line.integer("--n-train", 10000, 2, 10000000);
  auto img_size = line.integer("--img-size", 64, 16, 4096);
  auto seed = line.integer("--seed", 0, 0, std::numeric_limits<long long>::max());
  auto batch = line.integer("--batch", 256, 1, 65536);
  auto features_size = line.integer("--features-size", 299, 8, 4096);
  const FeaturesWorkerOptions worker_defaults;
  auto features_memory = line.integer("--features-memory", worker_defaults.memory_bytes >> 30, 1, 4096);
  auto features_timeout = line.integer("--features-timeout", worker_defaults.batch_timeout.count(), 1, 7 * 24 * 3600);
  auto bins = line.integer("--bins", 100, 2, 10000);
  auto threads = threadsOption(line);
  for (const auto* value : {&n, &n_train, &img_size, &seed, &batch, &features_size, &features_memory, &features_timeout, &bins, &threads})
    if (!*value) return makeError(value->error());
  request.n_samples = *n;
  request.n_train = *n_train;
  request.img_size = static_cast<int>(*img_size);
  request.seed = static_cast<std::uint64_t>(*seed);
  request.batch = *batch;
  request.threads = static_cast<int>(*threads);
  request.features_size = static_cast<int>(*features_size);
  // The worker is this program (`streetgan features-worker`), whatever name it was started by.
  request.features_worker.command = {"/proc/self/exe", "features-worker"};
  request.features_worker.memory_bytes = *features_memory << 30;
  request.features_worker.batch_timeout = std::chrono::seconds(*features_timeout);
  request.features_worker.threads = request.threads;
  if (line.has("--only")) {
    auto metrics = QualitySuiteOptions::parseMetricList(line.value("--only"));
    if (!metrics) return makeError("option '--only': " + metrics.error());
    request.suite.metrics = *metrics;
  }
  request.suite.seed = request.seed;
  request.suite.ndb.bins = static_cast<int>(*bins);
  auto device = deviceOption(line, use);
  if (!device) return makeError(device.error());
  request.device = *device;
  auto generator = generatorOption(line);
  if (!generator) return makeError(generator.error());
  request.generator = *generator;
  return request;
}

// Images of a folder, or a seeded draw of `count` of them, at `size`, as (n, 3, size, size).
// Files that could not be read are warned about on stderr and, when `skipped` is given, kept there.
Result<torch::Tensor> imagesOf(const ImageDataset& dataset, const char* what, std::optional<std::size_t> count,
                               std::uint64_t seed, int size, double crop_scale,
                               std::vector<SkippedFile>* skipped_files = nullptr) {
  std::vector<std::string> paths;
  if (count) paths = shuffledPaths(dataset, seed, 0, *count);
  else
    for (const auto& entry : dataset.entries()) paths.push_back(entry.path);
  auto rows = loadImageRows(paths, size, 3, crop_scale);
  if (!rows) return makeError(std::string(what) + ": " + rows.error());
  for (const auto& skipped : rows->skipped) std::fprintf(stderr, "warning: skipped %s\n", skipped.reason.c_str());
  if (skipped_files) *skipped_files = rows->skipped;
  return rows->rows.view({rows->rows.size(0), 3, size, size});
}

Result<torch::Tensor> imagesOf(const std::string& folder, const char* what, std::optional<std::size_t> count,
                               std::uint64_t seed, int size, double crop_scale,
                               std::vector<SkippedFile>* skipped_files = nullptr) {
  auto dataset = ImageDataset::open(folder);
  if (!dataset) return makeError(std::string(what) + ": " + dataset.error());
  return imagesOf(*dataset, what, count, seed, size, crop_scale, skipped_files);
}

// --save's folder, made and checked for writing before the work rather than after it.
Status evaluationsWritable(const std::string& run_dir) {
  const std::string folder = RunDirectory(run_dir).evaluationsDir();
  if (Status made = makeOwnFolder(folder); !made) return makeError("option '--save': " + made.error());
  if (access(folder.c_str(), W_OK) != 0) return makeError("option '--save': cannot write into " + folder);
  return {};
}

void printEvaluation(const QualityEvaluation& evaluation) {
  if (evaluation.checkpoint)
    std::printf("%s (epoch %lld, step %lld, generator %s)\n", evaluation.checkpoint->file.c_str(),
                static_cast<long long>(evaluation.checkpoint->epoch), static_cast<long long>(evaluation.checkpoint->step),
                evaluation.checkpoint->generator.c_str());
  std::printf("%lld samples against %lld training images of %d px; features: %s\n",
              static_cast<long long>(evaluation.n_samples), static_cast<long long>(evaluation.n_train),
              evaluation.image_size,
              evaluation.feature_space.empty() ? "none (no FID, KID or precision/recall)" : evaluation.feature_space.c_str());
  for (const auto& [name, value] : evaluation.metrics) std::printf("  %-18s %12.6g\n", name.c_str(), value);
  for (const auto& note : evaluation.notes) std::printf("note: %s\n", note.c_str());
  for (const auto& alarm : evaluation.alarms) std::printf("alarm (%s): %s\n", alarm.kind.c_str(), alarm.message.c_str());
}

class MetricsCommand {
public:
  MetricsCommand(const CommandLine& line, MetricsRequest request)
      : line_(line),
        request_(std::move(request)),
        terminal_(isatty(fileno(stderr)) != 0 && !line.has("--progress") && !line.has("--json")) {}

  int run() {
    setComputeThreads(request_.threads);
    const auto& metrics = request_.suite.metrics;
    const bool feature_metrics = metrics.count("fid") || metrics.count("kid") || metrics.count("prdc");
    const auto& stop = installStopHandlers();
    if (line_.has("--features") && feature_metrics) {
      auto network = NetworkFeatures::load(line_.value("--features"), request_.features_size, request_.device,
                                           request_.features_worker, [&stop] { return !stop.load(); });
      if (!network)
        return fail(line_.program(), stop.load() ? network.error() : "option '--features': " + network.error(), kExitFailure);
      network_ = std::move(*network);
      request_.suite.network = &*network_;
    }
    request_.suite.should_stop = [&] { return stop.load(); };
    request_.suite.progress = [&](const std::string& stage, int done, int total) {
      if (line_.has("--progress")) printProgressLine(stderr, {kProgressTaskMetrics, done, total, stage});
      else if (terminal_ && done < total)
        std::fprintf(stderr, "\r\033[K%s (%d of %d)", stage.c_str(), done + 1, total);
      return !stop.load();
    };
    if (line_.has("--samples")) return scoreFolder();
    std::vector<std::string> checkpoints;
    std::string run_dir;
    if (line_.has("--run")) {
      const RunDirectory run(line_.value("--run"));
      checkpoints = run.checkpoints();
      if (checkpoints.empty()) return fail(line_.program(), run.path() + ": no checkpoint in " + run.checkpointsDir(), kExitFailure);
      if (!line_.has("--every-checkpoint")) checkpoints = {checkpoints.back()};
      run_dir = run.path();
      if (line_.has("--save"))
        if (Status writable = evaluationsWritable(run_dir); !writable) return fail(line_.program(), writable.error(), kExitFailure);
    } else {
      checkpoints = {line_.value("--checkpoint")};
      if (auto run = RunDirectory::ofCheckpoint(checkpoints.front()))
        run_dir = run->path();
      else if (line_.has("--save"))
        return fail(line_.program(), "option '--save': " + checkpoints.front() + " is not in a run's checkpoints/ folder",
                    kExitUsage);
      if (line_.has("--save"))
        if (Status writable = evaluationsWritable(run_dir); !writable) return fail(line_.program(), writable.error(), kExitFailure);
    }
    json all = json::array();
    for (const std::string& checkpoint : checkpoints) {
      auto evaluation = scoreCheckpoint(checkpoint);
      if (!evaluation) return fail(line_.program(), evaluation.error(), kExitFailure);
      if (line_.has("--save")) {
        const std::string name = std::filesystem::path(checkpoint).stem().string();
        if (Status saved = QualityEvaluationFile::write(run_dir, name, *evaluation); !saved)
          return fail(line_.program(), saved.error(), kExitFailure);
      }
      if (line_.has("--json")) all.push_back(QualityEvaluationFile::toJson(*evaluation));
      else printEvaluation(*evaluation);
    }
    if (line_.has("--json"))
      std::printf("%s\n", (line_.has("--every-checkpoint") ? all : all.front()).dump(2, ' ', false, json::error_handler_t::replace).c_str());
    return kExitOk;
  }

private:
  // Training images at `size` (from --cache when given), loaded once for every checkpoint of the
  // same size.
  Result<torch::Tensor> trainImages(const std::string& dataroot, int size, double crop_scale) {
    if (train_.defined() && train_size_ == size && train_root_ == dataroot) return train_;
    auto images = line_.has("--cache") ? cachedImages(size, crop_scale)
                                       : imagesOf(dataroot, "--dataroot", static_cast<std::size_t>(request_.n_train),
                                                  request_.seed, size, crop_scale, &train_skipped_);
    if (!images) return images;
    train_ = *images;
    train_size_ = size;
    train_root_ = dataroot;
    return train_;
  }

  Result<torch::Tensor> cachedImages(int size, double crop_scale) {
    auto cache = ImageCache::open(line_.value("--cache"));
    if (!cache) return makeError("--cache: " + cache.error());
    auto rows = loadCachedImageRows(**cache, static_cast<std::size_t>(request_.n_train), request_.seed, size, 3,
                                    crop_scale);
    if (!rows) return makeError("--cache: " + rows.error());
    for (const auto& skipped : rows->skipped) std::fprintf(stderr, "warning: skipped %s\n", skipped.reason.c_str());
    train_skipped_ = rows->skipped;
    return rows->rows.view({rows->rows.size(0), 3, size, size});
  }

  // The figures, and the verdicts training would raise on them (at the checkpoint's alarm levels,
  // or the defaults for a folder of samples).
  Result<QualityEvaluation> evaluate(const torch::Tensor& samples, const torch::Tensor& train,
                                     const MetricsConfig& levels = MetricsConfig()) {
    auto evaluation = QualitySuite::evaluate(samples, train, request_.suite);
    if (evaluation)
      for (const QualityAlarm& alarm : QualityAlarms::fromEvaluation(*evaluation, QualityAlarmThresholds::of(levels)))
        evaluation->alarms.push_back({alarm.kind, alarm.message});
    if (evaluation && !train_skipped_.empty())  // the result says it, not only stderr
      evaluation->notes.push_back(std::to_string(train_skipped_.size()) + " of the training images drawn could not be " +
                                  "read and were left out (the first: " + train_skipped_.front().reason + ")");
    if (terminal_) std::fputs("\r\033[K", stderr);  // the progress line goes; results and errors stay
    return evaluation;
  }

  Result<QualityEvaluation> scoreCheckpoint(const std::string& checkpoint) {
    if (!line_.has("--json") && line_.has("--every-checkpoint")) std::fprintf(stderr, "%s\n", checkpoint.c_str());
    auto loaded = loadCheckpointGenerator(checkpoint, request_.device, request_.generator);
    if (!loaded) return makeError(loaded.error());
    const TrainConfig& config = loaded->config;
    if (config.nc != 3) return makeError(checkpoint + ": the metrics need RGB images; this generator makes " + std::to_string(config.nc) + " channels");
    // Too few images for a metric, or too many bytes: said before anything is loaded or generated.
    if (auto problem = QualitySuite::unmet(request_.n_samples, request_.n_train, config.img_size, request_.suite))
      return makeError(*problem);
    auto train = trainImages(line_.value("--dataroot", config.dataroot), config.img_size, config.augment.crop_scale);
    if (!train) return makeError(train.error());
    const torch::Tensor rows = generateSampleRows(loaded->generator, config.nz, request_.n_samples, request_.seed,
                                                  request_.batch, request_.device, line_.has("--train-mode"));
    auto evaluation = evaluate(rows.view({rows.size(0), 3, config.img_size, config.img_size}), *train, config.metrics);
    if (!evaluation) return evaluation;
    evaluation->checkpoint = QualityEvaluation::Checkpoint{std::filesystem::path(checkpoint).filename().string(),
                                                           loaded->progress.epoch, loaded->progress.step,
                                                           loaded->progress.images_seen, loaded->generatorName()};
    return evaluation;
  }

  int scoreFolder() {
    const int size = request_.img_size;
    auto folder = ImageDataset::open(line_.value("--samples"));
    if (!folder) return fail(line_.program(), "--samples: " + folder.error(), kExitFailure);
    // With --n, a seeded draw of that many of the folder's images; else all of them, counted (not
    // read) before the check of what they would cost.
    std::optional<std::size_t> count;
    if (line_.has("--n")) count.emplace(static_cast<std::size_t>(request_.n_samples));
    const auto n = static_cast<std::int64_t>(count ? *count : folder->entries().size());
    if (auto problem = QualitySuite::unmet(n, request_.n_train, size, request_.suite))
      return fail(line_.program(), *problem, kExitFailure);
    auto samples = imagesOf(*folder, "--samples", count, request_.seed, size, 1.0);
    if (!samples) return fail(line_.program(), samples.error(), kExitFailure);
    auto train = trainImages(line_.value("--dataroot"), size, 1.0);
    if (!train) return fail(line_.program(), train.error(), kExitFailure);
    auto evaluation = evaluate(*samples, *train);
    if (!evaluation) return fail(line_.program(), evaluation.error(), kExitFailure);
    if (line_.has("--json"))
      std::printf("%s\n", QualityEvaluationFile::toJson(*evaluation).dump(2, ' ', false, json::error_handler_t::replace).c_str());
    else
      printEvaluation(*evaluation);
    return kExitOk;
  }

  const CommandLine& line_;
  MetricsRequest request_;
  bool terminal_;  // stderr is a terminal: a live stage line, redrawn in place
  std::optional<NetworkFeatures> network_;
  torch::Tensor train_;
  std::vector<SkippedFile> train_skipped_;  // of the training images loaded
  int train_size_ = 0;
  std::string train_root_;
};

}  // namespace

int runMetrics(const Args& args) {
  const ModelOptionsUse use = scoringModelUse();
  CommandLine line = metricsCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  auto request = metricsRequestFrom(line, use);
  if (!request) return fail(line.program(), request.error(), kExitUsage);
  return MetricsCommand(line, std::move(*request)).run();
}

}  // namespace streetgan::cli
