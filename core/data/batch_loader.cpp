#include "core/data/batch_loader.h"

#include <torch/torch.h>

#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>

namespace streetgan {

BatchLoader::BatchLoader(ImageDataset dataset, SamplePipeline pipeline, int batch_size,
                         std::uint64_t seed, std::shared_ptr<const ImageCache> cache)
    : dataset_(std::move(dataset)),
      pipeline_(pipeline),
      batch_size_(batch_size),
      seed_(seed),
      cache_(std::move(cache)) {
  if (!cache_) return;
  record_of_.resize(dataset_.size(), -1);
  for (std::size_t i = 0; i < dataset_.size(); ++i) {
    const auto relative =
        std::filesystem::path(dataset_.path(i)).lexically_relative(dataset_.root()).generic_string();
    record_of_[i] = cache_->find(relative);
    if (record_of_[i] < 0) ++uncached_;
  }
}

std::string BatchLoader::cacheMismatch(const ImageCache& cache, const SamplePipeline& pipeline) {
  if (cache.channels() == pipeline.channels() && cache.reduction() == pipeline.reduction()) return {};
  auto describe = [](int channels, int reduction) {
    return std::to_string(channels) + " channel(s) at 1/" + std::to_string(reduction) + " size";
  };
  return cache.path() + ": the cache holds images decoded with " +
         describe(cache.channels(), cache.reduction()) + "; this config needs " +
         describe(pipeline.channels(), pipeline.reduction()) +
         " (nc, img_size, augment.crop_scale, augment.scale_jitter); rebuild it with streetgan "
         "cache build and the same config";
}

void BatchLoader::setShard(int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world) throw std::invalid_argument("BatchLoader::setShard: rank outside [0, world)");
  shard_rank_ = rank;
  shard_count_ = world;
}

std::int64_t BatchLoader::batchesPerEpoch() const {
  const std::int64_t per_shard = (datasetSize() + shard_count_ - 1) / shard_count_;
  return (per_shard + batch_size_ - 1) / batch_size_;
}

std::vector<std::int64_t> BatchLoader::batchIndices(std::int64_t epoch, std::int64_t batch_index) const {
  const auto order = orderOf(epoch);
  const std::int64_t n = datasetSize();
  const std::int64_t per_shard = (n + shard_count_ - 1) / shard_count_;
  const std::int64_t begin = batch_index * batch_size_;
  const std::int64_t end = std::min<std::int64_t>(begin + batch_size_, per_shard);
  std::vector<std::int64_t> indices;
  for (std::int64_t i = begin; i < end && n > 0; ++i)
    indices.push_back((*order)[static_cast<std::size_t>((shard_rank_ + shard_count_ * i) % n)]);
  return indices;
}

std::vector<std::int64_t> BatchLoader::epochOrder(std::int64_t epoch) const {
  std::vector<std::int64_t> order(dataset_.size());
  std::iota(order.begin(), order.end(), 0);
  // Fisher-Yates with our own index mapping: std::shuffle's output is implementation-defined.
  std::mt19937_64 rng(SamplePipeline::sampleSeed(seed_, static_cast<std::uint64_t>(epoch), ~0ULL));
  for (std::size_t i = order.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng() % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

std::shared_ptr<const std::vector<std::int64_t>> BatchLoader::orderOf(std::int64_t epoch) const {
  std::lock_guard<std::mutex> lock(order_mutex_);
  // Two slots: workers straddle at most one epoch boundary at a time.
  const int slot = static_cast<int>(epoch & 1);
  if (order_epoch_[slot] != epoch) {
    orders_[slot] = std::make_shared<const std::vector<std::int64_t>>(epochOrder(epoch));
    order_epoch_[slot] = epoch;
  }
  return orders_[slot];
}

Batch BatchLoader::load(std::int64_t epoch, std::int64_t batch_index,
                        const std::atomic<bool>* cancel) const {
  const std::vector<std::int64_t> indices = batchIndices(epoch, batch_index);
  const auto count = static_cast<std::int64_t>(indices.size());
  const std::int64_t sample = pipeline_.sampleSize();

  Batch batch;
  torch::Tensor buffer =
      torch::empty({count, sample}, torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(pinned_));
  std::uint8_t* data = buffer.data_ptr<std::uint8_t>();
  std::int64_t filled = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (cancel && cancel->load(std::memory_order_relaxed)) break;
    const auto index = static_cast<std::size_t>(indices[static_cast<std::size_t>(i)]);
    const std::uint64_t seed = SamplePipeline::sampleSeed(seed_, static_cast<std::uint64_t>(epoch), index);
    std::uint8_t* out = data + filled * sample;
    Status status;
    if (cache_ && record_of_[index] >= 0) {
      auto view = cache_->image(static_cast<std::size_t>(record_of_[index]));
      if (view) {
        pipeline_.augmentPixels(*view, seed, out);
        bytes_read_.fetch_add(static_cast<std::int64_t>(view->stride) * view->height, std::memory_order_relaxed);
      } else {
        status = makeError(view.error());
      }
    } else {
      status = pipeline_.loadPixels(dataset_.path(index), seed, out);
      std::error_code ignored;  // the file was read whole: its size is what came off the disk
      if (status) {
        const auto size = std::filesystem::file_size(dataset_.path(index), ignored);
        if (!ignored) bytes_read_.fetch_add(static_cast<std::int64_t>(size), std::memory_order_relaxed);
      }
    }
    if (status)
      ++filled;
    else
      batch.skipped.push_back({dataset_.path(index), status.error()});
  }
  if (filled != count) buffer = buffer.narrow(0, 0, filled);
  batch.images = buffer.view({filled, pipeline_.channels(), pipeline_.imageSize(), pipeline_.imageSize()});
  return batch;
}

}  // namespace streetgan
