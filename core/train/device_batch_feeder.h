#pragma once
// DeviceBatchFeeder: the last stage between the data loader and the training step. It takes the
// loader's uint8 batches (pinned host memory when the device is an accelerator), copies them to
// the device with non_blocking copies on a copy stream of their own where the device has streams
// (CUDA), so the next batch's copy overlaps the step that is running, and turns them into the
// step's input on the device: float, the augmentation's Gaussian noise (augment.noise_std, in
// [0, 1] units) added, scaled to [-1, 1]. One batch is staged while the step trains on the one
// taken before it (double buffering). The noise of a batch comes from a generator on the device
// seeded by (seed, epoch, batch index), so it depends on nothing else.
//
// Owns its generator and copy stream; not thread-safe (the training thread alone uses it).
#include "core/data/batch_prefetcher.h"

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace streetgan {

struct DeviceBatch {
  std::int64_t epoch = 0;
  std::int64_t batch_index = 0;
  std::vector<SkippedFile> skipped;  ///< files of the batch that could not be used
  torch::Tensor images;              ///< (n, nc, S, S) float on the device, in [-1, 1] plus noise
};

class DeviceBatchFeeder {
public:
  DeviceBatchFeeder(const c10::Device& device, double noise_std, std::uint64_t seed);

  /// Starts moving `batch` to the device (asynchronously where the device allows it).
  void stage(PrefetchedBatch batch);
  bool hasStaged() const { return staged_.has_value(); }
  /// The staged batch as the step's input, ordered after its copy on the device's current
  /// stream (the host does not wait). Only when hasStaged().
  DeviceBatch take();

  /// The noise seed of batch `batch_index` of `epoch`.
  static std::uint64_t noiseSeed(std::uint64_t seed, std::int64_t epoch, std::int64_t batch_index);

  /// As rank `rank` of `world` (BatchLoader::setShard): the pixel noise of a batch of n images is
  /// rows rank, rank + world, ... of the noise one process draws for the whole job's batch of
  /// world·n, so the ranks together add exactly what one process would.
  void setShard(int rank, int world) {
    shard_rank_ = rank;
    shard_count_ = world;
  }

private:
  c10::Device device_;
  double noise_std_;
  int shard_rank_ = 0;
  int shard_count_ = 1;
  std::uint64_t seed_;
  at::Generator generator_;
  std::optional<c10::Stream> copy_stream_;
  std::optional<c10::Event> copied_;
  std::optional<PrefetchedBatch> staged_;
  torch::Tensor staged_on_device_;
};

}  // namespace streetgan
