#pragma once
// TensorBoardWriter: one TensorBoard event file, `<dir>/events.out.tfevents.<10-digit unix
// time>.<host>`, written as TensorFlow's record format: each record is its length (8 bytes,
// little-endian), the masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the
// data. The data are Event messages (tensorflow/core/util/event.proto) encoded by hand: the
// first holds file_version "brain.Event:2"; then SessionLog START markers, scalar summaries and
// PNG image summaries. Owns its file descriptor (move-only); a failed write comes back as an
// Error naming the file, and nothing here throws.
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace streetgan {

class TensorBoardWriter {
public:
  TensorBoardWriter() = default;
  ~TensorBoardWriter();
  TensorBoardWriter(TensorBoardWriter&& other) noexcept;
  TensorBoardWriter& operator=(TensorBoardWriter&& other) noexcept;
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  /// Creates `dir` if needed and a new event file in it, named from `wall_time` and this host's
  /// name, starting with the file_version record.
  static Result<TensorBoardWriter> open(const std::string& dir, double wall_time);

  /// A SessionLog START at `step`: TensorBoard drops the points at or past `step` written before
  /// it (a resumed run's overlap).
  Status sessionStart(double wall_time, std::int64_t step);
  Status scalar(std::string_view tag, double wall_time, std::int64_t step, double value);
  /// An image summary of PNG bytes (`channels`: 1 grey, 3 RGB, 4 RGBA).
  Status image(std::string_view tag, double wall_time, std::int64_t step, std::string_view png, int width, int height,
               int channels);
  const std::string& path() const { return path_; }

private:
  Status record(const std::string& data);
  std::string path_;
  int fd_ = -1;
};

}  // namespace streetgan
