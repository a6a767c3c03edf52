// Trainer's run folder (rank 0 alone writes it): the folder and its event log, the checkpoint a run
// resumes from (sent to every rank), and the sample grids and checkpoints written as it trains.
#include "core/train/trainer_state.h"

#include "core/util/regular_file.h"

namespace streetgan {
namespace {

// Rank 0 reads a checkpoint whole to send it to the other ranks; a file past this is not ours.
constexpr std::int64_t kMaxCheckpointBytes = std::int64_t{16} << 30;

}  // namespace

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
      model->setStepsDone(progress.step);
      model->setLearningRates(config);  // a resume may change them (-t)
      if (resume_sets_ada_p && model->augment()) model->augment()->setProbability(config.augment.ada_p);
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
      if (!restored->augment_rng_restored)
        warn("the checkpoint holds no augmentation generator this device can take; D's augmentations are drawn "
             "afresh from the run's seed");
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
    Generator& generator = model->renderingGenerator();
    const bool was_training = generator->is_training();
    for (const auto& buffer : generator->buffers()) saved.push_back(buffer.clone());
    generator->train();
    images = generator->forward(fixed_noise);
    std::size_t i = 0;
    for (auto& buffer : generator->buffers()) buffer.copy_(saved[i++]);
    generator->train(was_training);
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

}  // namespace streetgan
