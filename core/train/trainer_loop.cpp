// The run's loop: the model prepared, the run announced, the epochs and their steps, the end.
// Trainer::State's other members are in trainer.cpp.
#include "core/train/trainer_state.h"

#include <stdexcept>

namespace streetgan {

// The batch fetched from the prefetcher and staged on the device while the step before it runs.
// A step's time runs from the fetch of its batch (waiting for the loader, the data wait) to the
// end of the step.
struct Trainer::State::Staging {
  BatchPrefetcher& prefetcher;
  DeviceBatchFeeder& feeder;
  Clock::time_point fetch_start = Clock::now();
  double wait = 0;

  Status stageNext() {
    if (!prefetcher.hasNext()) return {};
    fetch_start = Clock::now();
    auto next = prefetcher.next();
    if (!next) return makeError(next.error());
    feeder.stage(std::move(*next));
    wait = std::chrono::duration<double>(Clock::now() - fetch_start).count();
    return {};
  }
};

// The model, the training noise and the fixed sample noise, restored from the latest checkpoint
// when resuming and shared with the other ranks; then the run's config is written.
Status Trainer::State::prepareModel() {
  model = std::make_unique<DcganStep>(config, device, precision);
  noise_rng = makeDeviceGenerator(device, static_cast<std::uint64_t>(config.seed) * 2 + 1);
  fixed_noise = torch::randn({config.sample_count, config.nz, 1, 1},
                             makeCpuGenerator(static_cast<std::uint64_t>(config.seed) * 2),
                             torch::kFloat32)
                    .to(device);
  if (resuming)
    if (Status restored = restoreLatest(); !restored) return restored;
  continueWithWorldSize();
  if (group) {
    // A failed checkpoint load makes a fresh model: hand it the group only now.
    model->setRankGroup(group.get(), config.sync_batchnorm);
    model->broadcastFromRankZero();
  }
  if (config.cuda_graphs) {
    GraphedTrainStepOptions graph_options;
    graph_options.batch_size = config.batch_size;
    graphed = std::make_unique<GraphedTrainStep>(
        *model, [this](const std::string& message) { warn(message); }, graph_options);
  }
  if (writer)
    if (Status written = writeFileAtomically(run.configPath(), configToJson(config).dump(2) + "\n"); !written)
      return written;
  return {};
}

// The run_started event, and the warnings known before the first step.
void Trainer::State::announceRun(int removed, int workers) {
  if (restart_attempt > 0) {
    events::Restart restart;
    restart.attempt = restart_attempt;
    restart.max_restarts = options.placement->max_restarts;
    restart.cause = restart_cause.empty() ? "the attempt before this one failed without an error event (a rank "
                                            "was killed or its host went away)"
                                          : restart_cause;
    restart.step = progress.step;
    restart.images_seen = progress.images_seen;
    if (!resumed_from.empty()) restart.resumed_from = resumed_from;
    emit(std::move(restart));
  }
  if (writer && config.tensorboard)
    tensorboard = std::make_unique<TensorBoardRecorder>(run.path(), run.tensorboardDir());
  emit(runStartedEvent(workers));
  if (writer) {
    monitor = std::make_unique<SystemMonitor>(deviceName(device));
    if (!monitor->gpuUnavailableReason().empty())
      warn("no GPU figures in the system events: " + monitor->gpuUnavailableReason());
  }
  if (removed > 0) warn("removed " + std::to_string(removed) + " unfinished file(s) left by an earlier process");
  for (const std::string& change : resume_changes) warn(change);
  if (writer) {
    const std::string crop = cropFitWarning(measureCropFit(loader->dataset(), config.augment.crop_scale, config.img_size),
                                            config.augment.crop_scale, config.img_size);
    if (!crop.empty()) warn(crop);
  }
  if ((config.r1_gamma > 0 || config.r2_gamma > 0) && config.d_norm == "batchnorm")
    warn(
        "r1_gamma or r2_gamma with d_norm batchnorm: a gradient penalty through BatchNorm couples the images of "
        "a batch, and R3GAN trains its penalties without it; d_norm none or spectral is the usual choice");
  if (loader->uncachedCount() > 0)
    warn(std::to_string(loader->uncachedCount()) + " of " + std::to_string(loader->datasetSize()) +
         " images are not in the cache " + config.data.cache + "; they are decoded from their files");
}

// What the run is: its config, device, data and processes.
events::RunStarted Trainer::State::runStartedEvent(int workers) {
  events::RunStarted e;
  e.setConfig(configToJson(config));
  e.device = deviceName(device);
  e.precision = precisionName(precision);
  e.params_g = countParameters(*model->generator());
  e.params_d = countParameters(*model->discriminator());
  if (!resumed_from.empty()) e.resumed_from = resumed_from;
  e.epoch = progress.epoch;
  e.step = progress.step;
  e.images_seen = progress.images_seen;
  e.world_size = group ? group->worldSize() : 1;
  e.pid = static_cast<std::int64_t>(::getpid());
  // So whoever signals the pid later can tell it is still this process (0: no /proc).
  e.pid_start_time = processStartTime(::getpid()).value_or(0);
  events::DatasetSummary data;
  data.root = loader->dataset().root();
  data.layout = layoutName(loader->dataset().layout());
  data.images = loader->datasetSize();
  data.held_out = loader->dataset().otherPartSize();
  if (!config.data.cache.empty()) data.cache = config.data.cache;
  data.decode_reduction = loader->pipeline().reduction();
  data.workers = workers;
  e.dataset = std::move(data);
  e.batches_per_epoch = loader->batchesPerEpoch();
  e.nodes = group ? group->placement().nodeCount() : 1;
  // The launch this process belongs to: a restart continues only its own run.
  if (group && !group->placement().job_id.empty()) e.job = group->placement().job_id;
  if (group) e.backend = group->backend();
  e.devices = rankDevices();
  e.threads = at::get_num_threads();
  e.version = STREETGAN_VERSION;
  return e;
}

// One epoch's batches, up to its end or a stop; the steps still queued are flushed.
auto Trainer::State::trainEpoch(Staging& staging, std::int64_t give_up_after) -> Result<EpochCounts> {
  EpochCounts epoch;
  epoch_sum_d = epoch_sum_g = 0;
  const std::int64_t batches = loader->batchesPerEpoch();
  while (progress.batch < batches && !epoch.stopped)
    if (Status trained = trainBatch(staging, epoch, give_up_after); !trained) return makeError(trained.error());
  flushSteps();
  if (!stop_error.empty()) return makeError(stop_error);
  if (!epoch.stopped && epoch.images == 0 && progress.step == 0)
    return makeError(loader->dataset().root() + ": not one image could be read in epoch " +
                     std::to_string(progress.epoch + 1));
  return epoch;
}

// One batch: taken from the staging, agreed on with the other ranks, its skipped files reported,
// trained on while the next one is staged, and its statistics queued. Sets epoch.stopped instead
// when a stop was requested before the step.
Status Trainer::State::trainBatch(Staging& staging, EpochCounts& epoch, std::int64_t give_up_after) {
  if (!group && stopRequested()) {
    epoch.stopped = true;
    return {};
  }
  if (!staging.feeder.hasStaged())
    if (Status staged = staging.stageNext(); !staged) return staged;
  const auto t0 = staging.fetch_start;
  const double wait = staging.wait;
  DeviceBatch batch = staging.feeder.take();
  const std::int64_t n = batch.images.size(0);
  const BatchAgreement agreed = agreeOnBatch(n);
  if (agreed.stop) {
    epoch.stopped = true;
    return {};
  }
  if (Status readable = reportSkipped(batch, epoch, give_up_after); !readable) return readable;
  ++progress.batch;
  if (agreed.any_empty) return {};
  const auto noise = drawNoise(n, agreed.n_job, agreed.equal_shares);
  torch::Tensor values = graphed ? graphed->trainStep(batch.images, noise) : model->trainStep(batch.images, noise);
  model->updateAverage(progress.images_seen, agreed.n_job);
  const auto t2 = Clock::now();
  // The next batch is fetched and its copy started while this step runs on an accelerator.
  if (Status staged = staging.stageNext(); !staged) return staged;
  ++progress.step;
  progress.images_seen += agreed.n_job;
  if (live_metrics && config.metrics.every_images > 0) {
    const std::int64_t every = config.metrics.every_images;
    if (next_metrics_images < 0) next_metrics_images = (progress.images_seen / every + 1) * every;
    if (progress.images_seen >= next_metrics_images) {
      startLiveMetrics();
      next_metrics_images = (progress.images_seen / every + 1) * every;
    }
  }
  ++epoch.steps;
  epoch.images += agreed.n_job;
  PendingStep info;
  info.epoch = progress.epoch + 1;
  info.iteration = progress.batch;
  info.step = progress.step;
  info.images_seen = progress.images_seen;
  info.images = agreed.n_job;
  info.host_seconds = std::chrono::duration<double>(t2 - t0).count();
  info.wait_seconds = wait;
  pending->push(info, std::move(values));
  const bool log_point = progress.step % config.log_frequency == 0;
  if (log_point || pending->shouldFlush(Clock::now())) flushSteps();
  if (!stop_error.empty()) return makeError(stop_error);
  if (log_point) {
    if (Status s = writeSamples(); !s) return s;
    resumeTiming(staging);
  }
  return {};
}

// Ranks agree before every step: on stopping (a signal to any rank stops all at this step; the
// batch taken is served again on resume), and on the batch sizes. Alone: this batch as it is.
auto Trainer::State::agreeOnBatch(std::int64_t n) -> BatchAgreement {
  BatchAgreement agreed;
  agreed.n_job = n;
  agreed.any_empty = n == 0;
  if (!group) return agreed;
  const auto sums = group->sumOnHost({stopRequested() ? 1 : 0, n, n * n, n == 0 ? 1 : 0});
  if (sums[0] > 0) {
    agreed.stop = true;
    return agreed;
  }
  // Every rank adds at most one batch: sums past that come from no rank of this job, and would
  // size the noise drawn next.
  const std::int64_t world = group->worldSize(), most = config.batch_size;
  if (sums[0] < 0 || sums[0] > world || sums[3] < 0 || sums[3] > world || sums[1] < 0 || sums[1] > world * most ||
      sums[2] < 0 || sums[2] > world * most * most)
    throw std::runtime_error("the ranks' batch sizes add up to " + std::to_string(sums[1]) + " images, more than " +
                             std::to_string(world) + " ranks of batch_size " + std::to_string(most) +
                             " can hold: a process that is not a rank of this job joined it");
  agreed.n_job = sums[1];
  // Equal shares exactly when sum(n²)·W = (sum n)² (Cauchy-Schwarz).
  agreed.equal_shares = sums[2] * group->worldSize() == sums[1] * sums[1];
  agreed.any_empty = sums[3] > 0;
  return agreed;
}

// A warning for each file of the batch that could not be used. Without a single readable image
// after `give_up_after` attempts the data set is unusable.
Status Trainer::State::reportSkipped(const DeviceBatch& batch, EpochCounts& epoch, std::int64_t give_up_after) {
  for (const auto& skipped : batch.skipped) {
    ++skipped_files;
    ++epoch.skipped;
    if (first_skip_reason.empty()) first_skip_reason = skipped.reason;
    events::Warning warning;
    warning.message = skipped.reason;
    warning.path = skipped.path;
    warning.skipped_total = skipped_files;
    emit(std::move(warning));
  }
  if (progress.images_seen == 0 && batch.images.size(0) == 0 && skipped_files >= give_up_after)
    return makeError(loader->dataset().root() + ": none of the first " +
                     std::to_string(skipped_files) + " images could be read (the first: " +
                     first_skip_reason + ")");
  return {};
}

// After work between steps (grids, checkpoints, Parzen) the staged batch counts as fetched just
// now, and the timing window starts again.
void Trainer::State::resumeTiming(Staging& staging) {
  staging.fetch_start = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(staging.wait));
  pending->restartWindow();
}

