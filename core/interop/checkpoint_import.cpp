#include "core/interop/checkpoint_import.h"

#include "core/config/train_config.h"
#include "core/data/image_grid.h"
#include "core/runs/event_fields.h"
#include "core/runs/event_log.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "core/interop/reference_checkpoint.h"
#include "core/util/atomic_file.h"
#include "core/util/exception_message.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan {
namespace {

namespace run_status = events::status;

namespace fs = std::filesystem;

std::int64_t countImportedParameters(torch::nn::Module& module) {
  std::int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

Result<TrainConfig> importedConfig(const ReferenceCheckpoint& file, const CheckpointImportOptions& options,
                                   const fs::path& target) {
  TrainConfig config;
  config.nz = file.generator.nz;
  config.ngf = file.generator.ngf;
  config.nc = file.generator.nc;
  config.img_size = file.generator.img_size;
  if (file.discriminator) config.ndf = file.discriminator->ndf;
  if (file.optimizer_g) {
    config.lr = file.optimizer_g->lr;
    config.beta1 = file.optimizer_g->beta1;
    config.beta2 = file.optimizer_g->beta2;
    config.weight_decay = file.optimizer_g->weight_decay;
  }
  // Values past an int are clamped (not wrapped), so validateConfig names them as they are too large.
  auto clampedInt = [](std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>(n, INT_MIN, INT_MAX)); };
  config.batch_size = clampedInt(options.batch_size);
  config.preset = "imported";
  config.name = target.filename().string();
  config.root = target.parent_path().string();
  // file.epoch ≤ kMaxImportedEpoch (checked by the caller): epoch + 1 cannot overflow.
  config.epochs = clampedInt(std::max<std::int64_t>(config.epochs, file.epoch + 1));
  if (!file.noise.defined()) config.sample_count = std::min(config.sample_count, 64);
  else config.sample_count = clampedInt(file.noise.size(0));
  if (!options.dataroot.empty()) config.dataroot = fs::absolute(options.dataroot).lexically_normal().string();
  if (Status valid = validateConfig(config); !valid)
    return makeError(options.checkpoint + ": the imported settings are not valid (" + valid.error() + ")");
  return config;
}

// The grid as the original made it, (C, H, W) in [0, 1], as 8-bit pixels.
Status writeGrid(const torch::Tensor& grid, const std::string& path) {
  auto bytes = encodePng((grid.clamp(0, 1) * 255).round().to(torch::kUInt8).contiguous());
  if (!bytes) return makeError(bytes.error());
  return writeFileAtomically(path, *bytes);
}

// A new folder `<target>.importing-XXXXXX` beside the run to create (mkdtemp: a fresh name, made
// with O_EXCL semantics, so nothing an earlier, killed import left there is ever taken over),
// removed with everything in it unless committed.
class StagingFolder {
public:
  StagingFolder() = default;
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;
  ~StagingFolder() {
    if (!path_.empty() && !committed_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  Status create(const fs::path& target) {
    std::string pattern = target.string() + ".importing-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      return makeError(pattern + ": cannot create the import's staging folder (" + std::strerror(errno) + ")");
    path_ = pattern;
    return {};
  }
  const std::string& path() const { return path_; }
  void committed() { committed_ = true; }

private:
  std::string path_;
  bool committed_ = false;
};

// A new run folder gets the permissions mkdir would give it (mkdtemp made it 0700).
void giveFolderPermissions(const std::string& path) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(path.c_str(), 0777 & ~mask);
}

// What a cancelled import says (the staging folder is removed as the error returns).
Error cancelledError(const fs::path& target) {
  return makeError(target.string() + ": import cancelled; nothing was written");
}

// Loss i, or NaN (written as null) when the file holds fewer losses of this kind than steps.
double lossAt(const std::vector<double>& losses, std::int64_t i) {
  return i < static_cast<std::int64_t>(losses.size()) ? losses[static_cast<std::size_t>(i)] : std::nan("");
}

// What the import made of the file, before anything is written.
CheckpointImportReport reportOf(const ReferenceCheckpoint& file, const TrainConfig& config, const fs::path& target) {
  CheckpointImportReport report;
  report.run_dir = target.string();
  report.img_size = config.img_size;
  report.nz = config.nz;
  report.ngf = config.ngf;
  report.ndf = config.ndf;
  report.nc = config.nc;
  report.epochs = file.epoch + 1;
  report.steps = static_cast<std::int64_t>(std::max(file.losses_g.size(), file.losses_d.size()));
  report.has_discriminator = file.discriminator.has_value();
  report.has_optimizers = file.optimizer_g && file.optimizer_d;
  report.ddp_prefixed = file.ddp_prefixed;
  return report;
}

// The last loss pair as a step event (report.steps > 0), in epoch `last_epoch` (1-based), which it
// ends: iteration = iterations, the steps of that epoch.
events::Step lastStepEvent(const ReferenceCheckpoint& file, const CheckpointImportReport& report,
                           std::int64_t last_epoch, std::int64_t batch) {
  const std::int64_t steps = report.steps, last = steps - 1;
  const std::int64_t epoch_first = ((last_epoch - 1) * steps + report.epochs - 1) / report.epochs;  // ⌈e·n/epochs⌉
  const std::int64_t in_epoch = std::max<std::int64_t>(1, last - epoch_first + 1);
  events::Step step;
  step.epoch = report.epochs;
  step.iteration = step.iterations = in_epoch;
  step.step = steps;
  step.images_seen = steps * batch;
  step.imported = true;
  step.loss_d = lossAt(file.losses_d, last);
  step.loss_g = lossAt(file.losses_g, last);
  return step;
}

// The events and files of an imported run after its run_started, written into the staging run.
struct ImportedRunWriter {
  const ReferenceCheckpoint& file;
  const CheckpointImportOptions& options;
  const fs::path& target;
  const RunDirectory& run;
  EventLog& log;
  CheckpointImportReport& report;
  std::int64_t batch = 0;

