#pragma once
// FeaturesChannel: the frames between `metrics --features` and its features worker (a process of
// its own that runs the network, FeaturesWorker), over one end of a socket pair. A frame is a
// 16-byte head (kind, 4 bytes; zero, 4 bytes; payload length, 8 bytes; in this host's byte order,
// as both ends are this program on one host) and its payload:
//   Ready     worker → caller   empty: the network loaded and passed its checks
//   Batch     caller → worker   int64 n, then n images (3, S, S) as float32
//   Features  worker → caller   int64 D, then n × D float64
//   Failure   worker → caller   at most kMaxFailureBytes of text
// Each end bounds what it reads before allocating: a head's length beyond its kind's bound is an
// error, and a payload's counts must add up to its length. Transfers that would block call
// `wait_ready` (poll with a deadline and a cancel, or forever).
#include "core/util/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace streetgan {

enum class FeaturesFrameKind : std::uint32_t { Ready = 1, Batch = 2, Features = 3, Failure = 4 };

struct FeaturesFrameHead {
  FeaturesFrameKind kind = FeaturesFrameKind::Ready;
  std::uint64_t payload_bytes = 0;
};

class FeaturesChannel {
public:
  /// Waits until the socket is ready for `events` (POLLIN or POLLOUT); an Error ends the transfer.
  using WaitReady = std::function<Status(short events)>;

  /// The most bytes of a Failure's text. A Batch holds at most NetworkFeatures::kMaxBatchBytes of
  /// images, a Features reply NetworkFeatures::kMaxBatchImages rows of kMaxFeatures values.
  static constexpr std::uint64_t kMaxFailureBytes = 4096;

  /// `fd` is a connected stream socket (not owned); `wait_ready` is called whenever it would block.
  FeaturesChannel(int fd, WaitReady wait_ready);

  /// Sends one frame of `kind` whose payload is `parts`, one after the other.
  Status send(FeaturesFrameKind kind, const std::vector<std::pair<const void*, std::size_t>>& parts);
  /// The next frame's head, its length checked against its kind's bound; an Error "closed" when
  /// the other end closed the socket before a frame began.
  Result<FeaturesFrameHead> receiveHead();
  /// Exactly `n` bytes of the current payload into `out`.
  Status receive(void* out, std::size_t n);

  /// The Error message receiveHead() gives when the other end closed before a frame.
  static const char* const kClosed;

private:
  Status transfer(void* data, std::size_t n, bool sending, bool frame_start);

  int fd_;
  WaitReady wait_ready_;
};

}  // namespace streetgan