// The end of a finished epoch: its event, the sample grid, Parzen and the checkpoint when due.
Status Trainer::State::endEpoch(const EpochCounts& epoch) {
  ++progress.epoch;
  progress.batch = 0;
  events::EpochEnd end;
  end.epoch = progress.epoch;
  end.epochs = config.epochs;
  end.step = progress.step;
  end.images_seen = progress.images_seen;
  end.steps = epoch.steps;
  end.images = epoch.images;
  end.skipped_files = epoch.skipped;
  end.mean_loss_d = epoch.steps ? epoch_sum_d / epoch.steps : 0.0;
  end.mean_loss_g = epoch.steps ? epoch_sum_g / epoch.steps : 0.0;
  end.seconds = std::chrono::duration<double>(Clock::now() - epoch.start).count();
  emit(std::move(end));
  if (Status s = writeSamples(); !s) return s;
  if (config.parzen.every_epochs > 0 && progress.epoch % config.parzen.every_epochs == 0) evaluateParzen();
  if (config.metrics.every_epochs > 0 && progress.epoch % config.metrics.every_epochs == 0) startLiveMetrics();
  emitLiveMetrics();
  if (progress.epoch % config.save_frequency == 0 || progress.epoch == config.epochs)
    if (Status s = writeCheckpoint(); !s) return s;
  return {};
}

