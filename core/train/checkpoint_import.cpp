#include "core/train/checkpoint_import.h"

#include "core/config/train_config.h"
#include "core/data/image_grid.h"
#include "core/runs/event_log.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/dcgan_step.h"
#include "core/train/reference_checkpoint.h"
#include "core/util/atomic_file.h"
#include "core/util/exception_message.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <filesystem>
#include <unistd.h>

namespace streetgan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::int64_t countParameters(torch::nn::Module& module) {
  std::int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

Result<TrainConfig> importedConfig(const ReferenceCheckpoint& file, const CheckpointImportOptions& options) {
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
  config.batch_size = static_cast<int>(options.batch_size);
  config.preset = "imported";
  config.name = fs::path(options.run_dir).lexically_normal().filename().string();
  if (config.name.empty()) config.name = fs::path(options.run_dir).lexically_normal().parent_path().filename().string();
  config.root = fs::absolute(options.run_dir).lexically_normal().parent_path().string();
  config.epochs = std::max<std::int64_t>(config.epochs, file.epoch + 1);
  if (!file.noise.defined()) config.sample_count = std::min(config.sample_count, 64);
  else config.sample_count = static_cast<int>(file.noise.size(0));
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

class StagingFolder {
public:
  explicit StagingFolder(std::string path) : path_(std::move(path)) {}
  ~StagingFolder() {
    if (!committed_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }
  void committed() { committed_ = true; }

private:
  std::string path_;
  bool committed_ = false;
};

Result<CheckpointImportReport> writeRun(const ReferenceCheckpoint& file, const TrainConfig& config,
                                        const CheckpointImportOptions& options, const std::string& staging) {
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

  CheckpointImportReport report;
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
  const std::int64_t steps = report.steps;
  const std::int64_t batch = options.batch_size;
  const std::string source = fs::absolute(options.checkpoint).lexically_normal().string();

  Status status = log->emit("run_started", {{"config", configToJson(config)},
                                            {"device", "cpu"},
                                            {"precision", "fp32"},
                                            {"params_g", countParameters(*model.generator())},
                                            {"params_d", countParameters(*model.discriminator())},
                                            {"resumed_from", nullptr},
                                            {"imported_from", source},
                                            {"epoch", 0},
                                            {"step", 0},
                                            {"images_seen", 0},
                                            {"world_size", 1}});
  // Step i of n is put in epoch ⌊i·epochs/n⌋ + 1: the file says how many epochs, not where they began.
  auto epochOf = [&](std::int64_t i) { return steps ? i * report.epochs / steps + 1 : report.epochs; };
  std::int64_t epoch_start = 0;
  for (std::int64_t i = 0; status && i < steps; ++i) {
    if (i > 0 && epochOf(i) != epochOf(i - 1)) epoch_start = i;
    json step = {{"epoch", epochOf(i)}, {"iteration", i - epoch_start}, {"step", i + 1},
                 {"images_seen", (i + 1) * batch}, {"imported", true}};
    if (i < static_cast<std::int64_t>(file.losses_d.size())) step["loss_d"] = file.losses_d[i];
    if (i < static_cast<std::int64_t>(file.losses_g.size())) step["loss_g"] = file.losses_g[i];
    status = log->emit("step", std::move(step));
  }
  const auto grids = static_cast<std::int64_t>(file.img_list.size());
  std::int64_t last_step = -1;
  for (std::int64_t k = 0; status && k < grids; ++k) {
    // Spread evenly over the imported steps, the last grid at the last step.
    const std::int64_t at = std::max(last_step + 1, steps ? (k + 1) * steps / grids : k);
    last_step = at;
    const std::string relative = run.sampleRelativePath(at);
    status = writeGrid(file.img_list[k], (fs::path(staging) / relative).string());
    if (status)
      status = log->emit("samples", {{"path", relative}, {"step", at}, {"epoch", epochOf(std::max<std::int64_t>(at - 1, 0))},
                                     {"images_seen", at * batch}, {"imported", true}});
    ++report.samples;
  }
  if (!status) return makeError(status.error());

  CheckpointState state;
  state.config = config;
  state.progress.epoch = report.epochs;
  state.progress.step = steps;
  state.progress.images_seen = steps * batch;
  state.fixed_noise = file.noise.defined()
                          ? file.noise
                          : torch::randn({config.sample_count, config.nz, 1, 1},
                                         at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(config.seed) * 2));
  // The noise generator a new run of this seed would start with (trainer.cpp seeds it so).
  state.noise_rng_state = at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(config.seed) * 2 + 1).get_state();
  const std::string checkpoint = run.checkpointPath(steps);
  if (Status saved = saveCheckpoint(checkpoint, model, state); !saved) return makeError(saved.error());
  const std::string relative = fs::relative(checkpoint, staging).string();
  status = log->emit("checkpoint", {{"path", relative}, {"step", steps}, {"epoch", report.epochs},
                                    {"images_seen", steps * batch}});
  if (status)
    status = log->emit("run_finished", {{"status", "stopped"}, {"step", steps}, {"epoch", report.epochs},
                                        {"images_seen", steps * batch},
                                        {"message", "imported from " + source}});
  if (!status) return makeError(status.error());
  report.checkpoint_path = relative;
  return report;
}

}  // namespace

Result<CheckpointImportReport> importReferenceCheckpoint(const CheckpointImportOptions& options) {
  if (options.batch_size < 1) return makeError("the batch size must be at least 1");
  std::error_code ec;
  const fs::path target = fs::absolute(options.run_dir).lexically_normal();
  if (fs::exists(target, ec) && !(fs::is_directory(target, ec) && fs::is_empty(target, ec)))
    return makeError(target.string() + ": already exists and is not an empty folder; choose a new run folder");
  if (!fs::is_directory(target.parent_path(), ec))
    return makeError(target.parent_path().string() + ": the folder to create the run in does not exist");
  auto file = readReferenceCheckpoint(options.checkpoint);
  if (!file) return makeError(file.error());
  auto config = importedConfig(*file, options);
  if (!config) return makeError(config.error());

  StagingFolder staging(target.string() + ".importing-" + std::to_string(::getpid()));
  Result<CheckpointImportReport> report = makeError("");
  try {
    report = writeRun(*file, *config, options, staging.path());
  } catch (const c10::Error& e) {
    return makeError(options.checkpoint + ": cannot import (" + firstLine(e.what_without_backtrace()) + ")");
  }
  if (!report) return makeError(report.error());
  if (fs::exists(target, ec)) fs::remove(target, ec);  // the empty folder it may replace
  fs::rename(staging.path(), target, ec);
  if (ec) return makeError(target.string() + ": cannot move the imported run into place (" + ec.message() + ")");
  staging.committed();
  return report;
}

}  // namespace streetgan
