#include "core/runs/training_status.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace streetgan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string printed(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// A figure for the line: "-" when it is not known (ASCII: the line may go to a log in any locale).
std::string figureText(const char* format, double value) {
  return std::isfinite(value) ? printed(format, value) : "-";
}

std::string countText(const events::Count& value) { return value ? std::to_string(*value) : "-"; }

// Characters, not bytes: a path or message may hold UTF-8.
std::size_t columns(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string formatDuration(double seconds) {
  // Beyond 10,000 hours an ETA says nothing (and the integer conversions below stay in range).
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 3.6e7) return "-";
  const long long s = std::llround(seconds);
  char buffer[32];
  if (s < 60) std::snprintf(buffer, sizeof buffer, "%llds", s);
  else if (s < 3600) std::snprintf(buffer, sizeof buffer, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", s / 3600, s / 60 % 60);
  return buffer;
}

TrainingStatus::TrainingStatus(double window_s) : window_s_(window_s > 0 ? window_s : 60.0) {}

void TrainingStatus::started(double now_s) {
  if (has_start_) return;
  has_start_ = true;
  start_s_ = now_s;
}

void TrainingStatus::onRunStarted(const events::RunStarted& run, double now_s) {
  // A restart (or a resume in the same process) starts the clock and the window again.
  has_start_ = false;
  started(now_s);
  window_.clear();
  wait_sum_ = 0;
  wait_count_ = 0;
  if (run.config_epochs && *run.config_epochs > 0) epochs_ = *run.config_epochs;
}

void TrainingStatus::onStep(const events::Step& step, double now_s) {
  started(now_s);
  has_step_ = true;
  last_ = step;
  if (!step.step) return;
  const double wait = std::isfinite(step.data_wait_fraction) ? std::clamp(step.data_wait_fraction, 0.0, 1.0) : kNaN;
  window_.push_back({now_s, *step.step, step.images_seen.value_or(0), wait});
  if (std::isfinite(wait)) {
    wait_sum_ += wait;
    ++wait_count_;
  }
  // Keep the steps of the last window_s seconds, and at least two.
  while (window_.size() > 2 && now_s - window_[1].time_s >= window_s_) {
    if (std::isfinite(window_.front().data_wait)) {
      wait_sum_ -= window_.front().data_wait;
      --wait_count_;
    }
    window_.pop_front();
  }
}

void TrainingStatus::onEpochEnd(const events::EpochEnd& end, double now_s) {
  started(now_s);
  if (end.epochs && *end.epochs > 0) epochs_ = *end.epochs;
}

double TrainingStatus::stepsPerSecond() const {
  if (window_.size() < 2) return kNaN;
  const double seconds = window_.back().time_s - window_.front().time_s;
  const double steps = static_cast<double>(window_.back().step - window_.front().step);
  return seconds > 0 && steps > 0 ? steps / seconds : kNaN;
}

double TrainingStatus::imagesPerSecond() const {
  if (window_.size() < 2) return kNaN;
  const double seconds = window_.back().time_s - window_.front().time_s;
  const double images = static_cast<double>(window_.back().images_seen - window_.front().images_seen);
  return seconds > 0 && images > 0 ? images / seconds : kNaN;
}

double TrainingStatus::dataWaitFraction() const {
  return wait_count_ > 0 ? std::clamp(wait_sum_ / static_cast<double>(wait_count_), 0.0, 1.0) : kNaN;
}

double TrainingStatus::epochEtaSeconds() const {
  if (!has_step_ || !last_.iteration || !last_.iterations) return kNaN;
  const double left = static_cast<double>(std::max<std::int64_t>(0, *last_.iterations - *last_.iteration));
  return left / stepsPerSecond();
}

double TrainingStatus::runEtaSeconds() const {
  if (!has_step_ || !last_.iteration || !last_.iterations || !last_.epoch || epochs_ <= 0) return kNaN;
  const double epochs_after = static_cast<double>(std::max<std::int64_t>(0, epochs_ - *last_.epoch));
  const double left = epochs_after * static_cast<double>(*last_.iterations) +
                      static_cast<double>(std::max<std::int64_t>(0, *last_.iterations - *last_.iteration));
  return left / stepsPerSecond();
}

double TrainingStatus::elapsedSeconds(double now_s) const { return has_start_ ? std::max(0.0, now_s - start_s_) : 0.0; }

std::string TrainingStatus::liveLine(double now_s, std::size_t width) const {
  const std::string epoch = "epoch " + countText(last_.epoch) + "/" + (epochs_ > 0 ? std::to_string(epochs_) : "-");
  std::string bar;
  if (last_.iteration && last_.iterations && *last_.iterations > 0) {
    constexpr int kBar = 10;
    const double share = std::clamp(static_cast<double>(*last_.iteration) / static_cast<double>(*last_.iterations), 0.0, 1.0);
    const int filled = static_cast<int>(share * kBar);
    bar = "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kBar - filled), '.') + "]";
  }
  // Most important first; a narrow terminal loses the fields at the end, whole.
  const std::vector<std::string> fields = {
      epoch,
      bar,
      countText(last_.iteration) + "/" + countText(last_.iterations),
      figureText("%.1f", imagesPerSecond()) + " img/s",
      "data " + figureText("%.0f", dataWaitFraction() * 100) + "%",
      "ETA " + formatDuration(epochEtaSeconds()) + ", run " + formatDuration(runEtaSeconds()),
      "D " + figureText("%.3f", last_.loss_d) + " G " + figureText("%.3f", last_.loss_g),
      "D(x) " + figureText("%.2f", last_.d_x) + " D(G(z)) " + figureText("%.2f", last_.d_g_z1),
      "elapsed " + formatDuration(elapsedSeconds(now_s)),
  };
  std::string line;
  for (const std::string& field : fields) {
    if (field.empty()) continue;
    const std::string next = line.empty() ? field : line + "  " + field;
    if (columns(next) > width) break;
    line = next;
  }
  // A terminal narrower than the first field still shows what fits of it.
  if (line.empty()) line = fields.front().substr(0, width);
  return line;
}

std::string TrainingStatus::plainLine(double now_s) const {
  const double share = last_.iteration && last_.iterations && *last_.iterations > 0
                           ? 100.0 * static_cast<double>(*last_.iteration) / static_cast<double>(*last_.iterations)
                           : kNaN;
  return "[" + formatDuration(elapsedSeconds(now_s)) + "] epoch " + countText(last_.epoch) + "/" +
         (epochs_ > 0 ? std::to_string(epochs_) : "-") + "  step " + countText(last_.iteration) + "/" +
         countText(last_.iterations) + " (" + figureText("%.0f", share) + "%)  " + figureText("%.1f", imagesPerSecond()) +
         " img/s  data wait " + figureText("%.0f", dataWaitFraction() * 100) + "%  loss_d " + figureText("%.4f", last_.loss_d) +
         "  loss_g " + figureText("%.4f", last_.loss_g) + "  D(x) " + figureText("%.3f", last_.d_x) + "  D(G(z)) " +
         figureText("%.3f", last_.d_g_z1) + "  epoch ETA " + formatDuration(epochEtaSeconds()) + "  run ETA " +
         formatDuration(runEtaSeconds());
}

}  // namespace streetgan
