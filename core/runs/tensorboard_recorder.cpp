#include "core/runs/tensorboard_recorder.h"

#include "core/runs/run_event.h"
#include "core/runs/run_relative_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace streetgan {

namespace {

/// Width, height and TensorBoard's colorspace (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA) from a PNG's
/// IHDR chunk; nullopt when the bytes are not a PNG this understands.
struct PngShape {
  int width = 0, height = 0, channels = 0;
};

std::optional<PngShape> pngShape(const std::string& bytes) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 26 || bytes.compare(0, 8, kSignature, 8) != 0 || bytes.compare(12, 4, "IHDR") != 0) return std::nullopt;
  auto be32 = [&bytes](std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3]));
  };
  PngShape shape;
  shape.width = static_cast<int>(be32(16));
  shape.height = static_cast<int>(be32(20));
  switch (static_cast<unsigned char>(bytes[25])) {
    case 0: shape.channels = 1; break;
    case 4: shape.channels = 2; break;
    case 2: shape.channels = 3; break;
    case 6: shape.channels = 4; break;
    default: return std::nullopt;  // palette images: TensorBoard decodes them, but we never write them
  }
  return shape;
}

/// `text` fit for one line of a terminal: control bytes as \xNN (a path from another host's
/// events may hold escape sequences), at most 1,000 bytes.
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= 1000) return out + "...";
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Closes a file descriptor at the end of its scope.
struct DescriptorCloser {
  int fd;
  ~DescriptorCloser() { ::close(fd); }
};

/// The bytes of the sample grid `relative` names, or an Error naming it that says why it is not
/// read: outside `run_dir`, not a regular file (a link, a FIFO, a device: checked before opening,
/// then opened without blocking and without following a link, and checked again on the open
/// file), or over `limit` bytes (checked before reading, and while reading a file that grows).
Result<std::string> readSampleGrid(const std::string& run_dir, const std::string& relative, std::int64_t limit) {
  auto resolved = resolveInsideRunDirectory(run_dir, relative);
  if (!resolved) return makeError(resolved.error());
  const std::string& path = *resolved;
  const std::string named = "'" + relative + "'";
  const auto unreadable = [&](int code) { return makeError("cannot read " + named + ": " + std::strerror(code)); };
  struct stat before {};
  if (::lstat(path.c_str(), &before) != 0) return unreadable(errno);
  if (S_ISLNK(before.st_mode)) return makeError(named + " is a symbolic link, not a file");
  if (!S_ISREG(before.st_mode)) return makeError(named + " is not a regular file");
  const std::string too_large = named + " is larger than " + std::to_string(limit >> 20) + " MiB";
  if (before.st_size > limit) return makeError(too_large);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno == ELOOP ? makeError(named + " is a symbolic link, not a file") : unreadable(errno);
  const DescriptorCloser closer{fd};
  struct stat opened {};
  if (::fstat(fd, &opened) != 0) return unreadable(errno);
  if (!S_ISREG(opened.st_mode) || opened.st_dev != before.st_dev || opened.st_ino != before.st_ino)
    return makeError(named + " was replaced while it was opened");
  if (opened.st_size > limit) return makeError(too_large);
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(opened.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unreadable(errno);
    if (n == 0) break;
    if (static_cast<std::int64_t>(bytes.size()) + n > limit) return makeError(too_large);
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return bytes;
}

}  // namespace

TensorBoardRecorder::TensorBoardRecorder(std::string run_dir, std::string out_dir, WarningSink warn)
    : run_dir_(std::move(run_dir)), out_dir_(std::move(out_dir)), warn_(std::move(warn)) {}

Status TensorBoardRecorder::record(const StreamEvent& event) { return record(event.event, event.time); }

Status TensorBoardRecorder::record(const events::RunEvent& typed, double time) {
  const std::int64_t step = events::imagesSeen(typed).value_or(0);
  if (std::holds_alternative<events::RunStarted>(typed)) {
    if (!writer_) {
      auto opened = TensorBoardWriter::open(out_dir_, time);
      if (!opened) return makeError(opened.error());
      writer_ = std::move(*opened);
    }
    return writer_->sessionStart(time, step);
  }
  if (!writer_) return {};  // nothing before the first start (a log cut at its head)
  auto scalar = [&](const std::string& tag, double value) -> Status {
    return std::isfinite(value) ? writer_->scalar(tag, time, step, value) : Status{};
  };
  if (const auto* s = std::get_if<events::Step>(&typed)) {
    for (const auto& [tag, value] : {std::pair{"G_loss", s->loss_g}, std::pair{"D_loss", s->loss_d}, std::pair{"D_X", s->d_x},
                                     std::pair{"D_G_z1", s->d_g_z1}, std::pair{"D_G_z2", s->d_g_z2},
                                     std::pair{"D_rt", s->rt},
                                     std::pair{"throughput/images_per_s", s->images_per_s},
                                     std::pair{"throughput/data_wait_fraction", s->data_wait_fraction}})
      if (Status written = scalar(tag, value); !written) return written;
  } else if (const auto* imported = std::get_if<events::ImportedLosses>(&typed)) {
    // `streetgan import`'s loss pairs, many to an event (docs/events.md): pair k is step
    // first_step + k, at that step × images_per_step images seen; a null value is skipped.
    const double first = imported->first_step, per_step = imported->images_per_step;
    if (!std::isfinite(first) || !std::isfinite(per_step) || first < 0 || per_step < 0) return {};
    for (const auto& [tag, values] : {std::pair{"G_loss", &imported->loss_g}, std::pair{"D_loss", &imported->loss_d}}) {
      for (std::size_t k = 0; k < values->size(); ++k) {
        const double value = (*values)[k];
        const double images_seen = events::importedPoint(*imported, k).images_seen;
        if (!std::isfinite(value) || images_seen >= 9.2e18) continue;
        if (Status written = writer_->scalar(tag, time, static_cast<std::int64_t>(images_seen), value); !written) return written;
      }
    }
  } else if (const auto* metrics = std::get_if<events::Metrics>(&typed)) {
    for (const auto& [name, value] : metrics->figures)
      if (Status written = scalar("quality/" + name, value); !written) return written;
  } else if (const auto* parzen = std::get_if<events::Parzen>(&typed)) {
    if (Status written = scalar("parzen/mean_ll", parzen->mean_ll); !written) return written;
    return scalar("parzen/stderr", parzen->standard_error);
  } else if (const auto* samples = std::get_if<events::Samples>(&typed)) {
    if (samples->path.empty()) return {};
    const auto skip = [&](const std::string& why) -> Status {
      ++skipped_samples_;
      if (warn_) warn_(printable(run_dir_ + ": sample grid skipped: " + why));
      return {};
    };
    const std::string& relative = samples->path;
    auto png = readSampleGrid(run_dir_, relative, kMaxSampleBytes);
    if (!png) return skip(png.error());
    const auto shape = pngShape(*png);
    if (!shape) return skip("'" + relative + "' is not a PNG image");
    const auto size = static_cast<std::int64_t>(png->size());
    if (sample_budget_ >= 0 && sample_bytes_ + size > sample_budget_) {
      if (budget_warned_) {
        ++skipped_samples_;
        return {};
      }
      budget_warned_ = true;
      return skip("'" + relative + "' and every grid after it: the grids written reach " +
                  std::to_string(sample_budget_ >> 20) + " MiB in all");
    }
    sample_bytes_ += size;
    return writer_->image("samples", time, step, *png, shape->width, shape->height, shape->channels);
  }
  return {};
}

}  // namespace streetgan
