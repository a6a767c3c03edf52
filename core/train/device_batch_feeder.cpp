#include "core/train/device_batch_feeder.h"

#include "core/data/sample_pipeline.h"

#include <ATen/Context.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/torch.h>

#include <mutex>

namespace streetgan {

DeviceBatchFeeder::DeviceBatchFeeder(const c10::Device& device, double noise_std, std::uint64_t seed)
    : device_(device),
      noise_std_(noise_std),
      seed_(seed),
      generator_(at::globalContext().defaultGenerator(device).clone()) {
  if (device.is_cuda()) {
    c10::impl::VirtualGuardImpl impl(device.type());
    copy_stream_ = impl.getStreamFromGlobalPool(device);
    copied_.emplace(device.type());
  }
}

std::uint64_t DeviceBatchFeeder::noiseSeed(std::uint64_t seed, std::int64_t epoch, std::int64_t batch_index) {
  // The same mixing as the per-sample augmentation seeds, in an index range samples never use.
  return SamplePipeline::sampleSeed(seed ^ 0x6e6f697365ULL, static_cast<std::uint64_t>(epoch),
                                    ~static_cast<std::uint64_t>(batch_index));
}

void DeviceBatchFeeder::stage(PrefetchedBatch batch) {
  const torch::Tensor& host = batch.batch.images;
  if (copy_stream_ && host.numel() > 0) {
    c10::StreamGuard on_copy_stream(*copy_stream_);
    staged_on_device_ = host.to(device_, /*non_blocking=*/true);
    copied_->record(*copy_stream_);
  } else {
    staged_on_device_ = host.to(device_);
  }
  staged_ = std::move(batch);
}

DeviceBatch DeviceBatchFeeder::take() {
  DeviceBatch out;
  out.epoch = staged_->epoch;
  out.batch_index = staged_->batch_index;
  out.skipped = std::move(staged_->batch.skipped);
  torch::Tensor pixels = std::move(staged_on_device_);
  staged_.reset();
  staged_on_device_ = torch::Tensor();
  if (pixels.numel() == 0) {
    out.images = pixels.to(torch::kFloat32);
    return out;
  }
  if (copy_stream_) {
    c10::impl::VirtualGuardImpl impl(device_.type());
    const c10::Stream compute = impl.getStream(device_);
    copied_->block(compute);
    // The tensor was allocated on the copy stream: tell the caching allocator it is used here.
    pixels.record_stream(compute);
  }
  torch::NoGradGuard no_grad;
  // (x/255 + noise − 0.5) / 0.5, as SamplePipeline::augment does on the host.
  torch::Tensor images = pixels.to(torch::kFloat32).mul_(1.0f / 255.0f);
  if (noise_std_ > 0) {
    {
      std::lock_guard<std::mutex> lock(generator_.mutex());
      generator_.set_current_seed(noiseSeed(seed_, out.epoch, out.batch_index));
    }
    if (shard_count_ == 1) {
      images.add_(torch::empty_like(images).normal_(0.0, noise_std_, generator_));
    } else {
      auto sizes = images.sizes().vec();
      sizes[0] *= shard_count_;
      torch::Tensor job = torch::empty(sizes, images.options()).normal_(0.0, noise_std_, generator_);
      images.add_(job.slice(0, shard_rank_, sizes[0], shard_count_));
    }
  }
  out.images = images.mul_(2.0f).sub_(1.0f);
  return out;
}

}  // namespace streetgan