// The checkpoint of a stopped run, and the run_finished event (with several ranks: whether they
// ended with the same parameters).
Result<RunOutcome> Trainer::State::finishRun(bool stopped) {
  if (stopped)
    if (Status s = writeCheckpoint(); !s) return makeError(s.error());
  events::RunFinished finished;
  finished.status = stopped ? run_status::kStopped : run_status::kCompleted;
  finished.epoch = progress.epoch;
  finished.step = progress.step;
  finished.images_seen = progress.images_seen;
  if (group) {
    finished.rank_checksums = rankChecksums();
    for (const auto value : finished.rank_checksums)
      if (value != finished.rank_checksums.front()) {
        warn("the ranks ended with different parameters (rank_checksums differ)");
        break;
      }
  }
  if (monitor) emitSystem();
  // A completed run waits for its last quality evaluation; a stopped one drops it (the worker is
  // cancelled when the state goes).
  if (live_metrics && !stopped) {
    live_metrics->waitIdle();
    // The last due point found the worker busy: the final generator is scored all the same.
    if (last_metrics_skipped) {
      startLiveMetrics();
      live_metrics->waitIdle();
    }
    emitLiveMetrics();
  }
  emit(std::move(finished));
  return stopped ? RunOutcome::Stopped : RunOutcome::Completed;
}

