#pragma once
// GraphedTrainStep: DcganStep::trainStep recorded once as a CUDA graph and replayed (the
// `cuda_graphs` config key, docs/model.md). A run's step launches several hundred small kernels,
// and at 64 px the GPU finishes them faster than the host can launch them; a replay launches all
// of them at once.
//
// Steps of the run's full batch warm up eagerly on the graph's side stream (warmup_steps:
// cuDNN's autotuner and the optimizers' lazily made state see the shapes there), the next one is
// recorded and replayed, and every later step of that shape copies its batch and noise into the
// graph's input tensors and replays it. A batch of another shape (a short last batch, or one with
// unreadable images left out) trains eagerly on the caller's stream, the same arithmetic. Each
// step's statistics come back as a fresh tensor on the device, as DcganStep::trainStep's do.
//
// The DcganStep must outlive this object, train alone (no rank group) and load no checkpoint while
// it lives: the graph holds the addresses of its parameters, optimizer state, scaler and labels.
// A recording CUDA refuses is reported once through `warn`, and training goes on eagerly.
#include "core/train/dcgan_step.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace streetgan {

class CudaGraph;

/// Why a run on `device` with `world_size` ranks cannot use CUDA graphs ("needs a CUDA device, and
/// this run trains on cpu"); empty when it can. `device_said` is how the device is named in it
/// (the run's device line, which says why auto chose it); empty: the device's own name.
std::string cudaGraphsUnavailable(const c10::Device& device, std::int64_t world_size, const std::string& device_said = {});
/// cudaGraphsUnavailable() as a config error naming the key: `config key "cuda_graphs": true
/// needs ...; set it to false`; empty when graphs can be used.
std::string cudaGraphsRefusal(const c10::Device& device, std::int64_t world_size, const std::string& device_said = {});

struct GraphedTrainStepOptions {
  int warmup_steps = 3;         ///< eager steps of the graph's shape before it is recorded (PyTorch's advice: a few)
  std::int64_t batch_size = 0;  ///< the graph's batch (the run's full one); 0: the first step's
};

class GraphedTrainStep {
public:
  /// Graphs `step`'s training step; cudaGraphsRefusal() must have accepted its device (else
  /// std::logic_error). `warn` receives the one message of a refused recording.
  GraphedTrainStep(DcganStep& step, std::function<void(const std::string&)> warn, GraphedTrainStepOptions options = {});
  ~GraphedTrainStep();
  GraphedTrainStep(const GraphedTrainStep&) = delete;
  GraphedTrainStep& operator=(const GraphedTrainStep&) = delete;

  /// As DcganStep::trainStep: one step on `real` with latent `noise`, both on the device; returns
  /// StepStats::kValues float64 values on the device, without waiting for the host.
  torch::Tensor trainStep(const torch::Tensor& real, const torch::Tensor& noise);

  bool captured() const;
  std::int64_t replays() const { return replays_; }
  std::int64_t eagerSteps() const { return eager_steps_; }

private:
  torch::Tensor record(const torch::Tensor& real, const torch::Tensor& noise);

  DcganStep& step_;
  std::function<void(const std::string&)> warn_;
  GraphedTrainStepOptions options_;
  std::unique_ptr<CudaGraph> graph_;
  bool refused_ = false;  ///< CUDA refused the recording: every step is eager from then on
  std::vector<std::int64_t> real_shape_, noise_shape_;  ///< the graph's shapes (the first step's)
  int warmed_ = 0;
  torch::Tensor static_real_, static_noise_, static_stats_;
  std::int64_t replays_ = 0, eager_steps_ = 0;
};

}  // namespace streetgan
