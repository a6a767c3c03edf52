#include "core/eval/quality_suite.h"

#include "core/eval/network_features.h"
#include "core/util/finite_values.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {
namespace {

namespace figure = quality_figure;
using Clock = std::chrono::steady_clock;

Status checkSuiteImages(const torch::Tensor& images, const char* name) {
  if (!images.defined() || images.dim() != 4 || images.size(1) != 3)
    return makeError(std::string("the ") + name + " must be RGB images (N, 3, size, size)");
  if (images.size(2) != images.size(3))
    return makeError(std::string("the ") + name + " must be square, not " + std::to_string(images.size(3)) + "x" +
                     std::to_string(images.size(2)));
  if (images.size(0) < 2) return makeError(std::string("needs at least 2 ") + name + ", got " + std::to_string(images.size(0)));
  return {};
}

// The stages of one evaluation, in order, with their progress reports and timings.
class Stages {
public:
  Stages(const QualitySuiteOptions& options, QualityEvaluation& out) : options_(options), out_(out) {}

  void plan(const std::string& stage) { names_.push_back(stage); }
  /// Tells progress that `stage` starts; false when it cancels.
  bool start(const std::string& stage) {
    started_ = Clock::now();
    int index = 0;
    while (index < static_cast<int>(names_.size()) && names_[index] != stage) ++index;
    if (options_.should_stop && options_.should_stop()) return false;
    return !options_.progress || options_.progress(stage, index, static_cast<int>(names_.size()));
  }
  void done(const std::string& key) { out_.seconds[key] = std::chrono::duration<double>(Clock::now() - started_).count(); }
  bool finish() { return !options_.progress || options_.progress("done", static_cast<int>(names_.size()), static_cast<int>(names_.size())); }

private:
  const QualitySuiteOptions& options_;
  QualityEvaluation& out_;
  std::vector<std::string> names_;
  Clock::time_point started_;
};

const char* const kSwdStage = "sliced Wasserstein distance";
const char* const kDiversityStage = "MS-SSIM diversity";
const char* const kNdbStage = "NDB/JSD bins";
const char* const kFeaturesStage = "features";
const char* const kFidStage = "FID";
const char* const kKidStage = "KID";
const char* const kPrdcStage = "precision/recall/density/coverage";
const char* const kMemorisationStage = "nearest training images";

Error cancelled() { return makeError("cancelled"); }

// What each metric needs of the image counts and size, or nothing.
std::optional<std::string> needOf(const std::string& metric, std::int64_t n_samples, std::int64_t n_train,
                                  std::int64_t size, const QualitySuiteOptions& options) {
  const auto count = [](std::int64_t n) { return std::to_string(n); };
  if (metric == "swd" && size < options.sliced_wasserstein.min_resolution)
    return "the sliced Wasserstein distance needs images of at least " +
           count(options.sliced_wasserstein.min_resolution) + " px, got " + count(size);
  if (metric == "ndb" && n_train < options.ndb.bins)
    return "NDB/JSD needs at least " + count(options.ndb.bins) + " training images for " + count(options.ndb.bins) +
           " bins, got " + count(n_train);
  if (metric == "prdc" && (n_samples <= options.manifold.k || n_train <= options.manifold.k))
    return "precision/recall needs more than k = " + count(options.manifold.k) + " samples and training images, got " +
           count(n_samples) + " and " + count(n_train);
  if ((metric == "fid" || metric == "kid" || metric == "prdc") && !options.network && size < options.pixel_features.size)
    return metric + " in the pixel feature space needs images of at least " + count(options.pixel_features.size) +
           " px, got " + count(size);
  if (metric == "memorisation") {
    // Each sample keeps its show_nearest nearest training images (what the Evaluate tab shows).
    const std::int64_t needed = std::max<std::int64_t>(2, options.memorisation.show_nearest);
    if (n_train < needed)
      return "the memorisation check needs at least " + std::to_string(needed) + " training images (each sample's " +
             std::to_string(options.memorisation.show_nearest) + " nearest are kept), got " + std::to_string(n_train);
  }
  return std::nullopt;
}

// The memorisation check, its searches bounded by the pixel features when they were fitted at its
// size (the same figures, a fraction of the work); a space that cannot bound (components not
// orthonormal) leaves the plain search.
Result<MemorisationResult> evaluateMemorisation(const torch::Tensor& samples, const torch::Tensor& train,
                                                const MemorisationOptions& options, const PixelPcaFeatures* space,
                                                const torch::Tensor& sample_features, const torch::Tensor& train_features) {
  if (!space || space->size() != options.size || options.size < 1)
    return MemorisationCheck::evaluate(samples, train, options);
  const torch::Tensor sample_rows = NearestNeighbourSearch::downsampledRows(samples, options.size);
  const torch::Tensor train_rows = NearestNeighbourSearch::downsampledRows(train, options.size);
  if (!sample_rows.defined() || !train_rows.defined()) return MemorisationCheck::evaluate(samples, train, options);
  auto sample_bounds = space->boundRows(sample_rows, sample_features);
  auto train_bounds = space->boundRows(train_rows, train_features);
  if (!sample_bounds || !train_bounds) return MemorisationCheck::evaluateRows(sample_rows, train_rows, options);
  return MemorisationCheck::evaluateRows(sample_rows, train_rows, *sample_bounds, *train_bounds, options);
}

// What every stage of one evaluation reads, and what it fills.
struct SuiteRun {
  const torch::Tensor& samples;
  const torch::Tensor& train;
  const QualitySuiteOptions& options;
  QualityEvaluation& out;
  Stages& stages;
};

// Features of the training images and the samples, for FID, KID, PRDC and the memorisation
// check; the pixel features' space too, kept for that check's search (its lower bounds).
struct SuiteFeatures {
  torch::Tensor real, fake;
  std::optional<PixelPcaFeatures> pixel_space;
};

Status addSlicedWasserstein(SuiteRun& run) {
  if (!run.stages.start(kSwdStage)) return cancelled();
  SlicedWassersteinOptions swd = run.options.sliced_wasserstein;
  swd.seed = run.options.seed;
  if (run.options.should_stop) swd.progress = [&](double) { return !run.options.should_stop(); };
  auto result = SlicedWasserstein::compute(run.train, run.samples, swd);
  if (!result) return makeError("sliced Wasserstein distance: " + result.error());
  run.out.metrics[figure::kSwd] = result->mean_e3;
  for (std::size_t i = 0; i < result->resolutions.size(); ++i)
    run.out.metrics[figure::kSwdLevelPrefix + std::to_string(result->resolutions[i])] = result->distances_e3[i];
  run.stages.done("swd");
  return {};
}

Status addDiversity(SuiteRun& run) {
  if (!run.stages.start(kDiversityStage)) return cancelled();
  MsSsimDiversityOptions diversity = run.options.diversity;
  diversity.seed = run.options.seed;
  diversity.should_stop = run.options.should_stop;
  const auto stopped = [&] { return run.options.should_stop && run.options.should_stop(); };
  auto of_samples = MsSsim::diversity(run.samples, diversity);
  if (!of_samples)
    return stopped() ? cancelled() : makeError("MS-SSIM diversity of the samples: " + of_samples.error());
  auto of_train = MsSsim::diversity(run.train, diversity);
  if (!of_train)
    return stopped() ? cancelled() : makeError("MS-SSIM diversity of the training images: " + of_train.error());
  run.out.metrics[figure::kMsSsimSamples] = of_samples->mean;
  run.out.metrics[figure::kMsSsimTrain] = of_train->mean;
  if (of_samples->scales < 5)
    run.out.notes.push_back("MS-SSIM on " + std::to_string(of_samples->scales) +
                            (of_samples->scales == 1 ? " scale at " : " scales at ") +
                            std::to_string(run.out.image_size) + " px (the standard 5 need at least 161 px)");
  run.stages.done("msssim");
  return {};
}

Status addNdb(SuiteRun& run) {
  if (!run.stages.start(kNdbStage)) return cancelled();
  NdbJsdOptions ndb = run.options.ndb;
  ndb.seed = run.options.seed;
  auto result = NdbJsd::evaluate(run.samples, run.train, ndb);
  if (!result) return makeError(result.error());  // it begins "NDB/JSD: "
  run.out.metrics[figure::kNdb] = result->ndb;
  run.out.metrics[figure::kNdbFraction] = result->ndb_fraction;
  run.out.metrics[figure::kJsd] = result->jsd;
  run.stages.done("ndb");
  return {};
}

// The features network's, when one is given; else the pixels' principal components.
Status extractFeatures(SuiteRun& run, SuiteFeatures& features) {
  if (!run.stages.start(kFeaturesStage)) return cancelled();
  const QualitySuiteOptions& options = run.options;
  if (options.network) {
    const auto keep_going = [&] { return !options.should_stop || !options.should_stop(); };
    auto real = options.network->extract(run.train, 64, keep_going);
    if (!real) return makeError(real.error());
    auto fake = options.network->extract(run.samples, 64, keep_going);
    if (!fake) return makeError(fake.error());
    if (real->size(1) != fake->size(1))
      return makeError(options.network->path() + ": the network returns " + std::to_string(real->size(1)) +
                       " features for the training images and " + std::to_string(fake->size(1)) + " for the samples");
    features.real = *real;
    features.fake = *fake;
    run.out.feature_space = options.network->spaceName();
    run.out.features_sha256 = options.network->sha256();
    run.out.features_input_size = options.network->inputSize();
  } else {
    PixelPcaOptions pixel = options.pixel_features;
    // Fewer training images than components leave the last components without variance.
    pixel.components = static_cast<int>(std::min<std::int64_t>(pixel.components, run.train.size(0) - 1));
    auto space = PixelPcaFeatures::fit(run.train, pixel);
    if (!space) return makeError(space.error());
    auto real = space->transform(run.train);
    if (!real) return makeError(real.error());
    auto fake = space->transform(run.samples);
    if (!fake) return makeError(fake.error());
    features.real = *real;
    features.fake = *fake;
    run.out.feature_space = "pixels" + std::to_string(pixel.size) + "-pca" + std::to_string(pixel.components);
    features.pixel_space = std::move(*space);
  }
  run.stages.done("features");
  return {};
}

Status addFrechetDistance(SuiteRun& run, const SuiteFeatures& features) {
  if (!run.stages.start(kFidStage)) return cancelled();
  auto fid = FeatureDistances::frechet(features.real, features.fake);
  if (!fid) return makeError(fid.error());
  run.out.metrics[figure::kFid] = *fid;
  run.stages.done("fid");
  return {};
}

Status addKernelDistance(SuiteRun& run, const SuiteFeatures& features) {
  if (!run.stages.start(kKidStage)) return cancelled();
  KernelDistanceOptions kernel = run.options.kernel;
  kernel.seed = run.options.seed;
  auto kid = FeatureDistances::kernel(features.real, features.fake, kernel);
  if (!kid) return makeError(kid.error());
  run.out.metrics[figure::kKid] = kid->mean;
  run.out.metrics[figure::kKidStddev] = kid->stddev;
  run.stages.done("kid");
  return {};
}

Status addManifoldMetrics(SuiteRun& run, const SuiteFeatures& features) {
  if (!run.stages.start(kPrdcStage)) return cancelled();
  auto prdc = ManifoldMetrics::compute(features.real, features.fake, run.options.manifold);
  if (!prdc) return makeError(prdc.error());
  run.out.metrics[figure::kPrecision] = prdc->precision;
  run.out.metrics[figure::kRecall] = prdc->recall;
  run.out.metrics[figure::kDensity] = prdc->density;
  run.out.metrics[figure::kCoverage] = prdc->coverage;
  run.stages.done("prdc");
  return {};
}

Status addMemorisation(SuiteRun& run, const SuiteFeatures& features) {
  if (!run.stages.start(kMemorisationStage)) return cancelled();
  MemorisationOptions memorisation = run.options.memorisation;
  memorisation.seed = run.options.seed;
  auto result =
      evaluateMemorisation(run.samples, run.train, memorisation,
                           features.pixel_space ? &*features.pixel_space : nullptr, features.fake, features.real);
  if (result) {
    run.out.metrics[figure::kCopyRate] = result->copy_rate;
    run.out.metrics[figure::kNearestRatio] = result->median_ratio;
    if (std::isfinite(result->spread_ratio)) run.out.metrics[figure::kSpreadRatio] = result->spread_ratio;
  } else if (result.error().find("(mostly duplicates)") != std::string::npos) {
    // A training set of copies has no yardstick: the other figures still stand.
    run.out.notes.push_back(result.error() + "; no copy rate, distance ratio or spread");
  } else {
    return makeError(result.error());  // it begins "memorisation: "
  }
  run.stages.done("memorisation");
  return {};
}

// Both sets as float32 on the CPU, after the checks every metric needs.
Result<std::pair<torch::Tensor, torch::Tensor>> checkedInputs(const torch::Tensor& samples_in,
                                                              const torch::Tensor& train_in) {
  if (Status s = checkSuiteImages(samples_in, "samples"); !s) return makeError(s.error());
  if (Status s = checkSuiteImages(train_in, "training images"); !s) return makeError(s.error());
  if (samples_in.size(2) != train_in.size(2))
    return makeError("the samples are " + std::to_string(samples_in.size(2)) + " px, the training images " +
                     std::to_string(train_in.size(2)) + " px");
  torch::Tensor samples = samples_in.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  torch::Tensor train = train_in.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  if (!allFinite(samples)) return makeError("the samples contain NaN or Inf values");
  if (!allFinite(train)) return makeError("the training images contain NaN or Inf values");
  return std::make_pair(std::move(samples), std::move(train));
}

}  // namespace

