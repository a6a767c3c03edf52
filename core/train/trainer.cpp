#include "core/train/trainer.h"

#include "core/train/trainer_state.h"

#include "core/runs/event_log_tail.h"
#include "core/util/regular_file.h"

namespace streetgan {

namespace {

// Rank 0 reads a checkpoint whole to send it to the other ranks; a file past this is not ours.
constexpr std::int64_t kMaxCheckpointBytes = std::int64_t{16} << 30;

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
  auto stored = readCheckpointConfig(checkpoints.back());
  if (!stored && checkpoints.size() > 1) stored = readCheckpointConfig(checkpoints[checkpoints.size() - 2]);
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
  return {};
}

// The device and precision, CUDA graphs where asked, and the compute threads.
Status Trainer::State::chooseDevice() {
  auto chosen = resolveDevice(options.placement ? rankDeviceSpec(config.device, *options.placement) : config.device);
  if (!chosen) return makeError(chosen.error());
  device = *chosen;
  if (group)
    if (Status ready = group->useDevice(device); !ready) return makeError(ready.error());
  auto resolved = resolvePrecision(config.precision, device);
  if (!resolved)
    return makeError(options.resume ? resolved.error() + " (resume with --precision to choose another)"
                                    : resolved.error());
  precision = *resolved;
  device_choice = describeDeviceChoice(config.device, device, precision);
  if (config.cuda_graphs) {
    const std::string refused = cudaGraphsRefusal(device, group ? group->worldSize() : 1, device_choice);
    if (!refused.empty())
      return makeError(options.resume && !options.resume_overrides.contains("cuda_graphs")
                           ? refused + " (resume with --cuda-graphs off)"
                           : refused);
    device_choice += "; the step runs as a CUDA graph";
  }
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

// Rank 0's evaluations during training: Parzen's held-out splits, the quality metrics' worker.
Status Trainer::State::prepareEvaluations() {
  if (!writer) return {};
  if (config.parzen.every_epochs > 0)
    if (Status loaded = loadParzenSplits(); !loaded) return makeError(loaded.error());
  if (config.metrics.every_epochs <= 0 && config.metrics.every_images <= 0) return {};
  if (config.nc != 3)
    return makeError(
        "config key \"metrics.every_epochs\": the quality metrics compare RGB images; this run "
        "trains on " +
        std::to_string(config.nc) + " channel(s)");
  auto suite = QualitySuiteOptions::forTraining(config);
  if (!suite) return makeError(suite.error());
  if (auto problem = QualitySuite::unmet(config.metrics.n_samples, config.metrics.n_train, config.img_size, *suite))
    return makeError("config keys \"metrics.n_samples\" and \"metrics.n_train\": " + *problem);
  live_metrics = std::make_unique<LiveQualityMetrics>(config);
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

// Rank 0 alone writes: the run folder, then its event log. When either fails, the folders made
// for it go again (empty ones only): a checkpoints/ left behind would make the folder a run, and
// the next attempt would be refused as one.
Status Trainer::State::openRunFolder() {
  std::error_code ec;
  std::vector<std::string> made;
  for (const std::string& folder : {run.path(), run.checkpointsDir(), run.samplesDir()})
    if (!fs::exists(fs::symlink_status(folder, ec))) made.push_back(folder);
  const auto undo = [&] {
    for (auto it = made.rbegin(); it != made.rend(); ++it)
      if (fs::is_directory(fs::symlink_status(*it, ec)) && fs::is_empty(*it, ec)) fs::remove(*it, ec);
  };
  if (Status created = run.create(); !created) {
    undo();
    return created;
  }
  auto opened = EventLog::open(run.eventsPath(), options.events_to_stdout);
  if (!opened) {
    undo();
    return makeError(opened.error());
  }
  events = std::move(*opened);
  return {};
}

// With several ranks, rank 0 reads its checkpoints, newest first, and sends each to the other ranks
// (they need no copy of the run folder); a rank keeps one only when every rank loaded it at the
// same step: one rank falling back to an older checkpoint alone would train from another step, and
// its collectives would not match.
Status Trainer::State::restoreLatest() {
  const auto checkpoints = writer ? run.checkpoints() : std::vector<std::string>();
  auto count = static_cast<std::int64_t>(checkpoints.size());
  if (group) count = group->fromRankZeroOnHost({count}).front();
  constexpr std::int64_t kFailed = -1, kNoneLeft = -2;
  for (std::int64_t k = 0;; ++k) {
    const bool have = k < count;
    const std::string path = have && writer ? checkpoints[static_cast<std::size_t>(count - 1 - k)] : std::string();
    Result<CheckpointState> restored = makeError("no checkpoint left");
    if (have && group) {
      // Rank 0 loads it first, from its disk, and sends only a checkpoint that loads: a damaged
      // or foreign file (a huge one included) costs the others nothing.
      std::string bytes;
      if (writer) {
        restored = loadCheckpoint(path, *model);
        if (restored) {
          auto read = RegularFile::readAll(path, kMaxCheckpointBytes);
          if (read) bytes = std::move(*read);
          else restored = makeError(read.error());
        }
      }
      if (Status sent = group->broadcastBytesFromRankZero(bytes, kMaxCheckpointBytes); !sent) {
        bytes.clear();
        restored = makeError(sent.error());
      }
      if (!writer)
        restored = bytes.empty() ? Result<CheckpointState>(makeError("rank 0 could not load its checkpoint " +
                                                                     std::to_string(count - k) + " of " + std::to_string(count)))
                                 : loadCheckpointBytes(bytes, "rank 0's checkpoint", *model);
    } else if (have) {
      restored = loadCheckpoint(path, *model);
    }
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
                                          : " could not load checkpoint " + std::to_string(count - k) +
                                                " of " + std::to_string(count)));
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
        warn("the training noise was drawn on " + restored->noise_rng_kind + " and this run continues on " +
             deviceName(device) + "; its noise generator is seeded afresh from the step");
      }
      if (!restored->scaler_restored)
        warn("the checkpoint was trained in " + restored->precision + " and this run continues in " +
             precisionName(precision) + "; the loss scaler starts afresh at scale " +
             std::to_string(static_cast<long long>(model->scaler().options().init_scale)));
      last_checkpoint_step = progress.step;
      return {};
    }
    if (have) {
      events::Warning warning;
      warning.message = restored.error() + "; trying the previous checkpoint";
      warning.path = relativeTo(path, run.path());
      emit(std::move(warning));
    }
    // A failed load can leave the model half restored: start again from a fresh one.
    model = std::make_unique<DcganStep>(config, device, precision);
  }
  return makeError(run.path() + ": no readable checkpoint to resume from" +
                   (group ? std::string(" that every rank could load") : std::string()));
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
  if (Status written = writeImageGrid(images, (fs::path(run.path()) / relative).string(), 0, FolderLinks::Refuse); !written)
    return written;
  last_sample_step = progress.step;
  emit(events::Samples{relative, progress.step, progress.epoch + (progress.batch > 0 ? 1 : 0), progress.images_seen,
                       false});
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
  emit(events::Checkpoint{relativeTo(path, run.path()), progress.step, progress.epoch, progress.images_seen});
  return {};
}