  bool cancelled() const { return options.cancelled && options.cancelled(); }
  // Step i of n is put in epoch ⌊i·epochs/n⌋ + 1: the file says how many epochs, not where they began.
  std::int64_t epochOf(std::int64_t i) const {
    return report.steps ? i * report.epochs / report.steps + 1 : report.epochs;
  }

  // The loss pairs but the last, compactly: arrays of up to kImportedLossesPerEvent pairs a line
  // (docs/events.md), not one step event each (a few MB of pickle made hundreds of MB of log).
  // The last pair as a step event, so every reader of step events sees where the run stands and
  // its last losses. It ends epoch `epochs`: iteration = iterations, the steps of that epoch.
  Status writeLosses() {
    const std::int64_t steps = report.steps;
    for (std::int64_t first = 0; first + 1 < steps; first += kImportedLossesPerEvent) {
      if (cancelled()) return cancelledError(target);
      const std::int64_t count = std::min(kImportedLossesPerEvent, steps - 1 - first);
      events::ImportedLosses losses;
      losses.first_step = static_cast<double>(first + 1);
      losses.steps = count;
      losses.total_steps = static_cast<double>(steps);
      losses.epochs = static_cast<double>(report.epochs);
      losses.images_per_step = static_cast<double>(batch);
      losses.has_loss_d = losses.has_loss_g = true;
      for (std::int64_t i = first; i < first + count; ++i) {
        losses.loss_d.push_back(lossAt(file.losses_d, i));
        losses.loss_g.push_back(lossAt(file.losses_g, i));
      }
      if (Status written = log.append(losses); !written) return written;
    }
    if (steps > 0) return log.append(lastStepEvent(file, report, epochOf(steps - 1), batch));
    return {};
  }

