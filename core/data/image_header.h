#pragma once
// ImageHeader: the format and size of an encoded image, read from its first bytes without
// decoding it (JPEG SOF marker, PNG IHDR, BMP info header, WebP VP8/VP8L/VP8X chunk). Lets the
// decoder refuse a decompression bomb (a header claiming enormous dimensions) before anything is
// allocated, pick a JPEG's DCT reduction, and notice a truncated JPEG. Failures are an Error
// saying what is wrong with the bytes (the caller adds the file name).
#include "core/util/result.h"

#include <cstddef>
#include <cstdint>

namespace streetgan {

enum class ImageFormat { Jpeg, Png, Bmp, Webp };

struct ImageHeader {
  ImageFormat format = ImageFormat::Jpeg;
  std::int64_t width = 0;
  std::int64_t height = 0;
  bool complete = true;  ///< false for a JPEG without its end-of-image marker (truncated)
};

Result<ImageHeader> parseImageHeader(const std::uint8_t* data, std::size_t size);

const char* formatName(ImageFormat format);

}  // namespace streetgan