Status Trainer::State::loadParzenSplits() {
  if (!config.data.filter.hasHoldout())
    return makeError("config key \"parzen.every_epochs\": Parzen evaluation needs a held-out split "
                     "(data.holdout_cities or data.holdout_fraction; --holdout-cities, --holdout-fraction)");
  HeldOutSplitsRequest request = HeldOutSplitsRequest::forModel(config);
  request.purpose = "Parzen";
  auto splits = HeldOutSplits::load(request);
  if (!splits)
    return makeError(splits.error() + "; hold out more of the data (data.holdout_fraction, data.holdout_cities) or "
                                      "turn Parzen off (parzen.every_epochs 0)");
  parzen_valid = splits->valid.rows;
  parzen_test = splits->test.rows;
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
  if (!failure.empty()) warn("Parzen evaluation failed: " + failure);
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
    if (!stopRequested()) warn("Parzen evaluation failed: " + result.error());
    return;
  }
  events::Parzen e;
  e.epoch = progress.epoch;
  e.step = progress.step;
  e.images_seen = progress.images_seen;
  e.sigma = result->sigma;
  e.mean_ll = result->mean_ll;
  e.standard_error = result->stderr_ll;
  e.n_test = result->n_test;
  e.n_valid = result->n_valid;
  e.n_samples = result->n_samples;
  for (const auto& point : result->curve) e.curve.emplace_back(point.sigma, point.mean_ll);
  e.seconds = std::chrono::duration<double>(Clock::now() - start).count();
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
    watchOverfitting(stats.rt);
  }
  emitLiveMetrics();
}