  // The sample grids, spread evenly over the imported steps, the last grid at the last step.
  Status writeGrids() {
    const std::int64_t steps = report.steps;
    const auto grids = static_cast<std::int64_t>(file.img_list.size());
    std::int64_t last_step = -1;
    for (std::int64_t k = 0; k < grids; ++k) {
      if (cancelled()) return cancelledError(target);
      const std::int64_t at = std::max(last_step + 1, steps ? (k + 1) * steps / grids : k);
      last_step = at;
      const std::string relative = run.sampleRelativePath(at);
      Status status = writeGrid(file.img_list[static_cast<std::size_t>(k)], (fs::path(run.path()) / relative).string());
      if (status)
        status =
            log.append(events::Samples{relative, at, epochOf(std::max<std::int64_t>(at - 1, 0)), at * batch, true});
      ++report.samples;
      if (!status) return status;
    }
    return {};
  }

  // One checkpoint at the last step, whose noise generator is the one a new run of this seed
  // would start with, then the run's end.
  Status writeCheckpoint(const TrainConfig& config, DcganStep& model, const std::string& source) {
    const std::int64_t steps = report.steps;
    CheckpointState state;
    state.config = config;
    state.progress.epoch = report.epochs;
    state.progress.step = steps;
    state.progress.images_seen = steps * batch;
    state.fixed_noise =
        file.noise.defined()
            ? file.noise
            : torch::randn({config.sample_count, config.nz, 1, 1},
                           at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(config.seed) * 2));
    // The noise generator a new run of this seed would start with (trainer.cpp seeds it so).
    state.noise_rng_state =
        at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(config.seed) * 2 + 1).get_state();
    const std::string checkpoint = run.checkpointPath(steps);
    if (Status saved = saveCheckpoint(checkpoint, model, state); !saved) return saved;
    const std::string relative = fs::relative(checkpoint, run.path()).string();
    Status status = log.append(events::Checkpoint{relative, steps, report.epochs, steps * batch});
    if (status)
      status = log.append(events::RunFinished{
          run_status::kStopped, "imported from " + source, report.epochs, steps, steps * batch, {}});
    if (status) report.checkpoint_path = relative;
    return status;
  }
};

// Bounds that keep every product below in range: steps ≤ kMaxImportedLosses (5·10^7), epochs ≤
// kMaxImportedEpoch + 1 (10^6), batch ≤ 65536 (validateConfig): i·epochs ≤ 5·10^13, steps·batch
// ≤ 3.3·10^12, (k + 1)·steps ≤ grids·5·10^7, far below 2^63 for any img_list a file can hold.
Result<CheckpointImportReport> writeRun(const ReferenceCheckpoint& file, const TrainConfig& config,
                                        const CheckpointImportOptions& options, const std::string& staging,
                                        const fs::path& target) {
  auto cancelled = [&] { return options.cancelled && options.cancelled(); };
  RunDirectory run(staging);
  if (Status created = run.create(); !created) return makeError(created.error());
  if (Status written = writeFileAtomically(run.configPath(), configToJson(config).dump(2) + "\n"); !written)
    return makeError(written.error());
  auto log = EventLog::open(run.eventsPath(), false);
  if (!log) return makeError(log.error());

  DcganStep model(config, torch::kCPU, Precision::Fp32);
  copyStateInto(*model.generator(), file.generator_state);
  if (file.discriminator) copyStateInto(*model.discriminator(), file.discriminator_state);
  if (file.optimizer_g) restoreOptimizerState(model.optimizerG(), model.generator()->parameters(), *file.optimizer_g);
  if (file.optimizer_d) restoreOptimizerState(model.optimizerD(), model.discriminator()->parameters(), *file.optimizer_d);
  if (cancelled()) return cancelledError(target);

  CheckpointImportReport report = reportOf(file, config, target);
  const std::string source = fs::absolute(options.checkpoint).lexically_normal().string();
  events::RunStarted started;
  started.setConfig(configToJson(config));
  started.device = "cpu";
  started.precision = "fp32";
  started.params_g = countImportedParameters(*model.generator());
  started.params_d = countImportedParameters(*model.discriminator());
  started.imported_from = source;
  started.epoch = started.step = started.images_seen = 0;
  started.world_size = 1;
  Status status = log->append(started);
  ImportedRunWriter writer{file, options, target, run, *log, report, config.batch_size};
  if (status) status = writer.writeLosses();
  if (status) status = writer.writeGrids();
  if (!status) return makeError(status.error());
  if (cancelled()) return cancelledError(target);
  if (Status written = writer.writeCheckpoint(config, model, source); !written) return makeError(written.error());
  return report;
}

