#pragma once
// BatchLoader: turns an ImageDataset into training batches. The order of an epoch is a shuffle
// seeded by (seed, epoch) and the augmentation of each image is seeded by (seed, epoch, index),
// so a batch depends only on those numbers: never on thread timing or worker count, the same
// after a resume, and the same from the image files or from a pre-decoded ImageCache (images
// missing from the cache are decoded from their files). load() is safe to call from several
// threads at once; BatchPrefetcher runs it on worker threads. A file that cannot be used is left
// out of its batch and named in Batch::skipped. Batches hold the augmented pixels as bytes (a
// quarter of float's size, and the copy to an accelerator with them); the Gaussian noise and the
// scaling to [-1, 1] happen on the training device (DeviceBatchFeeder).
#include "core/data/image_cache.h"
#include "core/data/image_dataset.h"
#include "core/data/sample_pipeline.h"

#include <torch/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace streetgan {

struct Batch {
  torch::Tensor images;               ///< (n, nc, S, S) uint8, RGB; n may be 0
  std::vector<SkippedFile> skipped;   ///< every file of the batch that could not be used
};

class BatchLoader {
public:
  /// `cache` may be null. It must hold images decoded like `pipeline` (channels, reduction);
  /// check with cacheMismatch() first.
  BatchLoader(ImageDataset dataset, SamplePipeline pipeline, int batch_size, std::uint64_t seed,
              std::shared_ptr<const ImageCache> cache = nullptr);

  /// Allocate batches in page-locked (pinned) memory, for asynchronous copies to an
  /// accelerator. Needs a LibTorch with CUDA; off by default (and on the CPU).
  void setPinnedMemory(bool pinned) { pinned_ = pinned; }

  /// Serve rank `rank` of `world` ranks (DistributedSampler's share): each epoch's order is
  /// padded by repeating its start to a multiple of `world`, rank r takes its positions
  /// r, r + world, r + 2·world, ... in batches of batch_size, so batch k of every rank together
  /// is batch k of one process with `world` times the batch size. Default: rank 0 of 1.
  void setShard(int rank, int world);
  int shardRank() const { return shard_rank_; }
  int shardCount() const { return shard_count_; }

  /// Batches of each epoch (for this shard).
  std::int64_t batchesPerEpoch() const;
  std::int64_t datasetSize() const { return static_cast<std::int64_t>(dataset_.size()); }
  const ImageDataset& dataset() const { return dataset_; }
  const SamplePipeline& pipeline() const { return pipeline_; }
  /// Images of the data set that are not in the cache (0 without a cache).
  std::int64_t uncachedCount() const { return uncached_; }
  /// Bytes read so far by load(): each image file's size, or each cached image's pixels.
  std::int64_t bytesRead() const { return bytes_read_.load(std::memory_order_relaxed); }

  /// The dataset indices of `epoch`, in the order they are served.
  std::vector<std::int64_t> epochOrder(std::int64_t epoch) const;
  /// The dataset indices of this shard's batch `batch_index` of `epoch`, in order.
  std::vector<std::int64_t> batchIndices(std::int64_t epoch, std::int64_t batch_index) const;
  /// Batch `batch_index` of `epoch` (the last batch of an epoch may be smaller). Stops early
  /// (returning a partial batch) when `cancel` becomes true.
  Batch load(std::int64_t epoch, std::int64_t batch_index,
             const std::atomic<bool>* cancel = nullptr) const;

  /// Why `cache` cannot serve `pipeline`, or "" when it can.
  static std::string cacheMismatch(const ImageCache& cache, const SamplePipeline& pipeline);

private:
  std::shared_ptr<const std::vector<std::int64_t>> orderOf(std::int64_t epoch) const;

  ImageDataset dataset_;
  SamplePipeline pipeline_;
  int batch_size_;
  std::uint64_t seed_;
  std::shared_ptr<const ImageCache> cache_;
  std::vector<std::int64_t> record_of_;  ///< cache record of each dataset index, or -1
  std::int64_t uncached_ = 0;
  bool pinned_ = false;
  mutable std::atomic<std::int64_t> bytes_read_{0};
  int shard_rank_ = 0;
  int shard_count_ = 1;
  // The shuffles of the epochs being served, computed once per epoch, not per batch.
  mutable std::mutex order_mutex_;
  mutable std::int64_t order_epoch_[2] = {-1, -1};
  mutable std::shared_ptr<const std::vector<std::int64_t>> orders_[2];
};

}  // namespace streetgan
