#pragma once
// GifPaletteFilter (internal to the encoder): turns RGB24 frames into upscaled PAL8 frames that
// share one adaptive palette, with libavfilter:
//   palette:  buffer → palettegen (over every frame, at the generator's size) → buffersink
//   frames:   buffer → scale → paletteuse ← buffer (the palette) → buffersink, one graph per thread
// The palette is built from the frames before upscaling: upscaling only adds in-between colours,
// and palettegen's colour histogram slows to a crawl on the millions of distinct colours of a
// 512-pixel Lanczos upscale (30 s instead of 1 s for 61 frames). palettegen must see every frame
// before the first can be mapped, so the frames are kept, small, until finish(); mapping (the
// slow part: paletteuse is single-threaded) then runs on several threads, in order-preserving
// chunks, so only a few upscaled frames are ever in memory. Errors come back as FFmpeg's message.
#include "core/util/result.h"
#include "core/video/internal/libav_handles.h"
#include "core/video/video_export_options.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace streetgan {

class GifPaletteFilter {
public:
  /// Frames come in at width×height and go out at out_width×out_height; `threads` ≥ 1 map them.
  /// At most `max_kept_bytes` of frames are kept: add() refuses the frame past it.
  static Result<std::unique_ptr<GifPaletteFilter>> create(int width, int height, int out_width, int out_height,
                                                          ScaleFilter scale, bool dither, int threads,
                                                          std::int64_t max_kept_bytes);
  ~GifPaletteFilter();

  /// Adds a frame of height rows of width RGB24 pixels, `stride` bytes apart, shown at `pts`
  /// (hundredths of a second).
  Status add(const std::uint8_t* rgb, int stride, std::int64_t pts);
  std::int64_t frameCount() const { return static_cast<std::int64_t>(frames_.size()); }

  /// Builds the palette, maps every frame and hands the PAL8 frames to `consume` in order (each is
  /// unreferenced afterwards). `progress(mapped, total)` after each chunk; false cancels.
  Status finish(const std::function<Status(AVFrame*)>& consume,
                const std::function<bool(std::int64_t, std::int64_t)>& progress);

private:
  struct MappingGraph;
  GifPaletteFilter() = default;
  Result<libav::FramePtr> buildPalette();

  int width_ = 0, height_ = 0, out_width_ = 0, out_height_ = 0;
  ScaleFilter scale_ = ScaleFilter::Lanczos;
  bool dither_ = true;
  int threads_ = 1;
  std::int64_t max_kept_bytes_ = 0;
  libav::FilterGraphPtr palette_graph_;
  AVFilterContext* palette_source_ = nullptr;  // owned by palette_graph_
  AVFilterContext* palette_sink_ = nullptr;    // owned by palette_graph_
  std::vector<libav::FramePtr> frames_;        // at the generator's size
};

}  // namespace streetgan