// The file's counts that later arithmetic multiplies, bounded before anything is written.
Status checkImportBounds(const ReferenceCheckpoint& file, const CheckpointImportOptions& options) {
  if (file.epoch > kMaxImportedEpoch)
    return makeError(options.checkpoint + ": epoch is " + std::to_string(file.epoch) + "; a run has at most " +
                     std::to_string(kMaxImportedEpoch + 1) + " epochs, so the largest epoch that can be imported is " +
                     std::to_string(kMaxImportedEpoch));
  const std::int64_t cap = std::min(options.max_losses, kMaxImportedLosses);
  for (const auto& [key, losses] : {std::pair<const char*, const std::vector<double>*>{"losses[\"_G\"]", &file.losses_g},
                                    {"losses[\"_D\"]", &file.losses_d}})
    if (static_cast<std::uint64_t>(losses->size()) > static_cast<std::uint64_t>(std::max<std::int64_t>(cap, 0)))
      return makeError(options.checkpoint + ": " + key + " holds " + std::to_string(losses->size()) +
                       " values; at most " + std::to_string(cap) + " can be imported");
  return {};
}

}  // namespace

std::string importRunFolder(const std::string& run_dir) {
  if (run_dir.empty()) return {};
  std::error_code ec;
  fs::path path = fs::absolute(fs::path(run_dir), ec);
  if (ec) return {};
  path = path.lexically_normal();
  // "runs/x/" (lexically_normal keeps one trailing separator): the folder is runs/x.
  while (!path.has_filename() && path.has_relative_path()) path = path.parent_path();
  if (!path.has_filename() || path.filename() == "." || path.filename() == "..") return {};
  return path.string();
}

Result<CheckpointImportReport> importReferenceCheckpoint(const CheckpointImportOptions& options) {
  if (options.batch_size < 1) return makeError("the batch size must be at least 1");
  const std::string folder = importRunFolder(options.run_dir);
  if (folder.empty()) return makeError("\"" + options.run_dir + "\": not a folder a run can be created as");
  const fs::path target(folder);
  std::error_code ec;
  const auto link = fs::symlink_status(target, ec);
  if (fs::is_symlink(link) || (fs::exists(link) && !(fs::is_directory(link) && fs::is_empty(target, ec) && !ec)))
    return makeError(target.string() + ": already exists and is not an empty folder; choose a new run folder");
  if (!fs::is_directory(target.parent_path(), ec))
    return makeError(target.parent_path().string() + ": the folder to create the run in does not exist");
  auto file = readReferenceCheckpoint(options.checkpoint);
  if (!file) return makeError(file.error());
  if (Status bounded = checkImportBounds(*file, options); !bounded) return makeError(bounded.error());
  auto config = importedConfig(*file, options, target);
  if (!config) return makeError(config.error());
  if (options.cancelled && options.cancelled()) return cancelledError(target);

  StagingFolder staging;
  if (Status created = staging.create(target); !created) return makeError(created.error());
  Result<CheckpointImportReport> report = makeError("");
  try {
    report = writeRun(*file, *config, options, staging.path(), target);
  } catch (const c10::Error& e) {
    return makeError(options.checkpoint + ": cannot import (" + firstLine(e.what_without_backtrace()) + ")");
  } catch (const std::exception&) {  // out of memory, a filesystem error: the staging folder goes with it
    return makeError(options.checkpoint + ": cannot import (" + exceptionMessage(std::current_exception()) + ")");
  }
  if (!report) return makeError(report.error());
  if (options.cancelled && options.cancelled()) return cancelledError(target);
  giveFolderPermissions(staging.path());
  // rename() replaces an empty folder at `target` in one step, and fails if it has filled meanwhile.
  fs::rename(staging.path(), target, ec);
  if (ec) return makeError(target.string() + ": cannot move the imported run into place (" + ec.message() + ")");
  staging.committed();
  return report;
}

}  // namespace streetgan
