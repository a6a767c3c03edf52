#include "core/train/trainer.h"

#include "core/data/batch_loader.h"
#include "core/data/batch_prefetcher.h"
#include "core/data/image_cache_builder.h"
#include "core/data/image_grid.h"
#include "core/eval/parzen_estimator.h"
#include "core/eval/parzen_inputs.h"
#include "core/model/weight_init.h"
#include "core/runs/event_log.h"
#include "core/runs/process_identity.h"
#include "core/runs/run_directory.h"
#include "core/runs/tensorboard_recorder.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/train/dcgan_step.h"
#include "core/train/device_batch_feeder.h"
#include "core/train/rank_group.h"
#include "core/train/step_stats_queue.h"
#include "core/train/system_monitor.h"
#include "core/util/atomic_file.h"
#include "core/util/crc32.h"
#include "core/util/exception_message.h"
#include "core/util/torch_compat.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <filesystem>
#include <sstream>

namespace streetgan {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// How often rank 0 writes a `system` event (checked after each logged step).
constexpr double kSystemEverySeconds = 5.0;

struct Trainer::State {
  TrainConfig config;
  TrainerOptions options;
  RunDirectory run{""};
  c10::Device device{c10::kCPU};
  Precision precision = Precision::Fp32;
  std::unique_ptr<BatchLoader> loader;
  std::unique_ptr<DcganStep> model;
  EventLog events;
  TrainingProgress progress;
  torch::Tensor fixed_noise;
  at::Generator noise_rng;
  std::string resumed_from;
  std::int64_t last_checkpoint_step = -1;
  std::int64_t last_sample_step = -1;
  std::int64_t skipped_files = 0;
  std::string first_skip_reason;
  torch::Tensor parzen_valid, parzen_test;  ///< held-out rows, loaded once when Parzen is on
  std::unique_ptr<RankGroup> group;  ///< the other ranks of a distributed run; null alone
  bool writer = true;                ///< rank 0 (or alone): writes events, files and checkpoints
  std::unique_ptr<SystemMonitor> monitor;  ///< rank 0's `system` events
  std::unique_ptr<TensorBoardRecorder> tensorboard;  ///< rank 0's copy of the events for TensorBoard

  /// The first reason the run cannot go on found while writing events or reading the flushed
  /// steps: events.jsonl could not be appended to, or a step's losses are not finite.
  std::string stop_error;
  std::unique_ptr<StepStatsQueue> pending;  ///< steps whose statistics are still on the device
  double epoch_sum_d = 0, epoch_sum_g = 0;   ///< over the epoch's flushed steps

