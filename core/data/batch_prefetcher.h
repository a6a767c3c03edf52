#pragma once
// BatchPrefetcher: worker threads that run BatchLoader::load ahead of the training step and hand
// the batches out strictly in order (epoch by epoch, batch by batch) through a bounded queue: at
// most `workers + prefetch` batches are loaded or waiting at any time, so memory stays bounded
// however slow the consumer is. The stream runs from a start position to the end of an epoch
// range, across epoch boundaries. The destructor cancels and joins the workers. A worker that
// throws (out of memory) makes next() return that Error.
#include "core/data/batch_loader.h"
#include "core/util/result.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace streetgan {

struct PrefetchedBatch {
  std::int64_t epoch = 0;
  std::int64_t batch_index = 0;
  Batch batch;
};

class BatchPrefetcher {
public:
  /// Serves batches from (first_epoch, first_batch) up to the end of epoch `end_epoch − 1`.
  /// `workers` ≥ 1 threads; `prefetch` ≥ 0 extra ready batches.
  BatchPrefetcher(const BatchLoader& loader, int workers, int prefetch, std::int64_t first_epoch,
                  std::int64_t first_batch, std::int64_t end_epoch);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  /// True while batches remain.
  bool hasNext() const { return next_out_ < end_; }
  /// The next batch in order, waiting for it if needed.
  Result<PrefetchedBatch> next();
  /// Most batches that were loaded or waiting at the same time so far (for tests of the bound).
  std::int64_t peakInFlight() const;

private:
  void work();

  const BatchLoader& loader_;
  const std::int64_t per_epoch_, end_;
  const std::int64_t window_;
  std::int64_t next_out_, next_claim_;
  std::int64_t peak_ = 0;
  std::map<std::int64_t, Result<Batch>> ready_;
  std::string failure_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::atomic<bool> cancel_{false};
  std::vector<std::thread> threads_;
};

}  // namespace streetgan
