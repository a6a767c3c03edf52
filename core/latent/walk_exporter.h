#pragma once
// WalkExporter: renders a walk (or a grid of walks) with a generator and encodes it in one pass
// (WalkRenderer → VideoEncoder), so frames stream to the encoder in batches and never all sit in
// memory at the output size. `progress` reports frames rendered and encoded (a GIF is encoded
// after the last frame is rendered: its palette needs them all) and cancels by returning false;
// a cancelled or failed export leaves nothing at the output path (VideoEncoder's temporary-name
// rule) and comes back as an Error. The render options' own `progress` is not used.
#include "core/latent/latent_walk.h"
#include "core/latent/walk_renderer.h"
#include "core/util/result.h"
#include "core/video/video_export_options.h"

#include <cstdint>
#include <functional>
#include <string>

namespace streetgan {

struct WalkExportSummary {
  std::string path;
  int width = 0, height = 0;  ///< exported frame size
  std::int64_t frames = 0;
  std::string encoder;        ///< the FFmpeg encoder used
};

struct WalkExportProgress {
  std::int64_t rendered = 0;
  std::int64_t encoded = 0;
  std::int64_t total = 0;     ///< frames of the walk
};
using WalkExportProgressCallback = std::function<bool(const WalkExportProgress&)>;

class WalkExporter {
public:
  static Result<WalkExportSummary> exportWalk(Generator& generator, const GridWalk& walk,
                                              const WalkRenderOptions& render, const std::string& path,
                                              const VideoExportOptions& video,
                                              const WalkExportProgressCallback& progress = {});
  static Result<WalkExportSummary> exportWalk(Generator& generator, const LatentWalk& walk,
                                              const WalkRenderOptions& render, const std::string& path,
                                              const VideoExportOptions& video,
                                              const WalkExportProgressCallback& progress = {});
};

}  // namespace streetgan
