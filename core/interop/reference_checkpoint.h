#pragma once
// ReferenceCheckpoint: a checkpoint of the original PyTorch tool, read without Python. Full
// checkpoints hold `epoch`, `G_state_dict`, `D_state_dict`, `G_optim`, `D_optim`, `losses`
// {"_G": [...], "_D": [...]}, `img_list` and `noise`; slim ones `epoch` and `G_state_dict` only.
// State dicts may carry DistributedDataParallel's `module.` prefix. The architecture (nz, ngf,
// ndf, nc, 64 or 128 px) is inferred from the tensor shapes, and every tensor is checked against
// the nets that architecture builds, so a file that fits no DCGAN is refused here.
//
// Everything is read onto the CPU. Failures come back as one line naming the file and what is
// wrong (a missing key, a tensor of another shape, a pickle PickleReader refuses).
#include "core/model/discriminator.h"
#include "core/model/generator.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace streetgan {

/// The most image grids img_list may hold (the original tool keeps one every 500 iterations).
inline constexpr std::int64_t kMaxImportedGrids = 10'000;

/// A state dict: names without `module.`, in the file's order.
using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

/// One AdamW optimizer's state dict, in the order of its net's parameters().
struct ReferenceOptimizer {
  double lr = 2e-4;
  double beta1 = 0.5;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  struct Moments {
    std::int64_t step = 0;
    torch::Tensor exp_avg;
    torch::Tensor exp_avg_sq;
  };
  std::vector<Moments> params;  ///< one per parameter; empty before the first step
};

struct ReferenceCheckpoint {
  std::int64_t epoch = 0;               ///< the file's `epoch` (the last epoch completed, counted from 0)
  GeneratorOptions generator;           ///< inferred from G_state_dict
  NamedTensors generator_state;
  std::optional<DiscriminatorOptions> discriminator;  ///< with D_state_dict
  NamedTensors discriminator_state;
  std::optional<ReferenceOptimizer> optimizer_g;  ///< with G_optim
  std::optional<ReferenceOptimizer> optimizer_d;  ///< with D_optim
  std::vector<double> losses_g;         ///< losses["_G"], one per logged iteration
  std::vector<double> losses_d;         ///< losses["_D"]
  std::vector<torch::Tensor> img_list;  ///< sample grids, (3, H, W) float in [0, 1]
  torch::Tensor noise;                  ///< the fixed noise (n, nz, 1, 1), or undefined
  bool ddp_prefixed = false;            ///< the state dicts had `module.` prefixes
};

/// Reads and checks the original tool's checkpoint at `path`.
Result<ReferenceCheckpoint> readReferenceCheckpoint(const std::string& path);

/// Copies `state` into `module`'s parameters and buffers of the same names (shapes were checked
/// by readReferenceCheckpoint against a module of the inferred options).
void copyStateInto(torch::nn::Module& module, const NamedTensors& state);

/// Puts `saved`'s moments into `optimizer` for `params` (the net's parameters(), in order).
void restoreOptimizerState(torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& params,
                           const ReferenceOptimizer& saved);

}  // namespace streetgan
