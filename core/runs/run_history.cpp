#include "core/runs/run_history.h"
#include "core/runs/quality_evaluation_file.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace streetgan {

namespace {

/// Drops the points past `images_seen` (a resumed run logs them again).
template <typename Points>
void truncateFrom(Points& points, double images_seen) {
  while (!points.empty() && points.back().images_seen > images_seen) points.pop_back();
}

double orValue(const events::Count& count, double fallback) { return count ? static_cast<double>(*count) : fallback; }
double finiteOr(double value, double fallback) { return std::isnan(value) ? fallback : value; }

}  // namespace

void RunHistoryReader::feed(std::string_view bytes) {
  // Line by line, each event placed and dropped: a whole log fed at once never holds its events.
  reader_.feedLines(bytes, [this](std::string_view line) {
    if (const auto event = reader_.parse(line)) add(*event);
  });
  history_.malformed_lines = reader_.malformedLines() + unusable_;
}

namespace {

// {"lr": 0.0002, "augment": {"shift": 0.2}} as lr → 0.0002, augment.shift → 0.2: a config nests
// one level; anything deeper is kept as its JSON text.
std::map<std::string, std::string> flattenedConfig(const nlohmann::json& config) {
  std::map<std::string, std::string> out;
  if (!config.is_object()) return out;
  const auto put = [&out](const std::string& key, const nlohmann::json& value) {
    if (out.size() < RunHistory::kMaxConfigEntries)
      out[key] = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  for (const auto& [key, value] : config.items()) {
    if (!value.is_object()) {
      put(key, value);
      continue;
    }
    for (const auto& [inner, inner_value] : value.items()) put(key + "." + inner, inner_value);
  }
  return out;
}

}  // namespace

void RunHistoryReader::add(const StreamEvent& event) {
  const double time = event.time;
  RunHistory& h = history_;
  if (const auto* started = std::get_if<events::RunStarted>(&event.event)) {
    ++h.process_starts;
    if (first_started_ < 0) {
      first_started_ = time;
      if (started->has_config) {
        h.preset = started->preset;
        h.batch_size = started->config_batch_size.value_or(0);
        h.epochs = started->config_epochs.value_or(0);
      }
    }
    if (started->has_config) h.config = flattenedConfig(started->config);
    h.device = started->device;
    h.backend = started->backend;
    h.world_size = started->world_size.value_or(1);
    if (started->images_seen) {
      const auto resumed_at = static_cast<double>(*started->images_seen);
      truncateFrom(h.steps, resumed_at);
      truncateFrom(h.parzen, resumed_at);
      truncateFrom(h.metrics, resumed_at);
      truncateFrom(h.samples, resumed_at);
      truncateFrom(h.system, resumed_at);
    }
    return;
  }
  if (first_started_ < 0) first_started_ = time;  // a log without its start: time from its first line
  const double seconds = time - first_started_;
  if (const auto* step = std::get_if<events::Step>(&event.event)) {
    RunHistory::Step s;
    if (step->iterations) iterations_ = static_cast<double>(*step->iterations);
    s.images_seen = orValue(step->images_seen, 0);
    s.epoch = events::fractionalEpoch(*step, iterations_);
    s.seconds = seconds;
    s.loss_d = step->loss_d;
    s.loss_g = step->loss_g;
    s.d_x = step->d_x;
    s.d_g_z1 = step->d_g_z1;
    s.d_g_z2 = step->d_g_z2;
    s.rt = step->rt;
    s.ada_p = step->ada_p.value_or(std::nan(""));
    s.images_per_s = step->images_per_s;
    s.data_wait_fraction = step->data_wait_fraction;
    h.steps.push_back(s);
  } else if (const auto* imported = std::get_if<events::ImportedLosses>(&event.event)) {
    // `streetgan import`'s loss pairs, many to a line (docs/events.md); a null loss is one the
    // file did not have.
    if (!std::isfinite(imported->first_step) || !std::isfinite(imported->images_per_step) ||
        (!imported->has_loss_d && !imported->has_loss_g)) {
      ++unusable_;
      return;
    }
    const std::size_t n = std::max(imported->loss_d.size(), imported->loss_g.size());
    for (std::size_t k = 0; k < n; ++k) {
      const events::ImportedPoint point = events::importedPoint(*imported, k);
      RunHistory::Step s;
      s.images_seen = point.images_seen;
      s.epoch = point.epoch;
      s.seconds = seconds;
      s.loss_d = k < imported->loss_d.size() ? imported->loss_d[k] : std::nan("");
      s.loss_g = k < imported->loss_g.size() ? imported->loss_g[k] : std::nan("");
      s.d_x = s.d_g_z1 = s.d_g_z2 = s.rt = s.ada_p = s.images_per_s = s.data_wait_fraction = std::nan("");
      h.steps.push_back(s);
    }
  } else if (const auto* parzen = std::get_if<events::Parzen>(&event.event)) {
    h.parzen.push_back({orValue(parzen->images_seen, 0), orValue(parzen->epoch, 0), seconds, parzen->mean_ll,
                        parzen->standard_error});
  } else if (const auto* metrics = std::get_if<events::Metrics>(&event.event)) {
    h.metrics.push_back({orValue(metrics->images_seen, 0), orValue(metrics->epoch, 0), seconds, metrics->figures,
                         metrics->feature_space});
  } else if (const auto* warning = std::get_if<events::Warning>(&event.event)) {
    if (warning->alarm) ++h.alarms[*warning->alarm];
  } else if (const auto* samples = std::get_if<events::Samples>(&event.event)) {
    h.samples.push_back({orValue(samples->images_seen, 0), seconds, samples->path});
  } else if (const auto* end = std::get_if<events::EpochEnd>(&event.event)) {
    if (std::isfinite(end->seconds)) h.epoch_seconds.push_back(end->seconds);
  } else if (const auto* system = std::get_if<events::System>(&event.event)) {
    RunHistory::System s;
    s.images_seen = orValue(system->images_seen, 0);
    s.seconds = seconds;
    s.cpu_percent = finiteOr(system->cpu_percent, -1);
    s.cores = finiteOr(system->cores, 0);
    s.rss_bytes = finiteOr(system->rss_bytes, -1);
    s.host_memory_total_bytes = finiteOr(system->host_memory_total_bytes, -1);
    if (system->has_gpu) {
      s.gpu_utilization_percent = finiteOr(system->gpu_utilization_percent, -1);
      s.gpu_memory_used_bytes = finiteOr(system->gpu_memory_used_bytes, -1);
    }
    h.system.push_back(s);
  }
}

std::optional<double> RunHistory::Metrics::figure(std::string_view name) const {
  for (const auto& [figure_name, value] : figures)
    if (figure_name == name) return value;
  return std::nullopt;
}

RunFigures runFigures(const RunHistory& history) {
  RunFigures figures;
  std::vector<double> rates;
  for (const auto& step : history.steps)
    if (std::isfinite(step.images_per_s) && step.images_per_s > 0) rates.push_back(step.images_per_s);
  if (!rates.empty()) {
    const auto middle = rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2);
    std::nth_element(rates.begin(), middle, rates.end());
    double median = *middle;
    if (rates.size() % 2 == 0) median = (median + *std::max_element(rates.begin(), middle)) / 2;
    figures.images_per_s = median;
    figures.images_per_hour = median * 3600;
  }
  if (!history.epoch_seconds.empty()) {
    double sum = 0;
    for (double s : history.epoch_seconds) sum += s;
    figures.seconds_per_epoch = sum / static_cast<double>(history.epoch_seconds.size());
  }
  for (const auto& p : history.parzen)
    if (std::isfinite(p.mean_ll) && (!figures.best_parzen || p.mean_ll > *figures.best_parzen)) figures.best_parzen = p.mean_ll;
  double cpu_sum = 0, gpu_sum = 0;
  int cpu_n = 0, gpu_n = 0;
  for (const auto& s : history.system) {
    if (s.rss_bytes >= 0) figures.peak_rss_bytes = std::max(figures.peak_rss_bytes.value_or(0), s.rss_bytes);
    if (s.cpu_percent >= 0) {
      cpu_sum += s.cores > 0 ? s.cpu_percent / s.cores : s.cpu_percent;
      ++cpu_n;
    }
    if (s.gpu_utilization_percent >= 0) {
      gpu_sum += s.gpu_utilization_percent;
      ++gpu_n;
    }
    if (s.gpu_memory_used_bytes >= 0)
      figures.peak_gpu_memory_bytes = std::max(figures.peak_gpu_memory_bytes.value_or(0), s.gpu_memory_used_bytes);
  }
  if (cpu_n > 0) figures.mean_cpu_percent = cpu_sum / cpu_n;
  if (gpu_n > 0) figures.mean_gpu_percent = gpu_sum / gpu_n;
  for (const auto& m : history.metrics) {  // oldest first: the newest evaluation with a figure has the last word
    if (const auto swd = m.figure(quality_figure::kSwd)) figures.latest_swd = swd;
    if (const auto copies = m.figure(quality_figure::kCopyRate)) figures.latest_copy_rate = copies;
    if (const auto fid = m.figure(quality_figure::kFid)) {
      figures.latest_fid = fid;
      figures.latest_fid_space = m.feature_space;
    }
  }
  for (const auto& kind : history.alarms) figures.alarms += kind.second;
  return figures;
}

std::optional<double> dollarsPerMillionImages(std::optional<double> dollars_per_hour, std::optional<double> images_per_hour) {
  if (!dollars_per_hour || !images_per_hour || *dollars_per_hour <= 0 || *images_per_hour <= 0) return std::nullopt;
  return *dollars_per_hour / *images_per_hour * 1e6;
}

}  // namespace streetgan
