#pragma once
// VideoEncoder: writes RGB frames to a GIF, MP4 (H.264), WebM (VP9) or a folder of PNG frames
// through FFmpeg's libraries, in-process. Each frame is upscaled (libswscale) to the output size
// and converted to the codec's pixel format; GIF frames go through libavfilter's palettegen /
// paletteuse. Output is written under a temporary name beside the target ("<path>.<pid>.tmp") and
// renamed into place only by finish(): destroying an unfinished encoder (a cancel, an error)
// removes everything it wrote. Every failure (unwritable folder, missing encoder, disk full, an
// FFmpeg error) comes back as one Error naming the output path. The encoder owns all its libav
// handles; it is not thread-safe.
#include "core/util/result.h"
#include "core/video/video_export_options.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace streetgan {

class VideoEncoder {
public:
  /// Opens `path` (a file, or a folder for PNG frames) for frames of width×height RGB pixels.
  static Result<std::unique_ptr<VideoEncoder>> open(const std::string& path, int width, int height,
                                                    const VideoExportOptions& options);
  ~VideoEncoder();
  VideoEncoder(const VideoEncoder&) = delete;
  VideoEncoder& operator=(const VideoEncoder&) = delete;

  /// Adds the next frame: height rows of width RGB24 pixels, `stride` bytes apart.
  Status addFrame(const std::uint8_t* rgb, int stride);
  /// Drains the encoder, writes the trailer and renames the output into place. A GIF is mapped
  /// to its palette and encoded here (the palette needs every frame): `progress(encoded, total)`
  /// reports that, and returning false cancels.
  Status finish(const std::function<bool(std::int64_t, std::int64_t)>& progress = {});

  int outputWidth() const;
  int outputHeight() const;
  std::int64_t framesAdded() const;
  /// Frames handed to the codec so far (a GIF's only in finish()).
  std::int64_t framesEncoded() const;
  /// The encoder FFmpeg is using, e.g. "libx264".
  std::string encoderName() const;

  struct State;

private:
  explicit VideoEncoder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace streetgan
