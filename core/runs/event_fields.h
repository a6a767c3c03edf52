#pragma once
// The names of the event protocol (docs/events.md): every event type and every field, once. The
// writers (core/train's Trainer and checkpoint import, the CLI's rank launcher) and the typed
// reader (core/runs/run_event.h) name them from here; nothing outside core/runs spells one as a
// string literal (cmake/check_layering.cmake refuses it in every file that uses the protocol).
// Adding a field: a constant here, its row in docs/events.md, and a member of the typed event that
// carries it when a reader needs it.

namespace streetgan::events {

/// The "type" of each event.
namespace type {
inline constexpr char kRunStarted[] = "run_started";
inline constexpr char kStep[] = "step";
inline constexpr char kImportedLosses[] = "imported_losses";
inline constexpr char kEpochEnd[] = "epoch_end";
inline constexpr char kSamples[] = "samples";
inline constexpr char kParzen[] = "parzen";
inline constexpr char kMetrics[] = "metrics";
inline constexpr char kSystem[] = "system";
inline constexpr char kCheckpoint[] = "checkpoint";
inline constexpr char kWarning[] = "warning";
inline constexpr char kError[] = "error";
inline constexpr char kRunFinished[] = "run_finished";
inline constexpr char kRestart[] = "restart";
}  // namespace type

/// The values of run_finished's "status".
namespace status {
inline constexpr char kCompleted[] = "completed";
inline constexpr char kStopped[] = "stopped";
inline constexpr char kFailed[] = "failed";
}  // namespace status

/// Field names. One name may be used by several types (docs/events.md says which).
namespace field {
// every event
inline constexpr char kVersion[] = "v";
inline constexpr char kType[] = "type";
inline constexpr char kTime[] = "time";
// where a run stands (most types)
inline constexpr char kEpoch[] = "epoch";
inline constexpr char kEpochs[] = "epochs";
inline constexpr char kStep[] = "step";
inline constexpr char kImagesSeen[] = "images_seen";
inline constexpr char kPath[] = "path";
inline constexpr char kMessage[] = "message";
inline constexpr char kSeconds[] = "seconds";
// run_started
inline constexpr char kConfig[] = "config";
inline constexpr char kDevice[] = "device";
inline constexpr char kPrecision[] = "precision";
inline constexpr char kParamsG[] = "params_g";
inline constexpr char kParamsD[] = "params_d";
inline constexpr char kResumedFrom[] = "resumed_from";
inline constexpr char kDataset[] = "dataset";
inline constexpr char kBatchesPerEpoch[] = "batches_per_epoch";
inline constexpr char kWorldSize[] = "world_size";
inline constexpr char kNodes[] = "nodes";
inline constexpr char kJob[] = "job";
// restart
inline constexpr char kAttempt[] = "attempt";
inline constexpr char kMaxRestarts[] = "max_restarts";
inline constexpr char kCause[] = "cause";
inline constexpr char kBackend[] = "backend";
inline constexpr char kDevices[] = "devices";
inline constexpr char kThreads[] = "threads";
inline constexpr char kPid[] = "pid";
inline constexpr char kPidStartTime[] = "pid_start_time";
inline constexpr char kProgramVersion[] = "version";
inline constexpr char kImportedFrom[] = "imported_from";  // streetgan import: the original checkpoint
// run_started's dataset object
inline constexpr char kRoot[] = "root";
inline constexpr char kLayout[] = "layout";
inline constexpr char kImages[] = "images";
inline constexpr char kHeldOut[] = "held_out";
inline constexpr char kCache[] = "cache";
inline constexpr char kDecodeReduction[] = "decode_reduction";
inline constexpr char kWorkers[] = "workers";
// run_started's config object (the keys a reader of events takes from it)
inline constexpr char kPreset[] = "preset";
inline constexpr char kBatchSize[] = "batch_size";
// step
inline constexpr char kIteration[] = "iteration";
inline constexpr char kIterations[] = "iterations";
inline constexpr char kLossD[] = "loss_d";
inline constexpr char kLossG[] = "loss_g";
inline constexpr char kDX[] = "d_x";
inline constexpr char kDGz1[] = "d_g_z1";
inline constexpr char kDGz2[] = "d_g_z2";
inline constexpr char kRt[] = "rt";  ///< ADA's r_t: mean sign of D's logits on the real batch
inline constexpr char kAdaP[] = "ada_p";  ///< ADA's probability p the step ran with (runs with ADA only)
inline constexpr char kImagesPerS[] = "images_per_s";
inline constexpr char kDataWaitFraction[] = "data_wait_fraction";
inline constexpr char kLossScale[] = "loss_scale";
inline constexpr char kSkippedStep[] = "skipped_step";
inline constexpr char kImported[] = "imported";
// imported_losses
inline constexpr char kFirstStep[] = "first_step";
inline constexpr char kSteps[] = "steps";
inline constexpr char kTotalSteps[] = "total_steps";
inline constexpr char kImagesPerStep[] = "images_per_step";
// epoch_end
inline constexpr char kSkippedFiles[] = "skipped_files";
inline constexpr char kMeanLossD[] = "mean_loss_d";
inline constexpr char kMeanLossG[] = "mean_loss_g";
// parzen
inline constexpr char kSigma[] = "sigma";
inline constexpr char kMeanLl[] = "mean_ll";
inline constexpr char kStderr[] = "stderr";
inline constexpr char kNTest[] = "n_test";
inline constexpr char kNValid[] = "n_valid";
inline constexpr char kNSamples[] = "n_samples";
inline constexpr char kNTrain[] = "n_train";              ///< metrics: training images compared with
inline constexpr char kQualityFigures[] = "metrics";      ///< metrics: the figures (docs/evaluation.md)
inline constexpr char kFeatureSpace[] = "feature_space";  ///< metrics: where FID, KID and PRDC were computed
inline constexpr char kSkippedDuePoints[] = "skipped_due_points";  ///< metrics: due points skipped (worker busy) since the last
inline constexpr char kAlarm[] = "alarm";                 ///< warning: collapse, memorisation or overfitting
inline constexpr char kCurve[] = "curve";
// system
inline constexpr char kCpuPercent[] = "cpu_percent";
inline constexpr char kCores[] = "cores";
inline constexpr char kRssBytes[] = "rss_bytes";
inline constexpr char kHostMemoryAvailableBytes[] = "host_memory_available_bytes";
inline constexpr char kHostMemoryTotalBytes[] = "host_memory_total_bytes";
inline constexpr char kLoaderBytesPerS[] = "loader_bytes_per_s";
inline constexpr char kGpu[] = "gpu";
inline constexpr char kGpuIndex[] = "index";
inline constexpr char kUtilizationPercent[] = "utilization_percent";
inline constexpr char kMemoryUsedBytes[] = "memory_used_bytes";
inline constexpr char kMemoryTotalBytes[] = "memory_total_bytes";
inline constexpr char kPowerW[] = "power_w";
// warning
inline constexpr char kSkippedTotal[] = "skipped_total";
// run_finished
inline constexpr char kStatus[] = "status";
inline constexpr char kRankChecksums[] = "rank_checksums";
}  // namespace field

}  // namespace streetgan::events
