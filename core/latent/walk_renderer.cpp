#include "core/latent/walk_renderer.h"

#include "core/data/image_grid.h"

#include <torch/torch.h>

namespace streetgan {

Status WalkRenderer::render(Generator& generator, const LatentWalk& walk, const WalkRenderOptions& options,
                            const FrameSink& sink) {
  GridWalk grid;
  grid.tiles = {walk};
  WalkRenderOptions single = options;
  single.padding = 0;
  return render(generator, grid, single, sink);
}

Status WalkRenderer::render(Generator& generator, const GridWalk& walk, const WalkRenderOptions& options,
                            const FrameSink& sink) {
  if (Status valid = walk.validate(); !valid) return valid;
  if (options.batch < 1) return makeError("the render batch must be at least 1 frame");
  const std::int64_t total = walk.frameCount();
  const auto tiles = static_cast<std::int64_t>(walk.tiles.size());
  // Whole frames per generator call: at least one, about `batch` tiles.
  const std::int64_t frames_per_call = std::max<std::int64_t>(1, options.batch / tiles);
  try {
    torch::NoGradGuard no_grad;
    if (options.batch_statistics) generator->train(); else generator->eval();
    for (std::int64_t begin = 0; begin < total; begin += frames_per_call) {
      const std::int64_t count = std::min(frames_per_call, total - begin);
      std::vector<torch::Tensor> latents;
      for (std::int64_t i = begin; i < begin + count; ++i) latents.push_back(walk.frame(i));
      const torch::Tensor images = generator->forward(torch::cat(latents).to(options.device)).to(torch::kCPU);
      for (std::int64_t i = 0; i < count; ++i) {
        const torch::Tensor frame_tiles = images.narrow(0, i * tiles, tiles);
        const torch::Tensor frame =
            tiles == 1 ? makeImageGrid(frame_tiles, 1, 0) : makeImageGrid(frame_tiles, walk.columns, options.padding);
        if (Status taken = sink(begin + i, frame); !taken) return taken;
      }
      if (options.progress && !options.progress(begin + count, total)) return makeError("rendering cancelled");
    }
  } catch (const c10::Error& e) {
    return makeError(std::string("rendering the walk failed: ") + e.what_without_backtrace());
  }
  return {};
}

}  // namespace streetgan
