#include "core/train/trainer.h"

#include "core/config/config_key_table.h"
#include "core/train/launch_check.h"
#include "core/train/trainer_state.h"
#include "core/runs/event_log_tail.h"

namespace streetgan {

namespace {

// The config a resumed or restarted run continues with, as rank 0 found it.
struct StoredConfig {
  std::optional<TrainConfig> config;  ///< none: nothing to resume (a restart starts afresh)
  std::string error;                  ///< why it cannot continue
  bool runtime = false;               ///< the error is the machine's (an unreadable checkpoint)
};

// Rank 0's finding, as bytes for the other ranks: "c" + the config's JSON, "n" for no checkpoint
// (a restart before the first one), "x" for none at all (a new run, as on a first attempt),
// "e"/"r" + a config/runtime error. `continues`: a restart of the run this launch began.
std::string storedConfigPayload(const RunDirectory& run, bool resume, bool continues) {
  if (!resume && !continues) return "x";
  const auto checkpoints = run.checkpoints();
  if (checkpoints.empty())
    return resume ? "e" + run.path() + ": no checkpoint to resume from (looked in " + run.checkpointsDir() + ")"
                  : std::string("n");
  auto stored = readResumeConfig(checkpoints);
  if (!stored) return "r" + stored.error();
  return "c" + configToJson(*stored).dump();
}

StoredConfig parseStoredConfig(const std::string& payload) {
  StoredConfig out;
  if (payload.empty() || payload[0] == 'n' || payload[0] == 'x') return out;
  if (payload[0] == 'c') {
    auto config = applyConfigText(TrainConfig{}, payload.substr(1), ConfigScope::All, "rank 0's stored config");
    if (config) out.config = *config;
    else out.error = config.error();
    return out;
  }
  out.error = payload.substr(1);
  out.runtime = payload[0] == 'r';
  return out;
}

}  // namespace

Trainer::Trainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Trainer::~Trainer() = default;
const std::string& Trainer::runDirectory() const { return state_->run.path(); }
int Trainer::rank() const { return state_->group ? state_->group->rank() : 0; }
const std::string& Trainer::deviceChoice() const { return state_->device_choice; }

Result<std::unique_ptr<Trainer>> Trainer::prepare(const TrainConfig& requested, const TrainerOptions& options) {
  auto s = std::make_unique<State>();
  s->options = options;
  s->config = requested;
  if (Status joined = s->joinRanks(); !joined) return makeError(joined.error(), ErrorKind::Machine);
  s->run =
      RunDirectory(options.run_dir.empty() ? (fs::path(requested.root) / requested.name).string() : options.run_dir);
  const bool continues = s->continuesRestartedRun();
  // Everything checked before anything is written; with several ranks, all of them agree first.
  Status checked = s->checkBeforeStart(continues);
  if (s->group) checked = s->agreeToStart(checked);
  if (!checked) return makeError(checked.error(), checked.errorKind());
  if (s->writer)
    if (Status opened = s->openRunFolder(); !opened) return makeError(opened.error(), ErrorKind::Machine);
  return std::unique_ptr<Trainer>(new Trainer(std::move(s)));
}

// Every rank joins first, so a rank that cannot start is told to the others (agreeToStart)
// instead of leaving them waiting for it until the timeout.
Status Trainer::State::joinRanks() {
  if (!options.placement) return {};
  auto joined = RankGroup::connect(*options.placement);
  if (!joined) return makeError(joined.error());
  group = std::move(*joined);
  writer = group->rank() == 0;
  return {};
}

// On resume, and when a failed attempt is restarted (torchrun's or --max-restarts'), rank 0 reads
// the stored config from its newest checkpoint and hands it to the other ranks: another host
// needs no copy of the run folder. A restart before the first checkpoint starts afresh.
// A restart continues the run only where this launch began it (the log's last run_started has
// its job) and did not finish it; anything else is checked as a first attempt would be: a
// refused launch that is restarted never trains into a folder it was refused.
bool Trainer::State::continuesRestartedRun() {
  const bool restart = options.placement && options.placement->restart_count > 0;
  if (!restart || !writer) return false;
  const EventLogTail tail = readEventLogTail(run.eventsPath());
  // A log without any run_started (the attempt before died while starting) holds no run yet.
  const bool continues =
      tail.exists && !tail.finished &&
      (tail.last_started_at < 0 ? run.checkpoints().empty() : tail.last_job == options.placement->job_id);
  if (continues) {
    restart_attempt = options.placement->restart_count;
    restart_cause = tail.last_error;
  }
  return continues;
}

Status Trainer::State::checkBeforeStart(bool continues) {
  const bool restart = options.placement && options.placement->restart_count > 0;
  StoredConfig stored;
  if (options.resume || restart) {
    std::string payload = writer ? storedConfigPayload(run, options.resume, continues) : std::string();
    if (group)
      if (Status sent = group->broadcastBytesFromRankZero(payload, kMaxConfigBytes); !sent)
        payload = "r" + sent.error();
    stored = parseStoredConfig(payload);
    resuming = stored.config.has_value();
  }
  if (!stored.error.empty()) return makeError(stored.error, stored.runtime ? ErrorKind::Machine : ErrorKind::Input);
  if (resuming) {
    if (Status applied = applyResumeOverrides(*stored.config); !applied) return applied;
  } else if (writer && !continues && run.holdsRun()) {
    return makeError(run.path() +
                     ": this folder already holds a run; pass --resume to continue it, "
                     "or choose another --run-dir or name (it has " +
                     run.contents() + ")");
  }
  if (Status valid = validateConfig(config); !valid) return makeError(valid.error());
  if (Status chosen = chooseDevice(); !chosen) return chosen;
  if (Status opened = openData(); !opened) return opened;
  return prepareEvaluations();
}

// A resumed run keeps its stored config but for what the command line gives again.
Status Trainer::State::applyResumeOverrides(const TrainConfig& stored) {
  auto applied = applyConfigJson(stored, options.resume_overrides, ConfigScope::Resume, "command line");
  if (!applied) return makeError(applied.error());
  config = *applied;
  // What it learns with from here on: said at the start (announceRun), once the log is open.
  for (const ConfigKey& key : configKeyTable()) {
    if (!configKeyTunedOnResume(key.name)) continue;
    const nlohmann::json before = key.get(stored), after = key.get(config);
    if (before != after)
      resume_changes.push_back("resumed with " + key.name + " " + after.dump() + " (the run trained with " +
                               before.dump() + " until now)");
  }
  resume_sets_ada_p = stored.augment.ada_p != config.augment.ada_p;
  return {};
}

// The device and precision, CUDA graphs where asked (the launcher's rules: launch_check.h), this
// rank's collective backend, and the compute threads.
Status Trainer::State::chooseDevice() {
  LaunchWorld world;
  if (group) world.world_size = group->worldSize();
  auto checked = checkLaunchable(config, options, world);
  if (!checked) return makeError(checked.error());
  if (!*checked) return makeError("config key \"device\" is empty; allowed: auto, cpu, cuda, cuda:N or hpu");
  device = (*checked)->device;
  precision = (*checked)->precision;
  device_choice = (*checked)->description;
  if (group)
    if (Status ready = group->useDevice(device); !ready) return makeError(ready.error());
  setComputeThreads(config.threads);
  return {};
}

// The data set, its cache when one is given, and this rank's batch loader.
Status Trainer::State::openData() {
  if (config.dataroot.empty())
    return makeError("no data folder given: pass --dataroot DIR (or set \"dataroot\" in the config)");
  auto dataset = ImageDataset::open(config.dataroot, config.data.filter, DatasetPart::Train);
  if (!dataset) return makeError(dataset.error());
  SamplePipeline pipeline(config.augment, config.img_size, config.nc, config.data.reduced_decode);
  std::shared_ptr<const ImageCache> cache;
  if (!config.data.cache.empty()) {
    auto opened = ImageCache::open(config.data.cache);
    if (!opened) return makeError(opened.error(), ErrorKind::Machine);
    if (auto mismatch = BatchLoader::cacheMismatch(**opened, pipeline); !mismatch.empty()) return makeError(mismatch);
    cache = std::move(*opened);
  }
  loader = std::make_unique<BatchLoader>(std::move(*dataset), pipeline, config.batch_size,
                                         static_cast<std::uint64_t>(config.seed), cache);
  // Pinned batches copy to an accelerator asynchronously; the CPU reads them where they are.
  loader->setPinnedMemory(!device.is_cpu());
  if (group) loader->setShard(group->rank(), group->worldSize());
  return {};
}

// Every rank's own check, agreed: a rank that cannot start leaves its reason for rank 0 first
// (it may be on another host), and when any rank cannot, none starts.
Status Trainer::State::agreeToStart(const Status& checked) {
  if (!checked) (void)group->failureCause(checked.error(), false);
  // 1: the machine's failure, 2: the options' (the job's failure is then the options' too: a
  // launcher does not restart what would fail the same way).
  const auto failed = group->gatherOnHost(checked ? 0 : checked.errorKind() == ErrorKind::Machine ? 1 : 2);
  if (!checked) return checked;
  for (std::size_t r = 0; r < failed.size(); ++r) {
    if (failed[r] == 0) continue;
    const auto& p = *options.placement;
    const std::string where =
        p.nodeCount() > 1 ? " (node " + std::to_string(static_cast<int>(r) / p.local_world_size) + ")" : "";
    const std::string reason = group->reportOf(static_cast<int>(r));
    return makeError("rank " + std::to_string(r) + " of " + std::to_string(failed.size()) + where + " could not start" +
                         (reason.empty() ? " (its message is on its own standard error)" : ": " + reason) +
                         ", so no rank starts",
                     failed[r] == 2 ? ErrorKind::Input : ErrorKind::Machine);
  }
  return {};
}

void Trainer::State::emitSystem() {
  const SystemSample sample = monitor->sample(loader ? loader->bytesRead() : 0);
  events::System e;
  e.epoch = progress.epoch + 1;
  e.step = progress.step;
  e.images_seen = progress.images_seen;
  e.seconds = sample.seconds;
  e.cpu_percent = sample.cpu_percent;
  e.cores = sample.cores;
  e.rss_bytes = static_cast<double>(sample.rss_bytes);
  e.host_memory_available_bytes = static_cast<double>(sample.host_memory_available_bytes);
  e.host_memory_total_bytes = static_cast<double>(sample.host_memory_total_bytes);
  e.loader_bytes_per_s = sample.loader_bytes_per_s;
  e.has_gpu = sample.gpu.has_value();
  if (sample.gpu) {
    e.gpu_index = sample.gpu->index;
    e.gpu_utilization_percent = sample.gpu->utilization_percent;
    e.gpu_memory_used_bytes = static_cast<double>(sample.gpu->memory_used_bytes);
    e.gpu_memory_total_bytes = static_cast<double>(sample.gpu->memory_total_bytes);
    e.gpu_power_w = sample.gpu->power_w;
  }
  emit(std::move(e));
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
  s.emit(events::Error{message});
  // A restart follows (torchrun's or --max-restarts'): the run goes on, and the next attempt's
  // rank 0 writes a `restart` event with this cause. The launcher finishes the log if none comes.
  if (!(s.options.placement && s.options.placement->restartFollows())) {
    events::RunFinished finished;
    finished.status = run_status::kFailed;
    finished.message = message;
    finished.step = s.progress.step;
    s.emit(std::move(finished));
  }
  return makeError(message);
}

void Trainer::State::flushSteps() {
  for (const FlushedStep& flushed : pending->flush()) {
    const StepStats& stats = flushed.stats;
    const PendingStep& info = flushed.info;
    epoch_sum_d += stats.loss_d;
    epoch_sum_g += stats.loss_g;
    const double seconds = flushed.seconds;
    events::Step step;
    step.epoch = info.epoch;
    step.iteration = info.iteration;
    step.iterations = loader->batchesPerEpoch();
    step.step = info.step;
    step.images_seen = info.images_seen;
    step.loss_d = stats.loss_d;
    step.loss_g = stats.loss_g;
    step.d_x = stats.d_x;
    step.d_g_z1 = stats.d_g_z1;
    step.d_g_z2 = stats.d_g_z2;
    step.rt = stats.rt;
    step.images_per_s = seconds > 0 ? info.images / seconds : 0.0;
    step.data_wait_fraction = seconds > 0 ? std::min(1.0, info.wait_seconds / seconds) : 0.0;
    if (model->augment() && model->augment()->ada()) step.ada_p = stats.ada_p;
    if (model->scaler().enabled()) {
      step.loss_scale = stats.loss_scale;
      step.skipped_step = stats.skipped;
    }
    emit(std::move(step));
    if (monitor && monitor->due(kSystemEverySeconds)) emitSystem();
    // A step skipped by the loss scaler may overflow by design; any other non-finite loss means
    // the weights are no longer finite, and training on (or saving) them would only spread it.
    if (stop_error.empty() && !stats.skipped && !(std::isfinite(stats.loss_d) && std::isfinite(stats.loss_g)))
      stop_error = divergenceMessage(info.step, stats);
    watchOverfitting(stats.rt, stats.ada_p);
  }
  emitLiveMetrics();
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
    warn(message);
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
std::vector<std::string> Trainer::State::rankDevices() {
  if (!group) return {deviceName(device)};
  const std::int64_t code = device.is_cpu() ? -1 : static_cast<std::int64_t>(device.has_index() ? device.index() : 0);
  std::vector<std::string> out;
  for (const auto index : group->gatherOnHost(code + 1))
    out.push_back(index == 0 ? std::string("cpu") : generatorKind(device) + ":" + std::to_string(index - 1));
  return out;
}

// A CRC-32 of each rank's parameters, in rank order: equal values show the ranks stayed in step.
std::vector<std::int64_t> Trainer::State::rankChecksums() {
  std::uint32_t crc = 0;
  for (torch::nn::Module* net : model->nets())
    for (const auto& p : net->parameters()) {
      const torch::Tensor host = p.detach().to(torch::kCPU).contiguous();
      crc = crc32Update(crc, host.data_ptr(), static_cast<std::size_t>(host.nbytes()));
    }
  return group ? group->gatherOnHost(crc) : std::vector<std::int64_t>{crc};
}

}  // namespace streetgan