Result<RunOutcome> Trainer::State::loop() {
  const int removed = writer ? run.removeTemporaryFiles() : 0;
  if (Status ready = prepareModel(); !ready) return makeError(ready.error());
  const int workers = resolveWorkerCount(config.data.workers);
  announceRun(removed, workers);
  BatchPrefetcher prefetcher(*loader, workers, config.data.prefetch, progress.epoch, progress.batch,
                             config.epochs);
  DeviceBatchFeeder feeder(device, config.augment.noise_std, static_cast<std::uint64_t>(config.seed));
  if (group) feeder.setShard(group->rank(), group->worldSize());
  pending = std::make_unique<StepStatsQueue>(device.is_cpu(), config.sync_every_steps);
  // Without a single readable image after this many attempts the data set is unusable.
  const std::int64_t give_up_after = std::min<std::int64_t>(loader->datasetSize(), 1000);
  Staging staging{prefetcher, feeder};
  bool stopped = false;
  while (progress.epoch < config.epochs) {
    auto epoch = trainEpoch(staging, give_up_after);
    if (!epoch) return makeError(epoch.error());
    if (epoch->stopped) {
      stopped = true;
      break;
    }
    if (Status ended = endEpoch(*epoch); !ended) return makeError(ended.error());
    resumeTiming(staging);
  }
  return finishRun(stopped);
}

}  // namespace streetgan
