#pragma once
// Trainer::State: everything one run holds, private to the trainer's sources (trainer.cpp: prepare,
// resume, samples, checkpoints, Parzen, the distributed helpers; trainer_loop.cpp: the epochs and
// their steps). Nothing else includes it; core/train/trainer.h is the public face.
#include "core/train/trainer.h"

#include "core/data/batch_loader.h"
#include "core/data/batch_prefetcher.h"
#include "core/data/crop_fit.h"
#include "core/data/image_cache_builder.h"
#include "core/data/image_grid.h"
#include "core/eval/held_out_splits.h"
#include "core/eval/parzen_estimator.h"
#include "core/eval/parzen_inputs.h"
#include "core/eval/quality_alarms.h"
#include "core/eval/quality_suite.h"
#include "core/model/weight_init.h"
#include "core/runs/event_fields.h"
#include "core/runs/event_log.h"
#include "core/runs/process_identity.h"
#include "core/runs/run_directory.h"
#include "core/runs/tensorboard_recorder.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/train/dcgan_step.h"
#include "core/train/discriminator_augment.h"
#include "core/train/graphed_train_step.h"
#include "core/train/device_batch_feeder.h"
#include "core/train/live_quality_metrics.h"
#include "core/distributed/rank_group.h"
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
#include <deque>
#include <thread>
#include <filesystem>
#include <sstream>

namespace streetgan {

namespace fs = std::filesystem;
namespace run_status = events::status;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// How often rank 0 writes a `system` event (checked after each logged step).
inline constexpr double kSystemEverySeconds = 5.0;

struct Trainer::State {
  TrainConfig config;
  TrainerOptions options;
  RunDirectory run{""};
  c10::Device device{c10::kCPU};
  Precision precision = Precision::Fp32;
  std::string device_choice;  // "cpu, fp32 (auto: ...)": said at the start of a run
  std::unique_ptr<BatchLoader> loader;
  std::unique_ptr<DcganStep> model;
  std::unique_ptr<GraphedTrainStep> graphed;  ///< cuda_graphs: the model's step as a CUDA graph
  EventLog events;
  TrainingProgress progress;
  torch::Tensor fixed_noise;
  at::Generator noise_rng;
  std::string resumed_from;
  bool resuming = false;             ///< continues from the run's checkpoint (--resume, or a restart after one)
  int restart_attempt = 0;           ///< the restart this attempt is (0: the first attempt)
  std::string restart_cause;         ///< rank 0 of a restart: the last error the attempt before left
  std::vector<std::string> resume_changes;  ///< the learning rates, penalties or augmentation a resume changed
  bool resume_sets_ada_p = false;           ///< the resume gave another augment.ada_p: ADA's p starts there
  std::int64_t last_checkpoint_step = -1;
  std::int64_t last_sample_step = -1;
  std::int64_t skipped_files = 0;
  std::string first_skip_reason;
  torch::Tensor parzen_valid, parzen_test;  ///< held-out rows, loaded once when Parzen is on
  std::unique_ptr<RankGroup> group;  ///< the other ranks of a distributed run; null alone
  bool writer = true;                ///< rank 0 (or alone): writes events, files and checkpoints
  std::unique_ptr<SystemMonitor> monitor;  ///< rank 0's `system` events
  std::unique_ptr<TensorBoardRecorder> tensorboard;  ///< rank 0's copy of the events for TensorBoard
  std::unique_ptr<LiveQualityMetrics> live_metrics;  ///< rank 0's quality metrics, when on
  std::int64_t next_metrics_images = -1;             ///< metrics.every_images: the next due point
  std::int64_t reported_metric_skips = 0;            ///< skipped due points already in a metrics event
  bool last_metrics_skipped = false;                 ///< the latest due point found the worker busy
  std::deque<double> recent_rt;                      ///< r_t of the last metrics.alarm_rt_steps steps
  double recent_rt_sum = 0;
  bool rt_alarm_raised = false;                      ///< until r_t falls back below the level

