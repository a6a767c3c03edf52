#include "core/runs/tensorboard_writer.h"

#include "core/util/crc32c.h"
#include "core/util/protobuf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace streetgan {

namespace {

// Field numbers of tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto.
namespace event {
constexpr int kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kSessionLog = 7;
}
namespace session_log {
constexpr int kStatus = 1;
constexpr std::uint64_t kStart = 1;
}  // namespace session_log
namespace summary {
constexpr int kValue = 1;
}
namespace value {
constexpr int kTag = 1, kSimpleValue = 2, kImage = 4;
}
namespace image {
constexpr int kHeight = 1, kWidth = 2, kColorspace = 3, kEncoded = 4;
}

ProtobufWriter eventAt(double wall_time, std::int64_t step) {
  ProtobufWriter e;
  e.doubleField(event::kWallTime, wall_time);
  if (step != 0) e.varintField(event::kStep, static_cast<std::uint64_t>(step));
  return e;
}

std::string eventFileHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

bool writeAllToEventFile(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0) ::close(fd_);
}

TensorBoardWriter::TensorBoardWriter(TensorBoardWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

TensorBoardWriter& TensorBoardWriter::operator=(TensorBoardWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Result<TensorBoardWriter> TensorBoardWriter::open(const std::string& dir, double wall_time) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return makeError("cannot create " + dir + ": " + error.message());
  char seconds[16];
  std::snprintf(seconds, sizeof seconds, "%010lld", static_cast<long long>(wall_time));
  TensorBoardWriter writer;
  const std::string base =
      (std::filesystem::path(dir) / ("events.out.tfevents." + std::string(seconds) + "." + eventFileHostName())).string();
  // A second process in the same second (a quick resume) must not write into the first's file:
  // O_EXCL refuses a name that exists (a link too), and the next suffix is tried. Nothing here
  // throws (no std::filesystem::exists, whose throwing form ended training on EACCES or
  // ENAMETOOLONG): every failure comes back as an Error.
  for (int suffix = 0;; ++suffix) {
    writer.path_ = suffix == 0 ? base : base + "." + std::to_string(suffix);
    writer.fd_ = ::open(writer.path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (writer.fd_ >= 0) break;
    if (errno != EEXIST || suffix >= 1000) return makeError("cannot create " + writer.path_ + ": " + std::strerror(errno));
  }
  ProtobufWriter first = eventAt(wall_time, 0);
  first.bytesField(event::kFileVersion, "brain.Event:2");
  if (Status s = writer.record(first.bytes()); !s) return makeError(s.error());
  return writer;
}

Status TensorBoardWriter::record(const std::string& data) {
  char header[12];
  const std::uint64_t length = data.size();
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  const std::uint32_t length_crc = maskedCrc32c(header, 8);
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>((length_crc >> (8 * i)) & 0xFF);
  char footer[4];
  const std::uint32_t data_crc = maskedCrc32c(data.data(), data.size());
  for (int i = 0; i < 4; ++i) footer[i] = static_cast<char>((data_crc >> (8 * i)) & 0xFF);
  // One write per record, so a reader following the file never sees half of one.
  std::string whole(header, sizeof header);
  whole += data;
  whole.append(footer, sizeof footer);
  if (fd_ < 0 || !writeAllToEventFile(fd_, whole.data(), whole.size()))
    return makeError("cannot write " + path_ + ": " + std::strerror(errno));
  return {};
}

Status TensorBoardWriter::sessionStart(double wall_time, std::int64_t step) {
  ProtobufWriter log;
  log.varintField(session_log::kStatus, session_log::kStart);
  ProtobufWriter e = eventAt(wall_time, step);
  e.messageField(event::kSessionLog, log);
  return record(e.bytes());
}

Status TensorBoardWriter::scalar(std::string_view tag, double wall_time, std::int64_t step, double v) {
  ProtobufWriter val;
  val.bytesField(value::kTag, tag);
  val.floatField(value::kSimpleValue, static_cast<float>(v));
  ProtobufWriter s;
  s.messageField(summary::kValue, val);
  ProtobufWriter e = eventAt(wall_time, step);
  e.messageField(event::kSummary, s);
  return record(e.bytes());
}

Status TensorBoardWriter::image(std::string_view tag, double wall_time, std::int64_t step, std::string_view png, int width,
                                int height, int channels) {
  ProtobufWriter img;
  img.varintField(image::kHeight, static_cast<std::uint64_t>(height));
  img.varintField(image::kWidth, static_cast<std::uint64_t>(width));
  img.varintField(image::kColorspace, static_cast<std::uint64_t>(channels));
  img.bytesField(image::kEncoded, png);
  ProtobufWriter val;
  val.bytesField(value::kTag, tag);
  val.messageField(value::kImage, img);
  ProtobufWriter s;
  s.messageField(summary::kValue, val);
  ProtobufWriter e = eventAt(wall_time, step);
  e.messageField(event::kSummary, s);
  return record(e.bytes());
}

}  // namespace streetgan
