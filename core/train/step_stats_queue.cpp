#include "core/train/step_stats_queue.h"

#include <torch/torch.h>

namespace streetgan {
namespace {

// Auto policy away from the CPU: at least once a second for the live charts, and a bound on
// the rows held on the device.
constexpr double kAutoFlushSeconds = 1.0;
constexpr std::size_t kAutoMaxPending = 1000;

}  // namespace

StepStatsQueue::StepStatsQueue(bool synchronous, int sync_every_steps)
    : synchronous_(synchronous), every_(sync_every_steps), window_start_(Clock::now()) {}

void StepStatsQueue::push(const PendingStep& info, torch::Tensor values) {
  pending_.push_back(info);
  values_.push_back(std::move(values));
}

bool StepStatsQueue::shouldFlush(Clock::time_point now) const {
  if (pending_.empty()) return false;
  if (every_ > 0) return pending_.size() >= static_cast<std::size_t>(every_);
  if (synchronous_) return true;
  return pending_.size() >= kAutoMaxPending ||
         std::chrono::duration<double>(now - window_start_).count() >= kAutoFlushSeconds;
}

std::vector<FlushedStep> StepStatsQueue::flush() {
  std::vector<FlushedStep> out;
  if (pending_.empty()) return out;
  const auto host = torch::stack(values_).to(torch::kCPU).contiguous();
  ++transfers_;
  const auto now = Clock::now();
  const double window = std::chrono::duration<double>(now - window_start_).count();
  window_start_ = now;
  std::int64_t images = 0;
  for (const auto& step : pending_) images += step.images;

  const double* rows = host.data_ptr<double>();
  out.reserve(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    FlushedStep flushed;
    flushed.info = pending_[i];
    flushed.stats = StepStats::fromRow(rows + i * StepStats::kValues);
    flushed.seconds = synchronous_ || images == 0
                          ? pending_[i].host_seconds
                          : window * static_cast<double>(pending_[i].images) / static_cast<double>(images);
    out.push_back(flushed);
  }
  pending_.clear();
  values_.clear();
  return out;
}

}  // namespace streetgan