// ADA's heuristic over a stretch of steps: one warning when r_t's mean rises above the level, and
// another only after it has fallen back below it.
void Trainer::State::watchOverfitting(double rt) {
  if (!writer || !std::isfinite(rt)) return;
  const auto window = static_cast<std::size_t>(config.metrics.alarm_rt_steps);
  recent_rt.push_back(rt);
  recent_rt_sum += rt;
  while (recent_rt.size() > window) {
    recent_rt_sum -= recent_rt.front();
    recent_rt.pop_front();
  }
  if (recent_rt.size() < window) return;
  const double mean = recent_rt_sum / static_cast<double>(window);
  QualityAlarmThresholds thresholds;
  thresholds.rt = config.metrics.alarm_rt;
  const auto alarm = QualityAlarms::fromRt(mean, config.metrics.alarm_rt_steps, thresholds);
  if (alarm && !rt_alarm_raised) emitAlarm(*alarm, progress.step);
  rt_alarm_raised = alarm.has_value();
}

// The quality metrics of this moment, on the worker: a CPU copy of G goes with them.
void Trainer::State::startLiveMetrics() {
  if (!live_metrics) return;
  last_metrics_skipped = !live_metrics->start(LiveQualityMetrics::copyOf(model->generator(), config), progress);
}

// Finished quality evaluations as metrics events, and the alarms their figures raise.
void Trainer::State::emitLiveMetrics() {
  if (!live_metrics) return;
  for (LiveQualityResult& result : live_metrics->take()) {
    if (!result.evaluation) {
      warn("quality metrics failed: " + result.evaluation.error());
      continue;
    }
    const QualityEvaluation& evaluation = *result.evaluation;
    const std::int64_t skips = live_metrics->skipped();
    events::Metrics e;
    e.epoch = result.at.epoch;
    e.step = result.at.step;
    e.images_seen = result.at.images_seen;
    for (const auto& [name, value] : evaluation.metrics) e.figures.emplace_back(name, value);
    e.feature_space = evaluation.feature_space;
    e.n_samples = evaluation.n_samples;
    e.n_train = evaluation.n_train;
    e.skipped_due_points = skips - reported_metric_skips;
    e.seconds = result.seconds;
    emit(std::move(e));
    reported_metric_skips = skips;
    QualityAlarmThresholds thresholds;
    thresholds.msssim_margin = config.metrics.alarm_msssim_margin;
    thresholds.ndb_fraction = config.metrics.alarm_ndb_fraction;
    thresholds.spread_ratio = config.metrics.alarm_spread_ratio;
    thresholds.copy_rate = config.metrics.alarm_copy_rate;
    for (const QualityAlarm& alarm : QualityAlarms::fromEvaluation(evaluation, thresholds))
      emitAlarm(alarm, result.at.step);
  }
}

void Trainer::State::emitAlarm(const QualityAlarm& alarm, std::int64_t step) {
  events::Warning warning;
  warning.message = alarm.message;
  warning.alarm = alarm.kind;
  warning.step = step;
  emit(std::move(warning));
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
