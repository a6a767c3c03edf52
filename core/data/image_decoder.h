#pragma once
// ImageDecoder: reads one image file into 8-bit pixels (BGR, or gray for 1-channel models),
// decoding a JPEG at 1/2, 1/4 or 1/8 size through libjpeg's DCT scaling when asked (other formats
// always decode at full size). Grayscale, CMYK, alpha and 16-bit images come out converted. The
// header is checked before decoding: files that are empty, not images, truncated JPEGs or
// claiming more than Limits::max_pixels are refused, so a decompression bomb allocates nothing.
// Every failure is an Error naming the file and the reason.
#include "core/data/image_header.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

/// Read-only pixels: rows of width·channels bytes, `stride` bytes apart. `reduction` is the DCT
/// scale the pixels were decoded at: pixel (x, y) covers source pixels [x·r, (x+1)·r).
struct ImageView {
  const std::uint8_t* data = nullptr;
  int width = 0, height = 0, channels = 0;
  std::size_t stride = 0;
  int reduction = 1;
  int full_width = 0, full_height = 0;  ///< size of the image in the file
};

struct DecodedImage {
  std::vector<std::uint8_t> pixels;  ///< height·width·channels bytes, rows packed
  int width = 0, height = 0, channels = 0;
  int reduction = 1;
  ImageHeader header;                ///< the file's format and full size

  ImageView view() const {
    return {pixels.data(), width, height, channels, static_cast<std::size_t>(width) * channels,
            reduction, static_cast<int>(header.width), static_cast<int>(header.height)};
  }
};

struct DecodeLimits {
  std::int64_t max_pixels = 100'000'000;          ///< refuse headers claiming more (100 MP)
  std::int64_t max_file_bytes = 512LL << 20;      ///< refuse files larger than 512 MiB
};

class ImageDecoder {
public:
  /// Decodes `path` to `channels` (3 or 1) at 1/`reduction` (1, 2, 4 or 8) when it is a JPEG.
  static Result<DecodedImage> decode(const std::string& path, int channels, int reduction,
                                     const DecodeLimits& limits = {});
  /// The same from bytes already in memory; `name` starts every error message.
  static Result<DecodedImage> decode(const std::uint8_t* data, std::size_t size,
                                     const std::string& name, int channels, int reduction,
                                     const DecodeLimits& limits = {});
  /// Reads a whole file (regular files only, at most `max_bytes`).
  static Result<std::vector<std::uint8_t>> readFile(const std::string& path, std::int64_t max_bytes);
};

}  // namespace streetgan
