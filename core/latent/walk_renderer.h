#pragma once
// WalkRenderer: runs a generator over the frames of a walk (or a grid of walks) in batches and
// hands each finished frame, as 8-bit CHW pixels, to a sink (an encoder, a PNG writer, a preview
// cache). G runs in eval mode by default, so every frame depends on its latent alone and the
// frames are the same whatever the batch size; `batch_statistics` samples with BatchNorm's batch
// statistics as the original tool did (frames then depend on which frames share a batch). The
// sink's Error or a cancel from `progress` stops the render and comes back as an Error.
#include "core/latent/latent_walk.h"
#include "core/model/generator.h"
#include "core/util/result.h"

#include <c10/core/Device.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>

namespace streetgan {

struct WalkRenderOptions {
  std::int64_t batch = 64;          ///< frames (of one tile each) per generator call
  bool batch_statistics = false;    ///< BatchNorm in train mode (the original tool's look)
  c10::Device device = c10::kCPU;
  int padding = 2;                  ///< pixels between the tiles of a grid walk
  /// Called after each batch with (frames done, total); returning false cancels.
  std::function<bool(std::int64_t, std::int64_t)> progress;
};

/// Receives frame `index` as (3 or 1, H, W) uint8 on the CPU.
using FrameSink = std::function<Status(std::int64_t index, const torch::Tensor& frame)>;

class WalkRenderer {
public:
  static Status render(Generator& generator, const GridWalk& walk, const WalkRenderOptions& options,
                       const FrameSink& sink);
  /// A single walk is a 1×1 grid (no padding).
  static Status render(Generator& generator, const LatentWalk& walk, const WalkRenderOptions& options,
                       const FrameSink& sink);
};

}  // namespace streetgan