  void emit(const std::string& type, json fields) {
    if (!writer) return;
    if (options.on_event || tensorboard) {
      json copy = fields;
      copy["type"] = type;
      if (options.on_event) options.on_event(copy);
      if (tensorboard) {
        copy["time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        if (Status recorded = tensorboard->record(copy); !recorded) {
          // TensorBoard's copy is a convenience: training and events.jsonl go on without it.
          tensorboard.reset();
          emit("warning", {{"message", "TensorBoard files stopped: " + recorded.error()}});
        }
      }
    }
    if (Status written = events.emit(type, std::move(fields)); !written && stop_error.empty())
      stop_error = written.error();
  }
  bool stopRequested() const {
    return options.stop_requested && options.stop_requested->load(std::memory_order_relaxed);
  }
  Status writeSamples();
  void emitSystem();
  Status writeCheckpoint();
  void evaluateParzen();
  void evaluateParzenHere();
  Status loadParzenSplits();
  Status restoreLatest();
  void flushSteps();
  std::string divergenceMessage(std::int64_t step, const StepStats& stats) const;
  void continueWithWorldSize();
  torch::Tensor drawNoise(std::int64_t n, std::int64_t n_job, bool equal_shares);
  json rankDevices();
  json rankChecksums();
  Result<RunOutcome> loop();
};

namespace {

std::string relativeTo(const std::string& path, const std::string& base) {
  return fs::path(path).lexically_relative(base).generic_string();
}

// Noise for the training steps and the fixed sample noise come from their own generators, so
// sampling never shifts the training stream and both are restored exactly on resume.
at::Generator makeCpuGenerator(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

// The training latents are drawn on the device (no host copy per step) from a generator of
// the device's own kind, seeded like the CPU one: on the CPU it is the same stream as before.
at::Generator makeDeviceGenerator(const c10::Device& device, std::uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device).clone();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

std::string generatorKind(const c10::Device& device) { return device.is_cpu() ? "cpu" : c10::DeviceTypeName(device.type(), true); }

}  // namespace

Trainer::Trainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Trainer::~Trainer() = default;
const std::string& Trainer::runDirectory() const { return state_->run.path(); }
int Trainer::rank() const { return state_->group ? state_->group->rank() : 0; }

Result<std::unique_ptr<Trainer>> Trainer::prepare(const TrainConfig& requested,
                                                  const TrainerOptions& options,
                                                  PrepareFailure* failure) {
  if (failure) *failure = PrepareFailure::Config;
  const auto runtime = [failure](const std::string& message) {
    if (failure) *failure = PrepareFailure::Runtime;
    return makeError(message);
  };
  auto s = std::make_unique<State>();
  s->options = options;
  s->config = requested;
  if (options.placement) {
    // Every rank joins first, so a rank that cannot start is told to the others (below) instead
    // of leaving them waiting for it until the timeout.
    auto group = RankGroup::connect(*options.placement);
    if (!group) return runtime(group.error());
    s->group = std::move(*group);
    s->writer = s->group->rank() == 0;
  }
  // Everything checked before anything is written; with several ranks, all of them agree first.
  const Status checked = [&]() -> Status {
    const std::string run_path = options.run_dir.empty()
                                     ? (fs::path(requested.root) / requested.name).string()
                                     : options.run_dir;
    s->run = RunDirectory(run_path);

    if (options.resume) {
      const auto checkpoints = s->run.checkpoints();
      if (checkpoints.empty())
        return makeError(run_path + ": no checkpoint to resume from (looked in " +
                         s->run.checkpointsDir() + ")");
      auto stored = readCheckpointConfig(checkpoints.back());
      if (!stored && checkpoints.size() > 1) stored = readCheckpointConfig(checkpoints[checkpoints.size() - 2]);
      if (!stored) return runtime(stored.error());
      s->config = *stored;
      if (options.dataroot) s->config.dataroot = *options.dataroot;
      if (options.epochs) s->config.epochs = *options.epochs;
      if (options.device) s->config.device = *options.device;
      if (options.precision) s->config.precision = *options.precision;
      if (options.threads) s->config.threads = *options.threads;
      if (options.cache) s->config.data.cache = *options.cache;
      if (options.workers) s->config.data.workers = *options.workers;
    } else if (s->writer && s->run.holdsRun()) {
      return makeError(run_path + ": this folder already holds a run; pass --resume to continue it, "
                       "or choose another --run-dir or name");
    }
    if (Status valid = validateConfig(s->config); !valid) return makeError(valid.error());

    auto device = resolveDevice(options.placement ? rankDeviceSpec(s->config.device, *options.placement)
                                                  : s->config.device);
    if (!device) return makeError(device.error());
    s->device = *device;
    if (s->group)
      if (Status ready = s->group->useDevice(s->device); !ready) return makeError(ready.error());
    auto precision = resolvePrecision(s->config.precision, s->device);
    if (!precision)
      return makeError(options.resume ? precision.error() + " (resume with --precision to choose another)"
                                      : precision.error());
    s->precision = *precision;
    setComputeThreads(s->config.threads);

    if (s->config.dataroot.empty())
      return makeError("no data folder given: pass --dataroot DIR (or set \"dataroot\" in the config)");
    auto dataset = ImageDataset::open(s->config.dataroot, s->config.data.filter, DatasetPart::Train);
    if (!dataset) return makeError(dataset.error());
    SamplePipeline pipeline(s->config.augment, s->config.img_size, s->config.nc,
                            s->config.data.reduced_decode);
    std::shared_ptr<const ImageCache> cache;
    if (!s->config.data.cache.empty()) {
      auto opened = ImageCache::open(s->config.data.cache);
      if (!opened) return runtime(opened.error());
      if (auto mismatch = BatchLoader::cacheMismatch(**opened, pipeline); !mismatch.empty())
        return makeError(mismatch);
      cache = std::move(*opened);
    }
    s->loader = std::make_unique<BatchLoader>(std::move(*dataset), pipeline, s->config.batch_size,
                                              static_cast<std::uint64_t>(s->config.seed), cache);
    // Pinned batches copy to an accelerator asynchronously; the CPU reads them where they are.
    s->loader->setPinnedMemory(!s->device.is_cpu());
    if (s->group) s->loader->setShard(s->group->rank(), s->group->worldSize());
    if (s->config.parzen.every_epochs > 0 && s->writer)
      if (Status loaded = s->loadParzenSplits(); !loaded) return makeError(loaded.error());
    return {};
  }();
  if (s->group) {
    const auto failed = s->group->gatherOnHost(checked ? 0 : 1);
    if (checked)
      for (std::size_t r = 0; r < failed.size(); ++r)
        if (failed[r] != 0)
          return runtime("rank " + std::to_string(r) + " of " + std::to_string(failed.size()) +
                         " could not start (its message is on its own standard error), so no rank starts");
  }
  if (!checked) return makeError(checked.error());
  if (!s->writer) return std::unique_ptr<Trainer>(new Trainer(std::move(s)));
  if (Status created = s->run.create(); !created) return runtime(created.error());
  auto events = EventLog::open(s->run.eventsPath(), options.events_to_stdout);
  if (!events) return runtime(events.error());
  s->events = std::move(*events);
  return std::unique_ptr<Trainer>(new Trainer(std::move(s)));
}

// With several ranks, every rank tries the same checkpoint (the k-th newest) together, and a rank
// keeps it only when every rank read it and they all read the same step: one rank falling back to
// an older checkpoint alone would train from another step, and its collectives would not match.
Status Trainer::State::restoreLatest() {
  const auto checkpoints = run.checkpoints();
  constexpr std::int64_t kFailed = -1, kNoneLeft = -2;
  for (std::size_t k = 0;; ++k) {
    const bool have = k < checkpoints.size();
    const std::string path = have ? checkpoints[checkpoints.size() - 1 - k] : std::string();
    auto restored = have ? loadCheckpoint(path, *model) : Result<CheckpointState>(makeError("no checkpoint left"));
    std::int64_t mine = have ? (restored ? restored->progress.step : kFailed) : kNoneLeft;
    if (group) {
      const auto all = group->gatherOnHost(mine);
      if (std::all_of(all.begin(), all.end(), [](std::int64_t v) { return v == kNoneLeft; })) break;
      const bool agreed = std::all_of(all.begin(), all.end(), [&](std::int64_t v) { return v == all.front(); });
      if (restored && !agreed) {
        const auto other = std::find_if(all.begin(), all.end(), [&](std::int64_t v) { return v != mine; });
        restored = makeError("rank " + std::to_string(other - all.begin()) +
                             (*other >= 0 ? " read step " + std::to_string(*other) + " from its checkpoint, this rank step " +
                                                std::to_string(mine)
                                          : " could not read its checkpoint " + std::to_string(checkpoints.size() - k) +
                                                " of " + std::to_string(checkpoints.size())));
      }
    } else if (!have) {
      break;
    }
    if (restored) {
      progress = restored->progress;
      fixed_noise = restored->fixed_noise.to(device);
      resumed_from = relativeTo(path, run.path());
      if (restored->noise_rng_kind == generatorKind(device)) {
        noise_rng.set_state(restored->noise_rng_state);
      } else {
        // Another kind of device draws from another kind of generator: seed it from the step.
        noise_rng = makeDeviceGenerator(device, static_cast<std::uint64_t>(config.seed) * 2 + 1 +
                                                    static_cast<std::uint64_t>(progress.step));
        emit("warning", {{"message", "the training noise was drawn on " + restored->noise_rng_kind +
                                         " and this run continues on " + deviceName(device) +
                                         "; its noise generator is seeded afresh from the step"}});
      }
      if (!restored->scaler_restored)
        emit("warning", {{"message", "the checkpoint was trained in " + restored->precision +
                                         " and this run continues in " + precisionName(precision) +
                                         "; the loss scaler starts afresh at scale " +
                                         std::to_string(static_cast<long long>(model->scaler().options().init_scale))}});
      last_checkpoint_step = progress.step;
      return {};
    }
    if (have)
      emit("warning", {{"message", restored.error() + "; trying the previous checkpoint"},
                       {"path", relativeTo(path, run.path())}});
    // A failed load can leave the model half restored: start again from a fresh one.
    model = std::make_unique<DcganStep>(config, device, precision);
  }
  return makeError(run.path() + ": no readable checkpoint to resume from" +
                   (group ? std::string(" that every rank could read") : std::string()));
}

void Trainer::State::emitSystem() {
  const SystemSample sample = monitor->sample(loader ? loader->bytesRead() : 0);
  json body = {{"epoch", progress.epoch + 1}, {"step", progress.step}, {"images_seen", progress.images_seen},
               {"seconds", sample.seconds}, {"cpu_percent", sample.cpu_percent}, {"cores", sample.cores},
               {"rss_bytes", sample.rss_bytes},
               {"host_memory_available_bytes", sample.host_memory_available_bytes},
               {"host_memory_total_bytes", sample.host_memory_total_bytes},
               {"loader_bytes_per_s", sample.loader_bytes_per_s}};
  if (sample.gpu) {
    body["gpu"] = {{"index", sample.gpu->index}, {"utilization_percent", sample.gpu->utilization_percent},
                   {"memory_used_bytes", sample.gpu->memory_used_bytes},
                   {"memory_total_bytes", sample.gpu->memory_total_bytes}, {"power_w", sample.gpu->power_w}};
  }
  emit("system", std::move(body));
}

Status Trainer::State::writeSamples() {
  if (!writer || last_sample_step == progress.step) return {};
  // The grid uses BatchNorm's batch statistics over the fixed noise batch, as the reference
  // tool's grids did: early in training the running statistics are far from the batch ones and
  // eval-mode samples come out flat grey. The running statistics are restored afterwards, so
  // writing a grid never changes the model (resumed runs stay bit-identical).
  torch::Tensor images;
  {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> saved;
    for (const auto& buffer : model->generator()->buffers()) saved.push_back(buffer.clone());
    model->generator()->train();
    images = model->generator()->forward(fixed_noise);
    std::size_t i = 0;
    for (auto& buffer : model->generator()->buffers()) buffer.copy_(saved[i++]);
  }
  const std::string relative = run.sampleRelativePath(progress.step);
  if (Status written = writeImageGrid(images, (fs::path(run.path()) / relative).string()); !written)
    return written;
  last_sample_step = progress.step;
  emit("samples", {{"path", relative}, {"step", progress.step},
                          {"epoch", progress.epoch + (progress.batch > 0 ? 1 : 0)},
                          {"images_seen", progress.images_seen}});
  return {};
}

Status Trainer::State::writeCheckpoint() {
  if (!writer || last_checkpoint_step == progress.step) return {};
  const std::string path = run.checkpointPath(progress.step);
  CheckpointState state;
  state.progress = progress;
  state.progress.world_size = group ? group->worldSize() : 1;
  state.fixed_noise = fixed_noise;
  state.noise_rng_state = noise_rng.get_state();
  state.noise_rng_kind = generatorKind(device);
  state.precision = precisionName(precision);
  state.config = config;
  if (Status saved = saveCheckpoint(path, *model, state); !saved) return saved;
  last_checkpoint_step = progress.step;
  run.pruneCheckpoints(config.keep_checkpoints);
  emit("checkpoint", {{"path", relativeTo(path, run.path())}, {"step", progress.step},
                             {"epoch", progress.epoch}, {"images_seen", progress.images_seen}});
  return {};
}

Status Trainer::State::loadParzenSplits() {
  const auto& filter = config.data.filter;
  if (!filter.hasHoldout())
    return makeError("config key \"parzen.every_epochs\": Parzen evaluation needs a held-out split "
                     "(data.holdout_cities or data.holdout_fraction; --holdout-cities, --holdout-fraction)");
  auto held = ImageDataset::open(config.dataroot, filter, DatasetPart::Holdout);
  if (!held) return makeError("Parzen held-out split: " + held.error());
  if (held->size() < 2)
    return makeError(config.dataroot + ": the held-out split has " + std::to_string(held->size()) +
                     " image(s); Parzen evaluation needs at least 2 (validation and test)");
  // One seeded shuffle of the held-out images: validation first, test after, never overlapping.
  const auto seed = static_cast<std::uint64_t>(config.seed);
  const std::size_t n_valid = std::min<std::size_t>(static_cast<std::size_t>(config.parzen.n_valid), held->size() / 2);
  auto valid = loadImageRows(shuffledPaths(*held, seed, 0, n_valid), config.img_size, config.nc, config.augment.crop_scale);
  if (!valid) return makeError("Parzen validation split: " + valid.error());
  auto test = loadImageRows(shuffledPaths(*held, seed, n_valid, static_cast<std::size_t>(config.parzen.n_test)),
                            config.img_size, config.nc, config.augment.crop_scale);
  if (!test) return makeError("Parzen test split: " + test.error());
  parzen_valid = valid->rows;
  parzen_test = test->rows;
  return {};
}

// With several ranks, rank 0 evaluates on a thread of its own while every rank's main thread meets
// the others twice a second: an evaluation longer than --dist-timeout would otherwise leave the
// other ranks waiting in their next collective until it timed out and ended the job.
void Trainer::State::evaluateParzen() {
  if (!group) return evaluateParzenHere();
  std::atomic<bool> done{!writer};
  std::string failure;
  std::thread worker;
  if (writer)
    worker = std::thread([&] {
      try {
        evaluateParzenHere();
      } catch (const std::exception& e) {
        failure = firstLine(e.what());
      }
      done = true;
    });
  try {
    while (group->gatherOnHost(done ? 1 : 0).front() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } catch (...) {
    if (worker.joinable()) worker.join();  // the evaluation ends on its own; the group's failure goes on up
    throw;
  }
  if (worker.joinable()) worker.join();
  if (!failure.empty()) emit("warning", {{"message", "Parzen evaluation failed: " + failure}});
}

void Trainer::State::evaluateParzenHere() {
  if (!writer) return;
  const auto start = Clock::now();
  // The same noise at every evaluation, from its own generator: the curve over epochs compares
  // like with like, and the training streams are untouched (eval-mode G changes no buffer).
  const torch::Tensor samples = generateSampleRows(model->generator(), config.nz, config.parzen.n_samples,
                                                   static_cast<std::uint64_t>(config.seed) * 2 + 7,
                                                   std::max(1, config.batch_size), device, false);
  model->generator()->train();
  ParzenOptions options;
  if (!config.parzen.sigmas.empty()) options.sigmas = config.parzen.sigmas;
  options.device = device;
  options.progress = [this](double) { return !stopRequested(); };
  auto result = ParzenEstimator::evaluate(samples, parzen_valid, parzen_test, options);
  if (!result) {
    if (!stopRequested()) emit("warning", {{"message", "Parzen evaluation failed: " + result.error()}});
    return;
  }
  json curve = json::array();
  for (const auto& point : result->curve) curve.push_back({{"sigma", point.sigma}, {"mean_ll", point.mean_ll}});
  emit("parzen", {{"epoch", progress.epoch}, {"step", progress.step}, {"images_seen", progress.images_seen},
                  {"sigma", result->sigma}, {"mean_ll", result->mean_ll}, {"stderr", result->stderr_ll},
                  {"n_test", result->n_test}, {"n_valid", result->n_valid}, {"n_samples", result->n_samples},
                  {"curve", curve},
                  {"seconds", std::chrono::duration<double>(Clock::now() - start).count()}});
}

Result<RunOutcome> Trainer::run() {
  State& s = *state_;
  std::string message;
  try {
    auto outcome = s.loop();
    if (outcome) return outcome;
    message = outcome.error();
  } catch (...) {
    message = "training failed: " + exceptionMessage(std::current_exception());
  }
  // With several ranks: say which rank failed and why (rank 0 asks the others through the store).
  if (s.group) message = s.group->failureCause(message, s.group->collectiveFailed());
  s.emit("error", {{"message", message}});
  s.emit("run_finished", {{"status", "failed"}, {"message", message}, {"step", s.progress.step}});
  return makeError(message);
}

void Trainer::State::flushSteps() {
  for (const FlushedStep& flushed : pending->flush()) {
    const StepStats& stats = flushed.stats;
    const PendingStep& info = flushed.info;
    epoch_sum_d += stats.loss_d;
    epoch_sum_g += stats.loss_g;
    const double seconds = flushed.seconds;
    json step = {{"epoch", info.epoch},               {"iteration", info.iteration},
                 {"iterations", loader->batchesPerEpoch()}, {"step", info.step},
                 {"images_seen", info.images_seen}, {"loss_d", stats.loss_d},
                 {"loss_g", stats.loss_g},          {"d_x", stats.d_x},
                 {"d_g_z1", stats.d_g_z1},          {"d_g_z2", stats.d_g_z2},
                 {"images_per_s", seconds > 0 ? info.images / seconds : 0.0},
                 {"data_wait_fraction", seconds > 0 ? std::min(1.0, info.wait_seconds / seconds) : 0.0}};
    if (model->scaler().enabled()) {
      step["loss_scale"] = stats.loss_scale;
      step["skipped_step"] = stats.skipped;
    }
    emit("step", std::move(step));
    if (monitor && monitor->due(kSystemEverySeconds)) emitSystem();
    // A step skipped by the loss scaler may overflow by design; any other non-finite loss means
    // the weights are no longer finite, and training on (or saving) them would only spread it.
    if (stop_error.empty() && !stats.skipped && !(std::isfinite(stats.loss_d) && std::isfinite(stats.loss_g)))
      stop_error = divergenceMessage(info.step, stats);
  }
}

std::string Trainer::State::divergenceMessage(std::int64_t step, const StepStats& stats) const {
  std::ostringstream message;
  message << "the losses stopped being finite at step " << step << " (loss_d " << stats.loss_d << ", loss_g "
          << stats.loss_g << "): the model's weights are no longer usable, so training stops here and no "
             "checkpoint of them is written (the last checkpoint holds the last finite ones); a lower lr or weight_decay "
             "may avoid it";
  if (device.is_cpu() && at::get_num_threads() > 1 && torch_compat::cpuThreadsMayGiveNan())
    message << ". If it happens from the first steps: some LibTorch 2.x CPU builds (Debian trixie's 2.6 on "
               "some machines) compute NaN gradients with more than one thread; try --threads 1";
  return message.str();
}

void Trainer::State::continueWithWorldSize() {
  const std::int64_t world = group ? group->worldSize() : 1;
  if (progress.world_size != world && progress.batch > 0) {
    // The checkpoint's batch index counts batches of another size: continue at the same place
    // in the epoch's order, rounded down to a whole batch of this run (a few images of the epoch
    // may be seen twice).
    const std::int64_t position = progress.batch * progress.world_size * config.batch_size;
    const std::int64_t batch = position / (world * config.batch_size);
    const std::int64_t resumed_at = batch * world * config.batch_size;
    std::string message = "the checkpoint was written by " + std::to_string(progress.world_size) +
                          " rank(s) and this run has " + std::to_string(world) + ": it continues at image " +
                          std::to_string(resumed_at) + " of epoch " + std::to_string(progress.epoch + 1);
    if (resumed_at != position)
      message += " (the checkpoint stopped at image " + std::to_string(position) + "; the " +
                 std::to_string(position - resumed_at) + " images between are trained again)";
    emit("warning", {{"message", message}});
    progress.batch = batch;
  }
  progress.world_size = world;
}

// The training latents of this rank's n images. Alone: n rows. As one of W ranks with equal
// shares, the rows rank, rank + W, ... of the job's n_job rows, which are exactly the rows one
// process with the whole batch draws (BatchLoader::setShard puts its images at those places);
// with unequal shares (skipped files) W·batch_size rows, so every rank still draws alike.
torch::Tensor Trainer::State::drawNoise(std::int64_t n, std::int64_t n_job, bool equal_shares) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  if (!group) return torch::randn({n, config.nz, 1, 1}, noise_rng, options);
  const std::int64_t world = group->worldSize();
  const std::int64_t rows = equal_shares ? n_job : world * config.batch_size;
  const torch::Tensor job = torch::randn({rows, config.nz, 1, 1}, noise_rng, options);
  return job.slice(0, group->rank(), rows, world).narrow(0, 0, n).contiguous();
}

// Every rank's device, in rank order ("cpu", "cuda:1", ...).
json Trainer::State::rankDevices() {
  if (!group) return json::array({deviceName(device)});
  const std::int64_t code = device.is_cpu() ? -1 : static_cast<std::int64_t>(device.has_index() ? device.index() : 0);
  json out = json::array();
  for (const auto index : group->gatherOnHost(code + 1))
    out.push_back(index == 0 ? std::string("cpu") : generatorKind(device) + ":" + std::to_string(index - 1));
  return out;
}

// A CRC-32 of each rank's parameters, in rank order: equal values show the ranks stayed in step.
json Trainer::State::rankChecksums() {
  std::uint32_t crc = 0;
  for (torch::nn::Module* net : model->nets())
    for (const auto& p : net->parameters()) {
      const torch::Tensor host = p.detach().to(torch::kCPU).contiguous();
      crc = crc32Update(crc, host.data_ptr(), static_cast<std::size_t>(host.nbytes()));
    }
  const auto all = group ? group->gatherOnHost(crc) : std::vector<std::int64_t>{crc};
  json out = json::array();
  for (const auto value : all) out.push_back(value);
  return out;
}

Result<RunOutcome> Trainer::State::loop() {
  const int removed = writer ? run.removeTemporaryFiles() : 0;
  model = std::make_unique<DcganStep>(config, device, precision);
  noise_rng = makeDeviceGenerator(device, static_cast<std::uint64_t>(config.seed) * 2 + 1);
  fixed_noise = torch::randn({config.sample_count, config.nz, 1, 1},
                             makeCpuGenerator(static_cast<std::uint64_t>(config.seed) * 2),
                             torch::kFloat32)
                    .to(device);
  if (options.resume)
    if (Status restored = restoreLatest(); !restored) return makeError(restored.error());
  continueWithWorldSize();
  if (group) {
    // A failed checkpoint load makes a fresh model: hand it the group only now.
    model->setRankGroup(group.get(), config.sync_batchnorm);
    model->broadcastFromRankZero();
  }
  if (writer)
    if (Status written = writeFileAtomically(run.configPath(), configToJson(config).dump(2) + "\n"); !written)
      return makeError(written.error());

  const std::int64_t batches = loader->batchesPerEpoch();
  const int workers = resolveWorkerCount(config.data.workers);
  if (writer && config.tensorboard)
    tensorboard = std::make_unique<TensorBoardRecorder>(run.path(), (std::filesystem::path(run.path()) / "tensorboard").string());
  emit("run_started",
       {{"config", configToJson(config)},
        {"device", deviceName(device)},
        {"precision", precisionName(precision)},
        {"params_g", countParameters(*model->generator())},
        {"params_d", countParameters(*model->discriminator())},
        {"resumed_from", resumed_from.empty() ? json(nullptr) : json(resumed_from)},
        {"epoch", progress.epoch},
        {"step", progress.step},
        {"images_seen", progress.images_seen},
        {"dataset", {{"root", loader->dataset().root()},
                     {"layout", layoutName(loader->dataset().layout())},
                     {"images", loader->datasetSize()},
                     {"held_out", loader->dataset().otherPartSize()},
                     {"cache", config.data.cache.empty() ? json(nullptr) : json(config.data.cache)},
                     {"decode_reduction", loader->pipeline().reduction()},
                     {"workers", workers}}},
        {"batches_per_epoch", batches},
        {"world_size", group ? group->worldSize() : 1},
        {"backend", group ? json(group->backend()) : json(nullptr)},
        {"devices", rankDevices()},
        {"threads", at::get_num_threads()},
        {"pid", static_cast<long long>(::getpid())},
        // So whoever signals the pid later can tell it is still this process (0: no /proc).
        {"pid_start_time", processStartTime(::getpid()).value_or(0)},
        {"version", STREETGAN_VERSION}});
  if (writer) {
    monitor = std::make_unique<SystemMonitor>(deviceName(device));
    if (!monitor->gpuUnavailableReason().empty())
      emit("warning", {{"message", "no GPU figures in the system events: " + monitor->gpuUnavailableReason()}});
  }
  if (removed > 0)
    emit("warning", {{"message", "removed " + std::to_string(removed) +
                                     " unfinished file(s) left by an earlier process"}});
  if (loader->uncachedCount() > 0)
    emit("warning", {{"message", std::to_string(loader->uncachedCount()) + " of " +
                                     std::to_string(loader->datasetSize()) + " images are not in the cache " +
                                     config.data.cache + "; they are decoded from their files"}});
  BatchPrefetcher prefetcher(*loader, workers, config.data.prefetch, progress.epoch, progress.batch,
                             config.epochs);
  DeviceBatchFeeder feeder(device, config.augment.noise_std, static_cast<std::uint64_t>(config.seed));
  if (group) feeder.setShard(group->rank(), group->worldSize());
  pending = std::make_unique<StepStatsQueue>(device.is_cpu(), config.sync_every_steps);
  // Without a single readable image after this many attempts the data set is unusable.
  const std::int64_t give_up_after = std::min<std::int64_t>(loader->datasetSize(), 1000);
  // A step's time runs from the fetch of its batch (waiting for the loader, the data wait) to
  // the end of the step; the batch is fetched and staged while the step before it runs.
  Clock::time_point staged_fetch_start = Clock::now();
  double staged_wait = 0;
  auto stageNext = [&]() -> Status {
    if (!prefetcher.hasNext()) return {};
    staged_fetch_start = Clock::now();
    auto next = prefetcher.next();
    if (!next) return makeError(next.error());
    feeder.stage(std::move(*next));
    staged_wait = std::chrono::duration<double>(Clock::now() - staged_fetch_start).count();
    return {};
  };
  // After work between steps (grids, checkpoints, Parzen) the staged batch counts as fetched
  // just now, and the timing window starts again.
  auto resumeTiming = [&] {
    staged_fetch_start = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(staged_wait));
    pending->restartWindow();
  };

