#include "core/latent/walk_exporter.h"

#include "core/util/available_memory.h"
#include "core/video/video_encoder.h"

#include <cstdio>
#include <memory>

namespace streetgan {

namespace {

// The export's memory against what this process can still take: refused before encoding when it
// cannot fit (walk --size 8192 to MP4 took 9.1 GB for 31 frames), with what it needs.
Status fitsInMemory(const VideoExportOptions& video, int width, int height, std::int64_t frames) {
  const auto [out_width, out_height] = outputSizeFor(width, height, video);
  const std::int64_t needed = estimatedExportBytes(video.format, out_width, out_height, frames);
  const std::int64_t available = availableMemoryBytes();
  if (available < 0 || needed <= available) return {};
  const auto gib = [](std::int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1LL << 30));
    return std::string(text);
  };
  return makeError("exporting " + std::to_string(frames) + " frames of " + std::to_string(out_width) + "x" +
                   std::to_string(out_height) + " as " + exportFormatName(video.format) + " needs about " +
                   gib(needed) + " of memory, and " + gib(available) +
                   " is available here; make its long side smaller" +
                   (video.format == ExportFormat::PngSequence ? "" : ", or export PNG frames"));
}

}  // namespace

Result<WalkExportSummary> WalkExporter::exportWalk(Generator& generator, const GridWalk& walk,
                                                   const WalkRenderOptions& render, const std::string& path,
                                                   const VideoExportOptions& video,
                                                   const WalkExportProgressCallback& progress) {
  // Refuse bad options before spending time on the generator.
  if (Status valid = validateExportOptions(video); !valid) return makeError(path + ": " + valid.error());
  auto cancelled = [&path]() { return makeError(path + ": export cancelled"); };

  std::unique_ptr<VideoEncoder> encoder;
  const FrameSink sink = [&](std::int64_t, const torch::Tensor& frame) -> Status {
    // (C, H, W) uint8 → H×W RGB24 rows; a one-channel model is shown as grey.
    torch::Tensor rgb = frame.size(0) == 1 ? frame.expand({3, frame.size(1), frame.size(2)}) : frame;
    rgb = rgb.permute({1, 2, 0}).contiguous();
    const int height = static_cast<int>(rgb.size(0));
    const int width = static_cast<int>(rgb.size(1));
    if (!encoder) {
      // A GIF keeps every frame until its palette is made: a walk that cannot fit is refused at
      // its first frame, not after rendering gigabytes of them.
      const std::int64_t frames = walk.frameCount();
      if (video.format == ExportFormat::Gif && video.gif_max_kept_bytes > 0 &&
          frames > video.gif_max_kept_bytes / (static_cast<std::int64_t>(width) * height * 3))
        return makeError("a GIF keeps every frame until its palette is made, and " + std::to_string(frames) +
                         " frames of " + std::to_string(width) + "x" + std::to_string(height) +
                         " pixels would take more than " + std::to_string(video.gif_max_kept_bytes >> 20) +
                         " MiB; make fewer frames, or export MP4 or WebM");
      if (Status fits = fitsInMemory(video, width, height, frames); !fits) return fits;
      auto opened = VideoEncoder::open(path, width, height, video);
      if (!opened) return makeError(opened.error());
      encoder = std::move(*opened);
    }
    return encoder->addFrame(rgb.data_ptr<std::uint8_t>(), width * 3);
  };
  WalkRenderOptions options = render;
  options.progress = [&](std::int64_t done, std::int64_t total) {
    return !progress || progress({done, encoder ? encoder->framesEncoded() : 0, total});
  };
  if (Status rendered = WalkRenderer::render(generator, walk, options, sink); !rendered) {
    if (rendered.error() == "rendering cancelled") return cancelled();
    const std::string message = rendered.error();
    return makeError(message.rfind(path + ": ", 0) == 0 ? message : path + ": " + message);
  }
  if (!encoder) return makeError(path + ": the walk has no frames");
  const std::int64_t total = encoder->framesAdded();
  Status finished = encoder->finish([&](std::int64_t encoded, std::int64_t) {
    return !progress || progress({total, encoded, total});
  });
  if (!finished) return makeError(finished.error());
  return WalkExportSummary{path, encoder->outputWidth(), encoder->outputHeight(), encoder->framesAdded(),
                           encoder->encoderName()};
}

Result<WalkExportSummary> WalkExporter::exportWalk(Generator& generator, const LatentWalk& walk,
                                                   const WalkRenderOptions& render, const std::string& path,
                                                   const VideoExportOptions& video,
                                                   const WalkExportProgressCallback& progress) {
  GridWalk grid;
  grid.tiles.push_back(walk);
  WalkRenderOptions single = render;
  single.padding = 0;
  return exportWalk(generator, grid, single, path, video, progress);
}

}  // namespace streetgan
