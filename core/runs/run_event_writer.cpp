#include "core/runs/run_event_writer.h"

#include "core/runs/event_fields.h"

#include <cmath>
#include <type_traits>

namespace streetgan::events {

namespace {

using json = nlohmann::json;

// A field left out when it has no value.
template <class T>
void putIf(json& out, const char* key, const std::optional<T>& value) {
  if (value) out[key] = *value;
}

// A field written as null when it has no value.
void putNullable(json& out, const char* key, const NullableText& value) {
  out[key] = value ? json(*value) : json(nullptr);
}

// A whole number the reader keeps as a double (a byte count, a step index): written as an integer,
// as its writer had it; NaN (none) as null.
json wholeNumber(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15)
    return static_cast<std::int64_t>(value);
  return std::isnan(value) ? json(nullptr) : json(value);
}

void putPosition(json& out, const Count& epoch, const Count& step, const Count& images_seen) {
  putIf(out, field::kEpoch, epoch);
  putIf(out, field::kStep, step);
  putIf(out, field::kImagesSeen, images_seen);
}

json datasetJson(const DatasetSummary& d) {
  json out = {{field::kRoot, d.root}, {field::kLayout, d.layout}};
  putIf(out, field::kImages, d.images);
  putIf(out, field::kHeldOut, d.held_out);
  putIf(out, field::kDecodeReduction, d.decode_reduction);
  putIf(out, field::kWorkers, d.workers);
  putNullable(out, field::kCache, d.cache);
  return out;
}

// The launch's fields: the trainer's run_started has them all, an imported run's none.
void putLaunch(json& out, const RunStarted& e) {
  if (!e.pid) return;
  out[field::kPid] = *e.pid;
  out[field::kPidStartTime] = e.pid_start_time;
  if (e.dataset) out[field::kDataset] = datasetJson(*e.dataset);
  putIf(out, field::kBatchesPerEpoch, e.batches_per_epoch);
  putIf(out, field::kNodes, e.nodes);
  putIf(out, field::kThreads, e.threads);
  putNullable(out, field::kJob, e.job);
  putNullable(out, field::kBackend, e.backend.empty() ? NullableText() : NullableText(e.backend));
  out[field::kDevices] = e.devices;
  out[field::kProgramVersion] = e.version;
}

json fields(const RunStarted& e) {
  json out = {{field::kDevice, e.device}, {field::kPrecision, e.precision}};
  if (!e.config.is_null()) out[field::kConfig] = e.config;
  putIf(out, field::kParamsG, e.params_g);
  putIf(out, field::kParamsD, e.params_d);
  putNullable(out, field::kResumedFrom, e.resumed_from);
  putIf(out, field::kImportedFrom, e.imported_from);
  putPosition(out, e.epoch, e.step, e.images_seen);
  putIf(out, field::kWorldSize, e.world_size);
  putLaunch(out, e);
  return out;
}

json fields(const Step& e) {
  json out = json::object();
  putPosition(out, e.epoch, e.step, e.images_seen);
  putIf(out, field::kIteration, e.iteration);
  putIf(out, field::kIterations, e.iterations);
  out[field::kLossD] = e.loss_d;
  out[field::kLossG] = e.loss_g;
  if (e.imported) {
    out[field::kImported] = true;
    return out;
  }
  out[field::kDX] = e.d_x;
  out[field::kDGz1] = e.d_g_z1;
  out[field::kDGz2] = e.d_g_z2;
  out[field::kRt] = e.rt;
  out[field::kImagesPerS] = e.images_per_s;
  out[field::kDataWaitFraction] = e.data_wait_fraction;
  putIf(out, field::kLossScale, e.loss_scale);
  putIf(out, field::kAdaP, e.ada_p);
  putIf(out, field::kSkippedStep, e.skipped_step);
  return out;
}

json fields(const ImportedLosses& e) {
  json out = {{field::kFirstStep, wholeNumber(e.first_step)},
              {field::kTotalSteps, wholeNumber(e.total_steps)},
              {field::kEpochs, wholeNumber(e.epochs)},
              {field::kImagesPerStep, wholeNumber(e.images_per_step)}};
  putIf(out, field::kSteps, e.steps);
  if (e.has_loss_d) out[field::kLossD] = e.loss_d;
  if (e.has_loss_g) out[field::kLossG] = e.loss_g;
  return out;
}

json fields(const EpochEnd& e) {
  json out = {{field::kMeanLossD, e.mean_loss_d}, {field::kMeanLossG, e.mean_loss_g}, {field::kSeconds, e.seconds}};
  putPosition(out, e.epoch, e.step, e.images_seen);
  putIf(out, field::kEpochs, e.epochs);
  putIf(out, field::kSteps, e.steps);
  putIf(out, field::kImages, e.images);
  putIf(out, field::kSkippedFiles, e.skipped_files);
  return out;
}

json fields(const Samples& e) {
  json out = {{field::kPath, e.path}};
  putPosition(out, e.epoch, e.step, e.images_seen);
  if (e.imported) out[field::kImported] = true;
  return out;
}

json fields(const Parzen& e) {
  json curve = json::array();
  for (const auto& [sigma, mean_ll] : e.curve) curve.push_back({{field::kSigma, sigma}, {field::kMeanLl, mean_ll}});
  json out = {{field::kSigma, e.sigma},
              {field::kMeanLl, e.mean_ll},
              {field::kStderr, e.standard_error},
              {field::kCurve, curve},
              {field::kSeconds, e.seconds}};
  putPosition(out, e.epoch, e.step, e.images_seen);
  putIf(out, field::kNTest, e.n_test);
  putIf(out, field::kNValid, e.n_valid);
  putIf(out, field::kNSamples, e.n_samples);
  return out;
}

json fields(const Metrics& e) {
  json figures = json::object();
  for (const auto& [name, value] : e.figures) figures[name] = value;
  json out = {{field::kQualityFigures, figures}, {field::kFeatureSpace, e.feature_space}, {field::kSeconds, e.seconds}};
  putPosition(out, e.epoch, e.step, e.images_seen);
  putIf(out, field::kNSamples, e.n_samples);
  putIf(out, field::kNTrain, e.n_train);
  putIf(out, field::kSkippedDuePoints, e.skipped_due_points);
  return out;
}

json fields(const System& e) {
  json out = {{field::kSeconds, e.seconds},
              {field::kCpuPercent, e.cpu_percent},
              {field::kCores, wholeNumber(e.cores)},
              {field::kRssBytes, wholeNumber(e.rss_bytes)},
              {field::kHostMemoryAvailableBytes, wholeNumber(e.host_memory_available_bytes)},
              {field::kHostMemoryTotalBytes, wholeNumber(e.host_memory_total_bytes)},
              {field::kLoaderBytesPerS, e.loader_bytes_per_s}};
  putPosition(out, e.epoch, e.step, e.images_seen);
  if (e.has_gpu) {
    json gpu = {{field::kUtilizationPercent, e.gpu_utilization_percent},
                {field::kMemoryUsedBytes, wholeNumber(e.gpu_memory_used_bytes)},
                {field::kMemoryTotalBytes, wholeNumber(e.gpu_memory_total_bytes)},
                {field::kPowerW, e.gpu_power_w}};
    putIf(gpu, field::kGpuIndex, e.gpu_index);
    out[field::kGpu] = gpu;
  }
  return out;
}

json fields(const Checkpoint& e) {
  json out = {{field::kPath, e.path}};
  putPosition(out, e.epoch, e.step, e.images_seen);
  return out;
}

json fields(const Warning& e) {
  json out = {{field::kMessage, e.message}};
  putIf(out, field::kPath, e.path);
  putIf(out, field::kAlarm, e.alarm);
  putIf(out, field::kStep, e.step);
  putIf(out, field::kSkippedTotal, e.skipped_total);
  return out;
}

json fields(const Error& e) { return {{field::kMessage, e.message}}; }

json fields(const RunFinished& e) {
  json out = {{field::kStatus, e.status}};
  if (!e.message.empty()) out[field::kMessage] = e.message;
  putPosition(out, e.epoch, e.step, e.images_seen);
  if (!e.rank_checksums.empty()) out[field::kRankChecksums] = e.rank_checksums;
  return out;
}

json fields(const Restart& e) {
  json out = {{field::kCause, e.cause}};
  putIf(out, field::kAttempt, e.attempt);
  putIf(out, field::kMaxRestarts, e.max_restarts);
  putIf(out, field::kStep, e.step);
  putIf(out, field::kImagesSeen, e.images_seen);
  putNullable(out, field::kResumedFrom, e.resumed_from);
  return out;
}

template <class T>
constexpr const char* typeOf() {
  if constexpr (std::is_same_v<T, RunStarted>)
    return type::kRunStarted;
  else if constexpr (std::is_same_v<T, Step>)
    return type::kStep;
  else if constexpr (std::is_same_v<T, ImportedLosses>)
    return type::kImportedLosses;
  else if constexpr (std::is_same_v<T, EpochEnd>)
    return type::kEpochEnd;
  else if constexpr (std::is_same_v<T, Samples>)
    return type::kSamples;
  else if constexpr (std::is_same_v<T, Parzen>)
    return type::kParzen;
  else if constexpr (std::is_same_v<T, Metrics>)
    return type::kMetrics;
  else if constexpr (std::is_same_v<T, System>)
    return type::kSystem;
  else if constexpr (std::is_same_v<T, Checkpoint>)
    return type::kCheckpoint;
  else if constexpr (std::is_same_v<T, Warning>)
    return type::kWarning;
  else if constexpr (std::is_same_v<T, Error>)
    return type::kError;
  else if constexpr (std::is_same_v<T, RunFinished>)
    return type::kRunFinished;
  else if constexpr (std::is_same_v<T, Restart>)
    return type::kRestart;
  else
    return "";
}

}  // namespace

const char* runEventType(const RunEvent& event) {
  return std::visit([](const auto& e) { return typeOf<std::decay_t<decltype(e)>>(); }, event);
}

json runEventJson(const RunEvent& event) {
  return std::visit(
      [](const auto& e) -> json {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return json::object();
        } else {
          json out = fields(e);
          out[field::kType] = typeOf<T>();
          return out;
        }
      },
      event);
}

}  // namespace streetgan::events
