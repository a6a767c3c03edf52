#include "core/data/image_decoder.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan {
namespace {

// Closes a file descriptor on every return path.
struct FileDescriptor {
  int fd;
  explicit FileDescriptor(int f) : fd(f) {}
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
};

int readFlags(int channels, int reduction) {
  const bool gray = channels == 1;
  switch (reduction) {
    case 2: return gray ? cv::IMREAD_REDUCED_GRAYSCALE_2 : cv::IMREAD_REDUCED_COLOR_2;
    case 4: return gray ? cv::IMREAD_REDUCED_GRAYSCALE_4 : cv::IMREAD_REDUCED_COLOR_4;
    case 8: return gray ? cv::IMREAD_REDUCED_GRAYSCALE_8 : cv::IMREAD_REDUCED_COLOR_8;
    default: return gray ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR;
  }
}

}  // namespace

Result<std::vector<std::uint8_t>> ImageDecoder::readFile(const std::string& path, std::int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below as not a regular
  // file); reads of a regular file are not affected by it.
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.fd < 0) return makeError(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return makeError(path + ": cannot read (" + std::strerror(errno) + ")");
  if (!S_ISREG(info.st_mode)) return makeError(path + ": not a regular file");
  if (info.st_size == 0) return makeError(path + ": empty file (0 bytes)");
  if (info.st_size > max_bytes)
    return makeError(path + ": file too large (" + std::to_string(info.st_size) + " bytes; limit " +
                     std::to_string(max_bytes) + ")");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return makeError(path + ": cannot read (" + std::strerror(errno) + ")");
    if (got == 0) break;  // the file shrank while we read it
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  if (bytes.empty()) return makeError(path + ": empty file (0 bytes)");
  return bytes;
}

Result<DecodedImage> ImageDecoder::decode(const std::string& path, int channels, int reduction,
                                          const DecodeLimits& limits) {
  auto bytes = readFile(path, limits.max_file_bytes);
  if (!bytes) return makeError(bytes.error());
  return decode(bytes->data(), bytes->size(), path, channels, reduction, limits);
}

Result<DecodedImage> ImageDecoder::decode(const std::uint8_t* data, std::size_t size,
                                          const std::string& name, int channels, int reduction,
                                          const DecodeLimits& limits) {
  auto header = parseImageHeader(data, size);
  if (!header) return makeError(name + ": " + header.error());
  std::int64_t pixels = 0;  // a header may claim 2^32-1 × 2^32-1: the product is checked, not wrapped
  if (header->width < 0 || header->height < 0 || __builtin_mul_overflow(header->width, header->height, &pixels) ||
      pixels > limits.max_pixels)
    return makeError(name + ": the " + formatName(header->format) + " header claims " +
                     std::to_string(header->width) + "x" + std::to_string(header->height) +
                     " pixels, more than the limit of " + std::to_string(limits.max_pixels) +
                     " (refused without decoding)");
  if (!header->complete)
    return makeError(name + ": truncated JPEG (no end-of-image marker)");
  DecodedImage image;
  image.header = *header;
  image.reduction = header->format == ImageFormat::Jpeg ? reduction : 1;
  cv::Mat decoded;
  try {
    const cv::Mat encoded(1, static_cast<int>(size), CV_8UC1, const_cast<std::uint8_t*>(data));
    decoded = cv::imdecode(encoded, readFlags(channels, image.reduction));
  } catch (const cv::Exception& e) {
    return makeError(name + ": cannot decode the " + formatName(header->format) + " image (" + e.msg + ")");
  }
  if (decoded.empty())
    return makeError(name + ": cannot decode the " + formatName(header->format) +
                     " image (corrupt or truncated data)");
  if (decoded.depth() != CV_8U || decoded.channels() != channels)
    return makeError(name + ": decoded to an unexpected pixel format");
  image.width = decoded.cols;
  image.height = decoded.rows;
  image.channels = channels;
  const std::size_t row = static_cast<std::size_t>(image.width) * channels;
  image.pixels.resize(row * static_cast<std::size_t>(image.height));
  for (int y = 0; y < image.height; ++y)
    std::memcpy(image.pixels.data() + row * static_cast<std::size_t>(y), decoded.ptr(y), row);
  return image;
}

}  // namespace streetgan