std::optional<std::string> QualitySuite::unmet(std::int64_t n_samples, std::int64_t n_train, std::int64_t size,
                                               const QualitySuiteOptions& options) {
  if (n_samples < 2) return "needs at least 2 samples, got " + std::to_string(n_samples);
  if (n_train < 2) return "needs at least 2 training images, got " + std::to_string(n_train);
  const double bytes = static_cast<double>(n_samples + n_train) * 3.0 * static_cast<double>(size) * static_cast<double>(size) * 4.0;
  if (bytes > static_cast<double>(kMaxImageBytes))
    return std::to_string(n_samples) + " samples and " + std::to_string(n_train) + " training images of " +
           std::to_string(size) + " px would take " + std::to_string(static_cast<long long>(bytes / (1 << 20))) +
           " MiB, more than " + std::to_string(kMaxImageBytes >> 20) + " MiB; use fewer";
  if (options.skip_unmet) return std::nullopt;
  for (const std::string& metric : options.metrics)
    if (auto need = needOf(metric, n_samples, n_train, size, options)) return need;
  return std::nullopt;
}

Result<std::set<std::string>> QualitySuiteOptions::parseMetricList(const std::string& text) {
  std::set<std::string> metrics;
  std::string item;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') {
      item += text[i];
      continue;
    }
    bool known = false;
    for (const char* name : kMetricNames) known = known || item == name;
    if (!known) {
      std::string names;
      for (const char* name : kMetricNames) names += std::string(names.empty() ? "" : ", ") + name;
      return makeError("\"" + item + "\" is not a metric; the metrics are " + names);
    }
    metrics.insert(item);
    item.clear();
  }
  return metrics;
}

