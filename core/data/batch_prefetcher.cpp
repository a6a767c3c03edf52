#include "core/data/batch_prefetcher.h"

#include "core/util/exception_message.h"

#include <algorithm>

namespace streetgan {

BatchPrefetcher::BatchPrefetcher(const BatchLoader& loader, int workers, int prefetch,
                                 std::int64_t first_epoch, std::int64_t first_batch,
                                 std::int64_t end_epoch)
    : loader_(loader),
      per_epoch_(std::max<std::int64_t>(1, loader.batchesPerEpoch())),
      end_(end_epoch * per_epoch_),
      window_(std::max(1, workers) + std::max(0, prefetch)),
      next_out_(first_epoch * per_epoch_ + first_batch),
      next_claim_(next_out_) {
  for (int i = 0; i < std::max(1, workers); ++i) {
    try {
      threads_.emplace_back([this] { work(); });
    } catch (const std::exception&) {
      // A thread that cannot be started (no memory for its stack, a process limit): with none,
      // the failure is the caller's; with some, the same batches come, only later. Throwing past
      // a running thread here would end the program.
      if (threads_.empty()) throw;
      break;
    }
  }
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancel_.store(true);
  }
  changed_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void BatchPrefetcher::work() {
  while (true) {
    std::int64_t position;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] {
        return cancel_.load() || next_claim_ >= end_ || next_claim_ < next_out_ + window_;
      });
      if (cancel_.load() || next_claim_ >= end_) return;
      position = next_claim_++;
      peak_ = std::max(peak_, next_claim_ - next_out_);
    }
    Result<Batch> batch = makeError("not loaded");
    try {
      batch = loader_.load(position / per_epoch_, position % per_epoch_, &cancel_);
    } catch (...) {
      batch = makeError("loading a batch failed: " + exceptionMessage(std::current_exception()));
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.emplace(position, std::move(batch));
    }
    changed_.notify_all();
  }
}

Result<PrefetchedBatch> BatchPrefetcher::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (next_out_ >= end_) return makeError("no batch left in the epoch range");
  changed_.wait(lock, [&] { return ready_.count(next_out_) != 0; });
  auto node = ready_.extract(next_out_);
  PrefetchedBatch out;
  out.epoch = next_out_ / per_epoch_;
  out.batch_index = next_out_ % per_epoch_;
  ++next_out_;
  lock.unlock();
  changed_.notify_all();
  if (!node.mapped()) return makeError(node.mapped().error());
  out.batch = std::move(node.mapped().value());
  return out;
}

std::int64_t BatchPrefetcher::peakInFlight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

}  // namespace streetgan
