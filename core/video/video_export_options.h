#pragma once
// What a video export writes: the container/codec (GIF, MP4 with H.264, WebM with VP9, or a
// folder of PNG frames), the frame rate, the output size and upscaling filter, and the quality.
// Parsing functions return an Error naming the bad value; outputSizeFor() applies the size rules
// (long side scaled to `long_side`, even dimensions for the 4:2:0 video formats).
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <utility>

namespace streetgan {

enum class ExportFormat { Gif, Mp4, WebM, PngSequence };
enum class ScaleFilter { Nearest, Lanczos };

struct VideoExportOptions {
  ExportFormat format = ExportFormat::Mp4;
  double fps = 30.0;                       ///< frames per second, any positive number (GIF: ≤ 50)
  int long_side = 512;                     ///< output long side in pixels; 0 keeps the frame size
  ScaleFilter scale_filter = ScaleFilter::Lanczos;
  int crf = -1;                            ///< quality, lower is better: H.264 0–51 (default 20),
                                           ///< VP9 0–63 (default 32); -1 = the format's default
  std::string preset = "medium";           ///< libx264 speed preset (ultrafast … veryslow)
  std::string encoder;                     ///< FFmpeg encoder name; empty = libx264/libvpx-vp9/gif/png
  bool gif_dither = true;                  ///< ordered (Bayer) dithering against the palette
  /// GIF: the most bytes of frames (at the frame size, RGB) kept until the palette is made, since
  /// it needs them all; a frame past it fails the export. 2 GiB: 10,000 frames of 256×256.
  long long gif_max_kept_bytes = 2LL << 30;
};

Result<ExportFormat> parseExportFormat(const std::string& name);  ///< gif, mp4, webm, png
std::string exportFormatName(ExportFormat format);
/// The format a file name asks for by its extension (.gif, .mp4, .webm; case-insensitive).
Result<ExportFormat> exportFormatForPath(const std::string& path);
Result<ScaleFilter> parseScaleFilter(const std::string& name);    ///< nearest, lanczos
std::string scaleFilterName(ScaleFilter filter);

/// Checks the options on their own (fps, size, crf ranges); the encoder checks the rest.
Status validateExportOptions(const VideoExportOptions& options);

/// The (width, height) a width×height frame is exported at.
std::pair<int, int> outputSizeFor(int width, int height, const VideoExportOptions& options);

/// About the most memory an export of `frames` frames of `width`×`height` (the output size) takes
/// at once, in bytes, on the high side: the program, each frame on its way (some 40 bytes a
/// pixel), and what the encoder holds back (H.264 and VP9 look up to about 60 frames ahead; a GIF
/// keeps every frame). Measured with `walk`: 4096×4096, 31 frames, MP4: 2.5 GB at its peak.
std::int64_t estimatedExportBytes(ExportFormat format, int width, int height, std::int64_t frames);

}  // namespace streetgan
