#include "core/train/discriminator_augment.h"

#include "core/train/compute_device.h"

#include <torch/torch.h>

#include <algorithm>
#include <mutex>

namespace streetgan {

DiscriminatorAugment::DiscriminatorAugment(const TrainConfig& config, const c10::Device& device)
    : policies_(diffAugmentPoliciesOf(config.augment.diff)),
      batch_size_(config.batch_size),
      device_(device),
      // Apart from the weights' (seed), the training noise's (2·seed + 1) and the data's streams.
      generator_(makeDeviceGenerator(device, static_cast<std::uint64_t>(config.seed) * 2 + 3)) {}

void DiscriminatorAugment::setShard(std::int64_t rank, std::int64_t world) {
  rank_ = rank;
  world_ = world;
}

torch::Tensor DiscriminatorAugment::operator()(const torch::Tensor& x) {
  if (policies_.empty()) return x;
  // Every rank draws the job's rows (W × the batch size; a short last batch uses the first ones)
  // and keeps its own: the rows one process with the whole batch would give these images.
  const std::int64_t n = x.size(0);
  const std::int64_t rows = world_ * std::max(batch_size_, n);
  const DiffAugmentDraws job = drawDiffAugment(policies_, rows, x.size(2), x.size(3), generator_, device_);
  return applyDiffAugment(x, policies_, job.rowsOf(rank_, world_, n));
}

torch::Tensor DiscriminatorAugment::rngState() const {
  std::lock_guard<std::mutex> lock(generator_.mutex());
  return generator_.get_state();
}

std::string DiscriminatorAugment::rngKind() const { return generatorKind(device_); }

bool DiscriminatorAugment::restoreRng(const torch::Tensor& state, const std::string& kind) {
  if (kind != rngKind()) return false;
  std::lock_guard<std::mutex> lock(generator_.mutex());
  generator_.set_state(state);
  return true;
}

}  // namespace streetgan
