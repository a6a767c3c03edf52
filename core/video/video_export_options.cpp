#include "core/video/video_export_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace streetgan {

Result<ExportFormat> parseExportFormat(const std::string& name) {
  if (name == "gif") return ExportFormat::Gif;
  if (name == "mp4") return ExportFormat::Mp4;
  if (name == "webm") return ExportFormat::WebM;
  if (name == "png") return ExportFormat::PngSequence;
  return makeError("unknown export format \"" + name + "\" (use gif, mp4, webm or png)");
}

std::string exportFormatName(ExportFormat format) {
  switch (format) {
    case ExportFormat::Gif: return "gif";
    case ExportFormat::Mp4: return "mp4";
    case ExportFormat::WebM: return "webm";
    case ExportFormat::PngSequence: return "png";
  }
  return "?";
}

Result<ExportFormat> exportFormatForPath(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return makeError(path + ": the file name has no extension; end it in .gif, .mp4 or .webm");
  std::string extension = path.substr(dot + 1);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == "gif") return ExportFormat::Gif;
  if (extension == "mp4") return ExportFormat::Mp4;
  if (extension == "webm") return ExportFormat::WebM;
  return makeError(path + ": unknown video extension \"." + extension + "\"; use .gif, .mp4 or .webm " +
                   "(PNG frames go to a folder)");
}

Result<ScaleFilter> parseScaleFilter(const std::string& name) {
  if (name == "nearest") return ScaleFilter::Nearest;
  if (name == "lanczos") return ScaleFilter::Lanczos;
  return makeError("unknown upscaling filter \"" + name + "\" (use nearest or lanczos)");
}

std::string scaleFilterName(ScaleFilter filter) {
  return filter == ScaleFilter::Nearest ? "nearest" : "lanczos";
}

Status validateExportOptions(const VideoExportOptions& options) {
  if (!std::isfinite(options.fps) || options.fps <= 0 || options.fps > 1000)
    return makeError("frame rate must be a number above 0 and at most 1000, not " + std::to_string(options.fps));
  // GIF delays are whole hundredths of a second, and browsers slow delays under 0.02 s to 0.1 s.
  if (options.format == ExportFormat::Gif && options.fps > 50)
    return makeError("a GIF plays at most 50 frames per second (frame delays are whole hundredths of a "
                     "second and browsers slow shorter ones down); use --fps 50 or less, or MP4/WebM");
  if (options.long_side < 0 || options.long_side > 8192)
    return makeError("output size must be from 1 to 8192 pixels (0 keeps the frame size), not " +
                     std::to_string(options.long_side));
  if (options.format == ExportFormat::Mp4 && (options.crf < -1 || options.crf > 51))
    return makeError("H.264 quality (crf) must be from 0 to 51, not " + std::to_string(options.crf));
  if (options.format == ExportFormat::WebM && (options.crf < -1 || options.crf > 63))
    return makeError("VP9 quality (crf) must be from 0 to 63, not " + std::to_string(options.crf));
  return {};
}

std::pair<int, int> outputSizeFor(int width, int height, const VideoExportOptions& options) {
  int out_width = width, out_height = height;
  if (options.long_side > 0 && width > 0 && height > 0) {
    const double scale = static_cast<double>(options.long_side) / std::max(width, height);
    out_width = std::max(1, static_cast<int>(std::lround(width * scale)));
    out_height = std::max(1, static_cast<int>(std::lround(height * scale)));
  }
  // 4:2:0 chroma covers 2×2 pixels: H.264 and VP9 need even sizes.
  if (options.format == ExportFormat::Mp4 || options.format == ExportFormat::WebM) {
    out_width += out_width % 2;
    out_height += out_height % 2;
  }
  return {out_width, out_height};
}

std::int64_t estimatedExportBytes(ExportFormat format, int width, int height, std::int64_t frames) {
  constexpr std::int64_t kProgramBytes = 256LL << 20;
  constexpr double kFrameBytesPerPixel = 40.0;
  const double pixels = static_cast<double>(width) * height;
  const double ahead = static_cast<double>(std::min<std::int64_t>(std::max<std::int64_t>(frames, 0), 60));
  double per_pixel = kFrameBytesPerPixel;
  switch (format) {
    case ExportFormat::Mp4: per_pixel += 3.5 * ahead; break;
    case ExportFormat::WebM: per_pixel += 3.0 * ahead; break;
    case ExportFormat::Gif: per_pixel += 3.0 * static_cast<double>(std::max<std::int64_t>(frames, 0)); break;
    case ExportFormat::PngSequence: break;
  }
  return kProgramBytes + static_cast<std::int64_t>(pixels * per_pixel);
}

}  // namespace streetgan
