#include "core/runs/run_history.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace streetgan {

namespace {

using json = nlohmann::json;

double numberAt(const json& body, const char* key, double fallback = std::nan("")) {
  const auto it = body.find(key);
  return it != body.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string stringAt(const json& body, const char* key) {
  const auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Drops the points past `images_seen` (a resumed run logs them again).
template <typename Points>
void truncateFrom(Points& points, double images_seen) {
  while (!points.empty() && points.back().images_seen > images_seen) points.pop_back();
}

}  // namespace

void RunHistoryReader::feed(std::string_view bytes) {
  std::size_t start = 0;
  while (true) {
    const std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) {
      partial_.append(bytes.substr(start));
      return;
    }
    if (partial_.empty()) {
      parseLine(bytes.substr(start, end - start));
      complete_bytes_ += end - start + 1;
    } else {
      partial_.append(bytes.substr(start, end - start));
      parseLine(partial_);
      complete_bytes_ += partial_.size() + 1;
      partial_.clear();
    }
    start = end + 1;
  }
}

void RunHistoryReader::parseLine(std::string_view line) {
  if (line.empty()) return;
  const json event = json::parse(line, nullptr, false);
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) {
    ++history_.malformed_lines;
    return;
  }
  const std::string type = event["type"].get<std::string>();
  const double time = numberAt(event, "time", 0);
  RunHistory& h = history_;
  if (type == "run_started") {
    ++h.process_starts;
    if (first_started_ < 0) {
      first_started_ = time;
      const auto config = event.find("config");
      if (config != event.end() && config->is_object()) {
        h.preset = stringAt(*config, "preset");
        h.batch_size = static_cast<std::int64_t>(numberAt(*config, "batch_size", 0));
        h.epochs = static_cast<std::int64_t>(numberAt(*config, "epochs", 0));
      }
    }
    h.device = stringAt(event, "device");
    h.backend = stringAt(event, "backend");
    h.world_size = static_cast<std::int64_t>(numberAt(event, "world_size", 1));
    const double resumed_at = numberAt(event, "images_seen");
    if (std::isfinite(resumed_at)) {
      truncateFrom(h.steps, resumed_at);
      truncateFrom(h.parzen, resumed_at);
      truncateFrom(h.samples, resumed_at);
      truncateFrom(h.system, resumed_at);
    }
    return;
  }
  if (first_started_ < 0) first_started_ = time;  // a log without its start: time from its first line
  const double seconds = time - first_started_;
  const double images = numberAt(event, "images_seen", 0);
  if (type == "step") {
    RunHistory::Step s;
    iterations_ = numberAt(event, "iterations", iterations_);
    s.images_seen = images;
    s.epoch = numberAt(event, "epoch", 1) - 1 + (iterations_ > 0 ? numberAt(event, "iteration", 0) / iterations_ : 0);
    s.seconds = seconds;
    s.loss_d = numberAt(event, "loss_d");
    s.loss_g = numberAt(event, "loss_g");
    s.d_x = numberAt(event, "d_x");
    s.d_g_z1 = numberAt(event, "d_g_z1");
    s.d_g_z2 = numberAt(event, "d_g_z2");
    s.images_per_s = numberAt(event, "images_per_s");
    s.data_wait_fraction = numberAt(event, "data_wait_fraction");
    h.steps.push_back(s);
  } else if (type == "imported_losses") {
    // `streetgan import`'s loss pairs, many to a line (docs/events.md): point k is step
    // first_step + k, at (first_step + k) × images_per_step images and epoch
    // (first_step + k) × epochs / total_steps; a null loss is one the file did not have.
    const double first = numberAt(event, "first_step");
    const double per_step = numberAt(event, "images_per_step", 0);
    const double epochs = numberAt(event, "epochs", 0), total = numberAt(event, "total_steps", 0);
    const auto loss_d = event.find("loss_d"), loss_g = event.find("loss_g");
    const bool has_d = loss_d != event.end() && loss_d->is_array();
    const bool has_g = loss_g != event.end() && loss_g->is_array();
    if (!std::isfinite(first) || !std::isfinite(per_step) || (!has_d && !has_g)) {
      ++h.malformed_lines;
      return;
    }
    const auto valueAt = [](const json& array, std::size_t k) {
      return k < array.size() && array[k].is_number() ? array[k].get<double>() : std::nan("");
    };
    const std::size_t n = std::max(has_d ? loss_d->size() : std::size_t{0}, has_g ? loss_g->size() : std::size_t{0});
    for (std::size_t k = 0; k < n; ++k) {
      const double step = first + static_cast<double>(k);
      RunHistory::Step s;
      s.images_seen = step * per_step;
      s.epoch = total > 0 && std::isfinite(epochs) ? step * epochs / total : 0;
      s.seconds = seconds;
      s.loss_d = has_d ? valueAt(*loss_d, k) : std::nan("");
      s.loss_g = has_g ? valueAt(*loss_g, k) : std::nan("");
      s.d_x = s.d_g_z1 = s.d_g_z2 = s.images_per_s = s.data_wait_fraction = std::nan("");
      h.steps.push_back(s);
    }
  } else if (type == "parzen") {
    h.parzen.push_back({images, numberAt(event, "epoch", 0), seconds, numberAt(event, "mean_ll"), numberAt(event, "stderr")});
  } else if (type == "samples") {
    h.samples.push_back({images, seconds, stringAt(event, "path")});
  } else if (type == "epoch_end") {
    const double epoch_seconds = numberAt(event, "seconds");
    if (std::isfinite(epoch_seconds)) h.epoch_seconds.push_back(epoch_seconds);
  } else if (type == "system") {
    RunHistory::System s;
    s.images_seen = images;
    s.seconds = seconds;
    s.cpu_percent = numberAt(event, "cpu_percent", -1);
    s.cores = numberAt(event, "cores", 0);
    s.rss_bytes = numberAt(event, "rss_bytes", -1);
    s.host_memory_total_bytes = numberAt(event, "host_memory_total_bytes", -1);
    const auto gpu = event.find("gpu");
    if (gpu != event.end() && gpu->is_object()) {
      s.gpu_utilization_percent = numberAt(*gpu, "utilization_percent", -1);
      s.gpu_memory_used_bytes = numberAt(*gpu, "memory_used_bytes", -1);
    }
    h.system.push_back(s);
  }
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
  return figures;
}

std::optional<double> dollarsPerMillionImages(std::optional<double> dollars_per_hour, std::optional<double> images_per_hour) {
  if (!dollars_per_hour || !images_per_hour || *dollars_per_hour <= 0 || *images_per_hour <= 0) return std::nullopt;
  return *dollars_per_hour / *images_per_hour * 1e6;
}

}  // namespace streetgan
