#include "core/data/image_header.h"

#include <cstring>

namespace streetgan {
namespace {

std::uint32_t be16(const std::uint8_t* p) { return (std::uint32_t(p[0]) << 8) | p[1]; }
std::uint32_t be32(const std::uint8_t* p) { return (be16(p) << 16) | be16(p + 2); }
std::uint32_t le16(const std::uint8_t* p) { return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8); }
std::uint32_t le24(const std::uint8_t* p) { return le16(p) | (std::uint32_t(p[2]) << 16); }
std::uint32_t le32(const std::uint8_t* p) { return le16(p) | (le16(p + 2) << 16); }

Result<ImageHeader> parseJpeg(const std::uint8_t* d, std::size_t n) {
  ImageHeader h;
  h.format = ImageFormat::Jpeg;
  std::size_t i = 2;
  while (true) {
    while (i < n && d[i] != 0xFF) ++i;  // tolerate stray bytes between segments
    while (i < n && d[i] == 0xFF) ++i;  // fill bytes
    if (i >= n) return makeError("JPEG data ends before its frame header (truncated file)");
    const std::uint8_t marker = d[i++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (marker == 0xD9 || marker == 0xDA)
      return makeError("JPEG without a frame header (corrupt file)");
    if (i + 2 > n) return makeError("JPEG data ends inside a segment (truncated file)");
    const std::size_t length = be16(d + i);
    if (length < 2) return makeError("JPEG segment with a bad length (corrupt file)");
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      if (i + 7 > n) return makeError("JPEG data ends inside its frame header (truncated file)");
      h.height = be16(d + i + 3);
      h.width = be16(d + i + 5);
      break;
    }
    i += length;
  }
  // A complete JPEG ends with the EOI marker; some writers pad after it, so look near the end.
  h.complete = false;
  const std::size_t from = n > 65536 ? n - 65536 : 0;
  for (std::size_t k = n - 1; k > from && !h.complete; --k)
    h.complete = d[k - 1] == 0xFF && d[k] == 0xD9;
  return h;
}

Result<ImageHeader> parseWebp(const std::uint8_t* d, std::size_t n) {
  ImageHeader h;
  h.format = ImageFormat::Webp;
  if (n < 30) return makeError("WebP data too short (truncated file)");
  if (std::memcmp(d + 12, "VP8 ", 4) == 0) {
    if (d[23] != 0x9D || d[24] != 0x01 || d[25] != 0x2A) return makeError("WebP (VP8) without its start code (corrupt file)");
    h.width = le16(d + 26) & 0x3FFF;
    h.height = le16(d + 28) & 0x3FFF;
  } else if (std::memcmp(d + 12, "VP8L", 4) == 0) {
    if (d[20] != 0x2F) return makeError("WebP (VP8L) without its signature (corrupt file)");
    const std::uint32_t bits = le32(d + 21);
    h.width = (bits & 0x3FFF) + 1;
    h.height = ((bits >> 14) & 0x3FFF) + 1;
  } else if (std::memcmp(d + 12, "VP8X", 4) == 0) {
    h.width = std::int64_t(le24(d + 24)) + 1;
    h.height = std::int64_t(le24(d + 27)) + 1;
  } else {
    return makeError("WebP with an unknown first chunk (corrupt file)");
  }
  return h;
}

}  // namespace

const char* formatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::Jpeg: return "JPEG";
    case ImageFormat::Png: return "PNG";
    case ImageFormat::Bmp: return "BMP";
    case ImageFormat::Webp: return "WebP";
  }
  return "image";
}

Result<ImageHeader> parseImageHeader(const std::uint8_t* d, std::size_t n) {
  Result<ImageHeader> header = makeError("not an image (no JPEG, PNG, BMP or WebP signature)");
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
    header = parseJpeg(d, n);
  } else if (n >= 8 && std::memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) {
    if (n < 24 || std::memcmp(d + 12, "IHDR", 4) != 0) return makeError("PNG without its IHDR header (truncated or corrupt file)");
    header = ImageHeader{ImageFormat::Png, be32(d + 16), be32(d + 20), true};
  } else if (n >= 2 && d[0] == 'B' && d[1] == 'M') {
    if (n < 26) return makeError("BMP data too short (truncated file)");
    const std::uint32_t info = le32(d + 14);
    if (info == 12) {
      header = ImageHeader{ImageFormat::Bmp, le16(d + 18), le16(d + 20), true};
    } else {
      const auto w = static_cast<std::int32_t>(le32(d + 18)), hgt = static_cast<std::int32_t>(le32(d + 22));
      header = ImageHeader{ImageFormat::Bmp, w < 0 ? -std::int64_t(w) : w, hgt < 0 ? -std::int64_t(hgt) : hgt, true};
    }
  } else if (n >= 12 && std::memcmp(d, "RIFF", 4) == 0 && std::memcmp(d + 8, "WEBP", 4) == 0) {
    header = parseWebp(d, n);
  }
  if (header && (header->width < 1 || header->height < 1))
    return makeError(std::string(formatName(header->format)) + " header with a zero width or height (corrupt file)");
  return header;
}

}  // namespace streetgan
