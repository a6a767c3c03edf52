#include "core/runs/run_event.h"

#include "core/runs/event_fields.h"
#include "core/util/json_value.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace streetgan::events {

namespace {

using json = nlohmann::json;

double figureField(const json& body, const char* key) { return jsonNumber(body, key).value_or(std::nan("")); }

Count integerField(const json& body, const char* key) { return jsonInteger(body, key); }

std::string textField(const json& body, const char* key) { return jsonString(body, key); }

// Lists of ranks and Parzen curves are short; a hostile line cannot make them long.
constexpr std::size_t kMaxListed = 4096;

std::vector<double> figures(const json& array) {
  std::vector<double> out;
  out.reserve(array.size());
  for (const json& value : array) out.push_back(value.is_number() ? value.get<double>() : std::nan(""));
  return out;
}

std::optional<std::string> optionalText(const json& body, const char* key) {
  const auto value = body.find(key);
  if (value == body.end() || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

std::optional<DatasetSummary> dataset(const json& body) {
  const auto object = body.find(field::kDataset);
  if (object == body.end() || !object->is_object()) return std::nullopt;
  DatasetSummary d;
  d.root = textField(*object, field::kRoot);
  d.layout = textField(*object, field::kLayout);
  d.images = integerField(*object, field::kImages);
  d.held_out = integerField(*object, field::kHeldOut);
  d.decode_reduction = integerField(*object, field::kDecodeReduction);
  d.workers = integerField(*object, field::kWorkers);
  d.cache = optionalText(*object, field::kCache);
  return d;
}

RunStarted runStarted(const json& body) {
  RunStarted e;
  if (const auto config = body.find(field::kConfig); config != body.end() && config->is_object()) e.setConfig(*config);
  e.device = textField(body, field::kDevice);
  e.precision = textField(body, field::kPrecision);
  e.params_g = integerField(body, field::kParamsG);
  e.params_d = integerField(body, field::kParamsD);
  e.resumed_from = optionalText(body, field::kResumedFrom);
  e.imported_from = optionalText(body, field::kImportedFrom);
  e.epoch = integerField(body, field::kEpoch);
  e.step = integerField(body, field::kStep);
  e.images_seen = integerField(body, field::kImagesSeen);
  e.world_size = integerField(body, field::kWorldSize);
  e.pid = integerField(body, field::kPid);
  e.pid_start_time = static_cast<std::uint64_t>(std::max<std::int64_t>(0, integerField(body, field::kPidStartTime).value_or(0)));
  e.dataset = dataset(body);
  e.batches_per_epoch = integerField(body, field::kBatchesPerEpoch);
  e.nodes = integerField(body, field::kNodes);
  e.threads = integerField(body, field::kThreads);
  e.job = optionalText(body, field::kJob);
  e.backend = textField(body, field::kBackend);
  if (const auto devices = body.find(field::kDevices); devices != body.end() && devices->is_array())
    for (const json& device : *devices)
      if (device.is_string() && e.devices.size() < kMaxListed) e.devices.push_back(device.get<std::string>());
  e.version = textField(body, field::kProgramVersion);
  return e;
}

// Steps are nearly every event of a run: read in one pass over the object's keys rather than a
// lookup per field (bench/bench_event_readers.cpp).
Step step(const json& body) {
  Step e;
  const double none = std::nan("");
  e.loss_d = e.loss_g = e.d_x = e.d_g_z1 = e.d_g_z2 = e.rt = e.images_per_s = e.data_wait_fraction = none;
  const auto number = [none](const json& value) { return jsonNumberValue(value).value_or(none); };
  for (const auto& [key, value] : body.get_ref<const json::object_t&>()) {
    if (key.empty()) continue;
    switch (key[0]) {
      case 'a':
        if (key == field::kAdaP) e.ada_p = jsonNumberValue(value);
        break;
      case 'd':
        if (key == field::kDX) e.d_x = number(value);
        else if (key == field::kDGz1) e.d_g_z1 = number(value);
        else if (key == field::kDGz2) e.d_g_z2 = number(value);
        else if (key == field::kDataWaitFraction) e.data_wait_fraction = number(value);
        break;
      case 'e':
        if (key == field::kEpoch) e.epoch = jsonIntegerValue(value);
        break;
      case 'i':
        if (key == field::kImported)
          e.imported = value.is_boolean() && value.get<bool>();
        else if (key == field::kIteration)
          e.iteration = jsonIntegerValue(value);
        else if (key == field::kIterations) e.iterations = jsonIntegerValue(value);
        else if (key == field::kImagesSeen) e.images_seen = jsonIntegerValue(value);
        else if (key == field::kImagesPerS) e.images_per_s = number(value);
        break;
      case 'l':
        if (key == field::kLossD) e.loss_d = number(value);
        else if (key == field::kLossG) e.loss_g = number(value);
        else if (key == field::kLossScale)
          e.loss_scale = jsonNumberValue(value);
        break;
      case 'r':
        if (key == field::kRt) e.rt = number(value);
        break;
      case 's':
        if (key == field::kStep) e.step = jsonIntegerValue(value);
        else if (key == field::kSkippedStep && value.is_boolean())
          e.skipped_step = value.get<bool>();
        break;
      default:
        break;
    }
  }
  return e;
}

ImportedLosses importedLosses(const json& body) {
  ImportedLosses e;
  e.first_step = figureField(body, field::kFirstStep);
  e.images_per_step = figureField(body, field::kImagesPerStep);
  e.epochs = figureField(body, field::kEpochs);
  e.total_steps = figureField(body, field::kTotalSteps);
  e.steps = integerField(body, field::kSteps);
  if (const auto d = body.find(field::kLossD); d != body.end() && d->is_array()) {
    e.has_loss_d = true;
    e.loss_d = figures(*d);
  }
  if (const auto g = body.find(field::kLossG); g != body.end() && g->is_array()) {
    e.has_loss_g = true;
    e.loss_g = figures(*g);
  }
  return e;
}

System system(const json& body) {
  System e;
  e.epoch = integerField(body, field::kEpoch);
  e.step = integerField(body, field::kStep);
  e.images_seen = integerField(body, field::kImagesSeen);
  e.seconds = figureField(body, field::kSeconds);
  e.cpu_percent = figureField(body, field::kCpuPercent);
  e.cores = figureField(body, field::kCores);
  e.rss_bytes = figureField(body, field::kRssBytes);
  e.host_memory_available_bytes = figureField(body, field::kHostMemoryAvailableBytes);
  e.host_memory_total_bytes = figureField(body, field::kHostMemoryTotalBytes);
  e.loader_bytes_per_s = figureField(body, field::kLoaderBytesPerS);
  const json none = json::object();
  const auto gpu = body.find(field::kGpu);
  e.has_gpu = gpu != body.end() && gpu->is_object();
  const json& g = e.has_gpu ? *gpu : none;
  e.gpu_index = integerField(g, field::kGpuIndex);
  e.gpu_utilization_percent = figureField(g, field::kUtilizationPercent);
  e.gpu_memory_used_bytes = figureField(g, field::kMemoryUsedBytes);
  e.gpu_memory_total_bytes = figureField(g, field::kMemoryTotalBytes);
  e.gpu_power_w = figureField(g, field::kPowerW);
  return e;
}

EpochEnd epochEnd(const json& body) {
  EpochEnd e{integerField(body, field::kEpoch),    integerField(body, field::kEpochs),
             integerField(body, field::kStep),     integerField(body, field::kImagesSeen),
             figureField(body, field::kMeanLossD), figureField(body, field::kMeanLossG),
             figureField(body, field::kSeconds),   integerField(body, field::kSteps),
             integerField(body, field::kImages),   integerField(body, field::kSkippedFiles)};
  return e;
}

Samples samples(const json& body) {
  Samples e{textField(body, field::kPath), integerField(body, field::kStep), integerField(body, field::kEpoch),
            integerField(body, field::kImagesSeen), false};
  const auto imported = body.find(field::kImported);
  e.imported = imported != body.end() && imported->is_boolean() && imported->get<bool>();
  return e;
}

Parzen parzen(const json& body) {
  Parzen e{integerField(body, field::kEpoch),      integerField(body, field::kStep),
           integerField(body, field::kImagesSeen), figureField(body, field::kSigma),
           figureField(body, field::kMeanLl),      figureField(body, field::kStderr),
           integerField(body, field::kNTest),      integerField(body, field::kNValid),
           integerField(body, field::kNSamples),   {},
           figureField(body, field::kSeconds)};
  if (const auto curve = body.find(field::kCurve); curve != body.end() && curve->is_array())
    for (const json& point : *curve)
      if (point.is_object() && e.curve.size() < kMaxListed)
        e.curve.emplace_back(figureField(point, field::kSigma), figureField(point, field::kMeanLl));
  return e;
}

Metrics metrics(const json& body) {
  Metrics e{integerField(body, field::kEpoch),      integerField(body, field::kStep),
            integerField(body, field::kImagesSeen), {},
            textField(body, field::kFeatureSpace),  integerField(body, field::kNSamples),
            integerField(body, field::kNTrain),     integerField(body, field::kSkippedDuePoints),
            figureField(body, field::kSeconds)};
  if (const auto figures = body.find(field::kQualityFigures); figures != body.end() && figures->is_object())
    for (const auto& [name, value] : figures->items()) {
      if (e.figures.size() == Metrics::kMaxFigures) break;
      if (const auto number = jsonNumberValue(value); number && std::isfinite(*number))
        e.figures.emplace_back(name, *number);
    }
  return e;
}

Warning warning(const json& body) {
  return Warning{textField(body, field::kMessage), optionalText(body, field::kPath), optionalText(body, field::kAlarm),
                 integerField(body, field::kStep), integerField(body, field::kSkippedTotal)};
}

RunFinished runFinished(const json& body) {
  RunFinished e{textField(body, field::kStatus),        textField(body, field::kMessage),
                integerField(body, field::kEpoch),      integerField(body, field::kStep),
                integerField(body, field::kImagesSeen), {}};
  if (const auto sums = body.find(field::kRankChecksums); sums != body.end() && sums->is_array())
    for (const json& sum : *sums)
      if (e.rank_checksums.size() < kMaxListed) e.rank_checksums.push_back(jsonIntegerValue(sum).value_or(-1));
  return e;
}

Restart restart(const json& body) {
  return Restart{integerField(body, field::kAttempt), integerField(body, field::kMaxRestarts),
                 integerField(body, field::kStep),    integerField(body, field::kImagesSeen),
                 textField(body, field::kCause),      optionalText(body, field::kResumedFrom)};
}

}  // namespace

void RunStarted::setConfig(json object) {
  config = std::move(object);
  has_config = config.is_object();
  preset = has_config ? textField(config, field::kPreset) : std::string();
  config_epochs = has_config ? integerField(config, field::kEpochs) : std::nullopt;
  config_batch_size = has_config ? integerField(config, field::kBatchSize) : std::nullopt;
}

RunEvent parseRunEvent(const std::string& type_name, const json& body) {
  if (!body.is_object()) return std::monostate{};
  const char* t = type_name.c_str();
  if (std::strcmp(t, type::kStep) == 0) return step(body);
  if (std::strcmp(t, type::kRunStarted) == 0) return runStarted(body);
  if (std::strcmp(t, type::kImportedLosses) == 0) return importedLosses(body);
  if (std::strcmp(t, type::kEpochEnd) == 0) return epochEnd(body);
  if (std::strcmp(t, type::kSamples) == 0) return samples(body);
  if (std::strcmp(t, type::kParzen) == 0) return parzen(body);
  if (std::strcmp(t, type::kMetrics) == 0) return metrics(body);
  if (std::strcmp(t, type::kSystem) == 0) return system(body);
  if (std::strcmp(t, type::kCheckpoint) == 0)
    return Checkpoint{textField(body, field::kPath), integerField(body, field::kStep), integerField(body, field::kEpoch),
                      integerField(body, field::kImagesSeen)};
  if (std::strcmp(t, type::kWarning) == 0) return warning(body);
  if (std::strcmp(t, type::kError) == 0) return Error{textField(body, field::kMessage)};
  if (std::strcmp(t, type::kRunFinished) == 0) return runFinished(body);
  if (std::strcmp(t, type::kRestart) == 0) return restart(body);
  return std::monostate{};
}

Count imagesSeen(const RunEvent& event) {
  return std::visit(
      [](const auto& e) -> Count {
        if constexpr (std::is_same_v<std::decay_t<decltype(e)>, std::monostate> ||
                      std::is_same_v<std::decay_t<decltype(e)>, ImportedLosses> ||
                      std::is_same_v<std::decay_t<decltype(e)>, Warning> ||
                      std::is_same_v<std::decay_t<decltype(e)>, Error>)
          return std::nullopt;
        else
          return e.images_seen;
      },
      event);
}

double fractionalEpoch(const Step& step, double iterations_fallback, double epoch_fallback) {
  const double iterations = step.iterations ? static_cast<double>(*step.iterations) : iterations_fallback;
  const double epoch = step.epoch ? static_cast<double>(*step.epoch) : epoch_fallback;
  const double iteration = step.iteration ? static_cast<double>(*step.iteration) : 0;
  return epoch - 1 + (iterations > 0 ? iteration / iterations : 0);
}

ImportedPoint importedPoint(const ImportedLosses& losses, std::size_t k) {
  ImportedPoint point;
  point.step = losses.first_step + static_cast<double>(k);
  point.images_seen = point.step * losses.images_per_step;
  point.epoch = losses.total_steps > 0 && std::isfinite(losses.epochs) ? point.step * losses.epochs / losses.total_steps : 0;
  return point;
}

void DataWaitWindow::add(double wait_fraction) {
  if (!std::isfinite(wait_fraction)) return;
  if (recent_.size() < window_) recent_.push_back(wait_fraction);
  else recent_[next_++ % window_] = wait_fraction;
}

std::optional<double> DataWaitWindow::share() const {
  if (recent_.size() < enough_ || recent_.empty()) return std::nullopt;
  double sum = 0;
  for (double w : recent_) sum += w;
  return sum / static_cast<double>(recent_.size());
}

void DataWaitWindow::clear() {
  recent_.clear();
  next_ = 0;
}

}  // namespace streetgan::events