  /// The first reason the run cannot go on found while writing events or reading the flushed
  /// steps: events.jsonl could not be appended to, or a step's losses are not finite.
  std::string stop_error;
  std::unique_ptr<StepStatsQueue> pending;  ///< steps whose statistics are still on the device
  double epoch_sum_d = 0, epoch_sum_g = 0;   ///< over the epoch's flushed steps

  // Every event of the run goes through here: to the in-process listener, TensorBoard's copy and
  // events.jsonl, as the one typed value, at the one time.
  void emit(events::RunEvent event) {
    if (!writer) return;
    const double time = EventLog::now();
    if (options.on_event) options.on_event(event);
    if (tensorboard)
      if (Status recorded = tensorboard->record(event, time); !recorded) {
        // TensorBoard's copy is a convenience: training and events.jsonl go on without it.
        tensorboard.reset();
        warn("TensorBoard files stopped: " + recorded.error());
      }
    if (Status written = events.append(event, time); !written && stop_error.empty()) stop_error = written.error();
  }
  void warn(std::string message) {
    events::Warning warning;
    warning.message = std::move(message);
    emit(std::move(warning));
  }
  bool stopRequested() const {
    return options.stop_requested && options.stop_requested->load(std::memory_order_relaxed);
  }
  Status writeSamples();
  void emitSystem();
  Status writeCheckpoint();
  void evaluateParzen();
  void startLiveMetrics();
  void emitLiveMetrics();
  void watchOverfitting(double rt, double ada_p);
  void emitAlarm(const QualityAlarm& alarm, std::int64_t step);
  void evaluateParzenHere();
  Status loadParzenSplits();
  Status restoreLatest();
  void flushSteps();
  std::string divergenceMessage(std::int64_t step, const StepStats& stats) const;
  void continueWithWorldSize();
  torch::Tensor drawNoise(std::int64_t n, std::int64_t n_job, bool equal_shares);
  std::vector<std::string> rankDevices();
  std::vector<std::int64_t> rankChecksums();
  Result<RunOutcome> loop();

  // The steps of loop(), in their order.
  struct Staging;
  /// What one epoch did, for its epoch_end event.
  struct EpochCounts {
    Clock::time_point start = Clock::now();
    std::int64_t steps = 0, images = 0, skipped = 0;
    bool stopped = false;  ///< a stop was requested before the epoch's last batch
  };
  /// What the ranks agreed on before a step (alone: this process's own batch).
  struct BatchAgreement {
    bool stop = false;         ///< some rank was asked to stop: all stop before this step
    std::int64_t n_job = 0;    ///< images in the job's batch, every rank's together
    bool equal_shares = true;  ///< every rank has as many images as the others
    bool any_empty = false;    ///< some rank's batch has no readable image: no rank trains on it
  };
  // Trainer::prepare()'s steps, in order (trainer.cpp). A step that fails for the machine's
  // reason (not the config's or the options') says so in its error (ErrorKind::Machine).
  Status joinRanks();
  bool continuesRestartedRun();
  Status checkBeforeStart(bool continues);
  Status applyResumeOverrides(const TrainConfig& stored);
  Status chooseDevice();
  Status openData();
  Status prepareEvaluations();
  Status agreeToStart(const Status& checked);
  Status openRunFolder();

  Status prepareModel();
  void announceRun(int removed, int workers);
  events::RunStarted runStartedEvent(int workers);
  Result<EpochCounts> trainEpoch(Staging& staging, std::int64_t give_up_after);
  Status trainBatch(Staging& staging, EpochCounts& epoch, std::int64_t give_up_after);
  BatchAgreement agreeOnBatch(std::int64_t n);
  Status reportSkipped(const DeviceBatch& batch, EpochCounts& epoch, std::int64_t give_up_after);
  void resumeTiming(Staging& staging);
  Status endEpoch(const EpochCounts& epoch);
  Result<RunOutcome> finishRun(bool stopped);
};

inline std::string relativeTo(const std::string& path, const std::string& base) {
  return fs::path(path).lexically_relative(base).generic_string();
}

// Noise for the training steps and the fixed sample noise come from their own generators, so
// sampling never shifts the training stream and both are restored exactly on resume.
inline at::Generator makeCpuGenerator(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

}  // namespace streetgan
