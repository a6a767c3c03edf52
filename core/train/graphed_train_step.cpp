#include "core/train/graphed_train_step.h"

#include "core/train/cuda_graph.h"
#include "core/util/torch_compat.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <stdexcept>

namespace streetgan {
namespace {

void clearGraphedGradients(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
}

}  // namespace

std::string cudaGraphsUnavailable(const c10::Device& device, std::int64_t world_size, const std::string& device_said) {
  if (world_size > 1)
    return "trains one process, and this job has " + std::to_string(world_size) +
           " ranks (a graph does not hold the ranks' all-reduce)";
  if (!device.is_cuda())
    return "needs a CUDA device, and this run trains on " + (device_said.empty() ? device.str() : device_said);
  if (!torch_compat::hasFusedAdamW(device))
    return "needs LibTorch's fused AdamW on CUDA (LibTorch 2.0 or newer); this is " + std::string(TORCH_VERSION);
  if (const std::string why = CudaGraph::unavailableReason(device); !why.empty()) return "cannot be used: " + why;
  return {};
}

std::string cudaGraphsRefusal(const c10::Device& device, std::int64_t world_size, const std::string& device_said) {
  const std::string why = cudaGraphsUnavailable(device, world_size, device_said);
  return why.empty() ? why : "config key \"cuda_graphs\": true " + why + "; set it to false";
}

GraphedTrainStep::GraphedTrainStep(DcganStep& step, std::function<void(const std::string&)> warn,
                                   GraphedTrainStepOptions options)
    : step_(step), warn_(std::move(warn)), options_(options) {
  if (const std::string why = cudaGraphsRefusal(step.device(), 1); !why.empty())
    throw std::logic_error("GraphedTrainStep: " + why);
  graph_ = std::make_unique<CudaGraph>(step.device());
}

GraphedTrainStep::~GraphedTrainStep() = default;

bool GraphedTrainStep::captured() const { return graph_ && graph_->captured(); }

torch::Tensor GraphedTrainStep::trainStep(const torch::Tensor& real, const torch::Tensor& noise) {
  if (real_shape_.empty() && (options_.batch_size <= 0 || real.size(0) == options_.batch_size)) {
    real_shape_ = real.sizes().vec();
    noise_shape_ = noise.sizes().vec();
  }
  const bool graph_shape = real.sizes().vec() == real_shape_ && noise.sizes().vec() == noise_shape_;
  if (refused_ || !graph_shape) {
    ++eager_steps_;
    return step_.trainStep(real, noise);
  }
  if (graph_->captured()) {
    static_real_.copy_(real);
    static_noise_.copy_(noise);
    graph_->replay();
    ++replays_;
    return static_stats_.clone();  // the next replay overwrites the graph's own
  }
  if (warmed_ < options_.warmup_steps) {
    ++warmed_;
    ++eager_steps_;
    torch::Tensor stats;
    graph_->warmUp([&] { stats = step_.trainStep(real, noise); });
    return stats;
  }
  return record(real, noise);
}

// Records the step on this batch, then replays it once: recording runs nothing.
torch::Tensor GraphedTrainStep::record(const torch::Tensor& real, const torch::Tensor& noise) {
  static_real_ = real.clone();
  static_noise_ = noise.clone();
  // The recorded backward makes the gradients in the graph's pool: none may be left from the
  // eager steps (PyTorch's whole-network capture clears them the same way).
  for (torch::nn::Module* net : step_.nets()) clearGraphedGradients(*net);
  Status recorded = graph_->capture([&] { static_stats_ = step_.trainStep(static_real_, static_noise_); });
  if (!recorded) {
    refused_ = true;
    static_real_ = static_noise_ = static_stats_ = torch::Tensor();
    if (warn_) warn_(recorded.error() + "; training goes on without CUDA graphs");
    ++eager_steps_;
    return step_.trainStep(real, noise);
  }
  graph_->replay();
  ++replays_;
  return static_stats_.clone();
}

}  // namespace streetgan
