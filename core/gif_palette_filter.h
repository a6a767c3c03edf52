#pragma once
// GifPaletteFilter (internal to the encoder): a libavfilter graph that turns RGB24 frames into
// upscaled PAL8 frames with an adaptive palette:
//   split[a][b]; [a]palettegen[p]; [b]scale[s]; [s][p]paletteuse
// The palette is built from the frames at the generator's size, before upscaling: upscaling adds
// only in-between colours, and palettegen's colour histogram slows to a crawl on the millions of
// distinct colours of a 512-pixel upscale (30 s instead of 1 s for 61 frames). With a global
// palette the graph holds every frame until the end of the stream (palettegen must see them all);
// with per-frame palettes each frame comes out as soon as it goes in. Errors come back as
// FFmpeg's message.
#include "libav_handles.h"
#include "result.h"
#include "video_export_options.h"

#include <functional>
#include <memory>

namespace streetgan {

class GifPaletteFilter {
public:
  /// Frames come in at width×height and go out at out_width×out_height.
  static Result<std::unique_ptr<GifPaletteFilter>> create(int width, int height, int out_width, int out_height,
                                                          ScaleFilter scale, GifPalette palette, bool dither);

  /// Adds an RGB24 frame with pts in 1/100 s; nullptr ends the stream.
  Status push(AVFrame* frame);
  /// Hands every PAL8 frame that is ready to `consume` (the frame is unreferenced afterwards).
  Status pull(const std::function<Status(AVFrame*)>& consume);

private:
  GifPaletteFilter() = default;
  libav::FilterGraphPtr graph_;
  AVFilterContext* source_ = nullptr;  // owned by graph_
  AVFilterContext* sink_ = nullptr;    // owned by graph_
  libav::FramePtr output_;
};

}  // namespace streetgan