Result<QualitySuiteOptions> QualitySuiteOptions::forTraining(const TrainConfig& config) {
  QualitySuiteOptions options;
  if (!config.metrics.only.empty()) {
    std::string list;
    for (const auto& name : config.metrics.only) list += (list.empty() ? "" : ",") + name;
    auto metrics = parseMetricList(list);
    if (!metrics) return makeError("config key \"metrics.only\": " + metrics.error());
    options.metrics = *metrics;
  }
  options.seed = static_cast<std::uint64_t>(config.seed);
  // A small data set leaves out what it cannot give (NDB's 100 bins, say) and keeps the rest.
  options.skip_unmet = true;
  return options;
}

Result<QualityEvaluation> QualitySuite::evaluate(const torch::Tensor& samples_in, const torch::Tensor& train_in,
                                                 const QualitySuiteOptions& options) {
  auto inputs = checkedInputs(samples_in, train_in);
  if (!inputs) return makeError(inputs.error());
  const auto& [samples, train] = *inputs;
  if (auto problem = unmet(samples.size(0), train.size(0), samples.size(2), options)) return makeError(*problem);
  QualityEvaluation out;
  out.n_samples = samples.size(0);
  out.n_train = train.size(0);
  out.image_size = static_cast<int>(samples.size(2));
  const auto wants = [&](const char* metric) {
    if (options.metrics.count(metric) == 0) return false;
    if (auto need = needOf(metric, out.n_samples, out.n_train, out.image_size, options)) {
      if (std::find(out.notes.begin(), out.notes.end(), *need + "; left out") == out.notes.end())
        out.notes.push_back(*need + "; left out");
      return false;
    }
    return true;
  };
  const bool feature_metrics = wants("fid") || wants("kid") || wants("prdc");
  Stages stages(options, out);
  if (wants("swd")) stages.plan(kSwdStage);
  if (wants("msssim")) stages.plan(kDiversityStage);
  if (wants("ndb")) stages.plan(kNdbStage);
  if (feature_metrics) stages.plan(kFeaturesStage);
  if (wants("fid")) stages.plan(kFidStage);
  if (wants("kid")) stages.plan(kKidStage);
  if (wants("prdc")) stages.plan(kPrdcStage);
  if (wants("memorisation")) stages.plan(kMemorisationStage);

  SuiteRun run{samples, train, options, out, stages};
  SuiteFeatures features;
  if (wants("swd"))
    if (Status s = addSlicedWasserstein(run); !s) return makeError(s.error());
  if (wants("msssim"))
    if (Status s = addDiversity(run); !s) return makeError(s.error());
  if (wants("ndb"))
    if (Status s = addNdb(run); !s) return makeError(s.error());
  if (feature_metrics) {
    if (Status s = extractFeatures(run, features); !s) return makeError(s.error());
    if (wants("fid"))
      if (Status s = addFrechetDistance(run, features); !s) return makeError(s.error());
    if (wants("kid"))
      if (Status s = addKernelDistance(run, features); !s) return makeError(s.error());
    if (wants("prdc"))
      if (Status s = addManifoldMetrics(run, features); !s) return makeError(s.error());
  }
  if (wants("memorisation"))
    if (Status s = addMemorisation(run, features); !s) return makeError(s.error());
  if (!stages.finish()) return cancelled();
  return out;
}

}  // namespace streetgan
