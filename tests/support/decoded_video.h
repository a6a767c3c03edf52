#pragma once
// Test helper: reads a video file back with libavformat/libavcodec (independently of the encoder
// under test) into RGB24 frames, with what the container says about it.
#include <QString>

#include <cstdint>
#include <vector>

namespace streetgan::test {

struct DecodedVideo {
  QString error;                          ///< empty when the file decoded
  QString codec;                          ///< "h264", "vp9", "gif", "png"
  QString pixel_format;                   ///< the stream's pixel format, e.g. "yuv420p"
  int width = 0, height = 0;
  double frame_rate = 0;                  ///< the stream's average frame rate
  std::vector<double> durations;          ///< each frame's duration in seconds (from the packets)
  std::vector<std::vector<std::uint8_t>> frames;  ///< width·height·3 RGB bytes each
  int gif_loop_count = -1;                ///< GIF: NETSCAPE2.0 loop count (0 = forever); -1 = none
};

DecodedVideo decodeVideo(const QString& path);

/// Mean PSNR (dB) between two equally sized RGB24 buffers.
double psnr(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b);

}  // namespace streetgan::test
