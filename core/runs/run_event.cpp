#include "core/runs/run_event.h"

#include "core/runs/event_fields.h"
#include "core/util/json_value.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

namespace streetgan::events {

namespace {

using json = nlohmann::json;

double figureField(const json& body, const char* key) { return jsonNumber(body, key).value_or(std::nan("")); }

Count integerField(const json& body, const char* key) { return jsonInteger(body, key); }

std::string textField(const json& body, const char* key) { return jsonString(body, key); }

std::vector<double> figures(const json& array) {
  std::vector<double> out;
  out.reserve(array.size());
  for (const json& value : array) out.push_back(value.is_number() ? value.get<double>() : std::nan(""));
  return out;
}

RunStarted runStarted(const json& body) {
  RunStarted e;
  e.device = textField(body, field::kDevice);
  e.backend = textField(body, field::kBackend);
  e.world_size = integerField(body, field::kWorldSize);
  e.nodes = integerField(body, field::kNodes);
  e.epoch = integerField(body, field::kEpoch);
  e.step = integerField(body, field::kStep);
  e.images_seen = integerField(body, field::kImagesSeen);
  e.pid = integerField(body, field::kPid);
  e.pid_start_time = static_cast<std::uint64_t>(std::max<std::int64_t>(0, integerField(body, field::kPidStartTime).value_or(0)));
  const auto config = body.find(field::kConfig);
  if (config != body.end() && config->is_object()) {
    e.has_config = true;
    e.preset = textField(*config, field::kPreset);
    e.config_epochs = integerField(*config, field::kEpochs);
    e.config_batch_size = integerField(*config, field::kBatchSize);
  }
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
        if (key == field::kIteration) e.iteration = jsonIntegerValue(value);
        else if (key == field::kIterations) e.iterations = jsonIntegerValue(value);
        else if (key == field::kImagesSeen) e.images_seen = jsonIntegerValue(value);
        else if (key == field::kImagesPerS) e.images_per_s = number(value);
        break;
      case 'l':
        if (key == field::kLossD) e.loss_d = number(value);
        else if (key == field::kLossG) e.loss_g = number(value);
        break;
      case 'r':
        if (key == field::kRt) e.rt = number(value);
        break;
      case 's':
        if (key == field::kStep) e.step = jsonIntegerValue(value);
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
  e.gpu_utilization_percent = figureField(g, field::kUtilizationPercent);
  e.gpu_memory_used_bytes = figureField(g, field::kMemoryUsedBytes);
  e.gpu_memory_total_bytes = figureField(g, field::kMemoryTotalBytes);
  e.gpu_power_w = figureField(g, field::kPowerW);
  return e;
}

}  // namespace

RunEvent parseRunEvent(const std::string& type_name, const json& body) {
  if (!body.is_object()) return std::monostate{};
  const char* t = type_name.c_str();
  if (std::strcmp(t, type::kStep) == 0) return step(body);
  if (std::strcmp(t, type::kRunStarted) == 0) return runStarted(body);
  if (std::strcmp(t, type::kImportedLosses) == 0) return importedLosses(body);
  if (std::strcmp(t, type::kEpochEnd) == 0)
    return EpochEnd{integerField(body, field::kEpoch),        integerField(body, field::kEpochs),
                    integerField(body, field::kStep),         integerField(body, field::kImagesSeen),
                    figureField(body, field::kMeanLossD),   figureField(body, field::kMeanLossG),
                    figureField(body, field::kSeconds)};
  if (std::strcmp(t, type::kSamples) == 0)
    return Samples{textField(body, field::kPath), integerField(body, field::kStep), integerField(body, field::kEpoch),
                   integerField(body, field::kImagesSeen)};
  if (std::strcmp(t, type::kParzen) == 0)
    return Parzen{integerField(body, field::kEpoch), integerField(body, field::kStep), integerField(body, field::kImagesSeen),
                  figureField(body, field::kSigma), figureField(body, field::kMeanLl), figureField(body, field::kStderr)};
  if (std::strcmp(t, type::kMetrics) == 0) {
    Metrics e{integerField(body, field::kEpoch), integerField(body, field::kStep), integerField(body, field::kImagesSeen), {},
              textField(body, field::kFeatureSpace)};
    if (const auto figures = body.find(field::kQualityFigures); figures != body.end() && figures->is_object())
      for (const auto& [name, value] : figures->items()) {
        if (e.figures.size() == Metrics::kMaxFigures) break;
        if (const auto number = jsonNumberValue(value); number && std::isfinite(*number)) e.figures.emplace_back(name, *number);
      }
    return e;
  }
  if (std::strcmp(t, type::kSystem) == 0) return system(body);
  if (std::strcmp(t, type::kCheckpoint) == 0)
    return Checkpoint{textField(body, field::kPath), integerField(body, field::kStep), integerField(body, field::kEpoch),
                      integerField(body, field::kImagesSeen)};
  if (std::strcmp(t, type::kWarning) == 0) {
    Warning e{textField(body, field::kMessage), std::nullopt, std::nullopt};
    if (const auto path = body.find(field::kPath); path != body.end() && path->is_string()) e.path = path->get<std::string>();
    if (const auto alarm = body.find(field::kAlarm); alarm != body.end() && alarm->is_string())
      e.alarm = alarm->get<std::string>();
    return e;
  }
  if (std::strcmp(t, type::kError) == 0) return Error{textField(body, field::kMessage)};
  if (std::strcmp(t, type::kRunFinished) == 0)
    return RunFinished{textField(body, field::kStatus), textField(body, field::kMessage), integerField(body, field::kEpoch),
                       integerField(body, field::kStep), integerField(body, field::kImagesSeen)};
  if (std::strcmp(t, type::kRestart) == 0)
    return Restart{integerField(body, field::kAttempt), integerField(body, field::kMaxRestarts), integerField(body, field::kStep),
                   integerField(body, field::kImagesSeen), textField(body, field::kCause)};
  return std::monostate{};
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
