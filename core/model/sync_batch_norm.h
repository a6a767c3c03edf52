#pragma once
// Synchronised batch normalisation (SyncBN) for a BatchNorm2d layer of G or D when a batch is
// split over several processes: the mean and variance are those of the whole batch (every
// rank's images), not of this process's share, so N ranks with batch B/N train like one process
// with batch B. The sums that make them up are added over the processes by `sum` (the caller's
// collective); backward adds the gradients of those sums the same way, so every process must
// run the same forward and backward passes in the same order. The layer's running statistics are
// updated from the whole batch, as BatchNorm2d would from one process. Throws what `sum` throws.
#include <torch/nn/modules/batchnorm.h>

#include <functional>

namespace streetgan {

/// Adds `tensor` (a small float tensor on the layer's device) over the processes, in place.
using BatchStatsSum = std::function<void(torch::Tensor& tensor)>;

/// `layer` in training mode applied to `x` (N, C, H, W) with the statistics of every process's batch.
torch::Tensor syncBatchNorm(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& layer, const BatchStatsSum& sum);

}  // namespace streetgan
