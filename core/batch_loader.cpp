#include "batch_loader.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <numeric>
#include <random>

namespace streetgan {

BatchLoader::BatchLoader(ImageFolderDataset dataset, SamplePipeline pipeline, int batch_size,
                         std::uint64_t seed)
    : dataset_(std::move(dataset)), pipeline_(pipeline), batch_size_(batch_size), seed_(seed) {}

std::int64_t BatchLoader::batchesPerEpoch() const {
  return (datasetSize() + batch_size_ - 1) / batch_size_;
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

Batch BatchLoader::load(std::int64_t epoch, std::int64_t batch_index) const {
  if (order_epoch_ != epoch) {
    order_ = epochOrder(epoch);
    order_epoch_ = epoch;
  }
  const auto& order = order_;
  const std::int64_t begin = batch_index * batch_size_;
  const std::int64_t end = std::min<std::int64_t>(begin + batch_size_, datasetSize());
  const std::int64_t count = std::max<std::int64_t>(0, end - begin);
  const std::int64_t sample = pipeline_.sampleSize();

  torch::Tensor buffer = torch::empty({count, sample}, torch::kFloat32);
  float* data = buffer.data_ptr<float>();
  std::vector<std::string> errors(static_cast<std::size_t>(count));
  at::parallel_for(0, count, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const auto index = static_cast<std::size_t>(order[static_cast<std::size_t>(begin + i)]);
      const Status status = pipeline_.load(
          dataset_.path(index),
          SamplePipeline::sampleSeed(seed_, static_cast<std::uint64_t>(epoch), index),
          data + i * sample);
      if (!status) errors[static_cast<std::size_t>(i)] = status.error();
    }
  });

  Batch batch;
  std::vector<std::int64_t> good;
  for (std::int64_t i = 0; i < count; ++i) {
    if (errors[static_cast<std::size_t>(i)].empty())
      good.push_back(i);
    else
      batch.skipped.push_back({dataset_.path(static_cast<std::size_t>(order[static_cast<std::size_t>(begin + i)])),
                               errors[static_cast<std::size_t>(i)]});
  }
  if (static_cast<std::int64_t>(good.size()) != count)
    buffer = buffer.index_select(0, torch::tensor(good, torch::kInt64));
  batch.images = buffer.view(
      {buffer.size(0), pipeline_.channels(), pipeline_.imageSize(), pipeline_.imageSize()});
  return batch;
}

}  // namespace streetgan