  bool stopped = false;
  while (progress.epoch < config.epochs && !stopped) {
    const auto epoch_start = Clock::now();
    epoch_sum_d = epoch_sum_g = 0;
    std::int64_t steps_in_epoch = 0, images_in_epoch = 0, skipped_in_epoch = 0;
    while (progress.batch < batches) {
      if (!group && stopRequested()) {
        stopped = true;
        break;
      }
      if (!feeder.hasStaged())
        if (Status staged = stageNext(); !staged) return makeError(staged.error());
      const auto t0 = staged_fetch_start;
      const double wait = staged_wait;
      DeviceBatch batch = feeder.take();
      const std::int64_t n = batch.images.size(0);
      // Ranks agree before every step: on stopping (a signal to any rank stops all at this
      // step; the batch taken is served again on resume), and on the batch sizes.
      std::int64_t n_job = n;
      bool equal_shares = true, any_empty = n == 0;
      if (group) {
        const auto agreed = group->sumOnHost({stopRequested() ? 1 : 0, n, n * n, n == 0 ? 1 : 0});
        if (agreed[0] > 0) {
          stopped = true;
          break;
        }
        n_job = agreed[1];
        // Equal shares exactly when sum(n²)·W = (sum n)² (Cauchy-Schwarz).
        equal_shares = agreed[2] * group->worldSize() == agreed[1] * agreed[1];
        any_empty = agreed[3] > 0;
      }
      for (const auto& skipped : batch.skipped) {
        ++skipped_files;
        ++skipped_in_epoch;
        if (first_skip_reason.empty()) first_skip_reason = skipped.reason;
        emit("warning", {{"message", skipped.reason}, {"path", skipped.path},
                         {"skipped_total", skipped_files}});
      }
      if (progress.images_seen == 0 && batch.images.size(0) == 0 && skipped_files >= give_up_after)
        return makeError(loader->dataset().root() + ": none of the first " +
                         std::to_string(skipped_files) + " images could be read (the first: " +
                         first_skip_reason + ")");
      ++progress.batch;
      if (any_empty) continue;
      const auto noise = drawNoise(n, n_job, equal_shares);
      torch::Tensor values = model->trainStep(batch.images, noise);
      const auto t2 = Clock::now();
      // The next batch is fetched and its copy started while this step runs on an accelerator.
      if (Status staged = stageNext(); !staged) return makeError(staged.error());
      ++progress.step;
      progress.images_seen += n_job;
      ++steps_in_epoch;
      images_in_epoch += n_job;
      PendingStep info;
      info.epoch = progress.epoch + 1;
      info.iteration = progress.batch;
      info.step = progress.step;
      info.images_seen = progress.images_seen;
      info.images = n_job;
      info.host_seconds = std::chrono::duration<double>(t2 - t0).count();
      info.wait_seconds = wait;
      pending->push(info, std::move(values));
      const bool log_point = progress.step % config.log_frequency == 0;
      if (log_point || pending->shouldFlush(Clock::now())) flushSteps();
      if (!stop_error.empty()) return makeError(stop_error);
      if (log_point) {
        if (Status s = writeSamples(); !s) return makeError(s.error());
        resumeTiming();
      }
    }
    flushSteps();
    if (!stop_error.empty()) return makeError(stop_error);
    if (stopped) break;
    if (images_in_epoch == 0 && progress.step == 0)
      return makeError(loader->dataset().root() + ": not one image could be read in epoch " +
                       std::to_string(progress.epoch + 1));
    ++progress.epoch;
    progress.batch = 0;
    emit("epoch_end",
         {{"epoch", progress.epoch}, {"epochs", config.epochs}, {"step", progress.step},
          {"images_seen", progress.images_seen},
          {"steps", steps_in_epoch},
          {"images", images_in_epoch},
          {"skipped_files", skipped_in_epoch},
          {"mean_loss_d", steps_in_epoch ? epoch_sum_d / steps_in_epoch : 0.0},
          {"mean_loss_g", steps_in_epoch ? epoch_sum_g / steps_in_epoch : 0.0},
          {"seconds", std::chrono::duration<double>(Clock::now() - epoch_start).count()}});
    if (Status s = writeSamples(); !s) return makeError(s.error());
    if (config.parzen.every_epochs > 0 && progress.epoch % config.parzen.every_epochs == 0) evaluateParzen();
    if (progress.epoch % config.save_frequency == 0 || progress.epoch == config.epochs)
      if (Status s = writeCheckpoint(); !s) return makeError(s.error());
    resumeTiming();
  }
  if (stopped)
    if (Status s = writeCheckpoint(); !s) return makeError(s.error());
  json finished = {{"status", stopped ? "stopped" : "completed"}, {"epoch", progress.epoch},
                   {"step", progress.step}, {"images_seen", progress.images_seen}};
  if (group) {
    finished["rank_checksums"] = rankChecksums();
    for (const auto& value : finished["rank_checksums"])
      if (value != finished["rank_checksums"][0]) {
        emit("warning", {{"message", "the ranks ended with different parameters (rank_checksums differ)"}});
        break;
      }
  }
  if (monitor) emitSystem();
  emit("run_finished", std::move(finished));
  return stopped ? RunOutcome::Stopped : RunOutcome::Completed;
}

}  // namespace streetgan
