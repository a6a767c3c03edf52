#pragma once
// WalkExporter: renders a walk (or a grid of walks) with a generator and encodes it in one pass
// (WalkRenderer → VideoEncoder), so frames stream to the encoder in batches and never all sit in
// memory. Progress and cancellation come through the render options' `progress` callback; a
// cancelled or failed export leaves nothing at the output path (VideoEncoder's temporary-name
// rule) and comes back as an Error.
#include "latent_walk.h"
#include "result.h"
#include "video_export_options.h"
#include "walk_renderer.h"

#include <cstdint>
#include <string>

namespace streetgan {

struct WalkExportSummary {
  std::string path;
  int width = 0, height = 0;  ///< exported frame size
  std::int64_t frames = 0;
  std::string encoder;        ///< the FFmpeg encoder used
};

class WalkExporter {
public:
  static Result<WalkExportSummary> exportWalk(Generator& generator, const GridWalk& walk,
                                              const WalkRenderOptions& render, const std::string& path,
                                              const VideoExportOptions& video);
  static Result<WalkExportSummary> exportWalk(Generator& generator, const LatentWalk& walk,
                                              const WalkRenderOptions& render, const std::string& path,
                                              const VideoExportOptions& video);
};

}  // namespace streetgan
