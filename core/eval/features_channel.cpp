#include "core/eval/features_channel.h"

#include "core/eval/network_features.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace streetgan {

const char* const FeaturesChannel::kClosed = "closed";

namespace {

constexpr std::size_t kHeadBytes = 16;

std::uint64_t boundOf(FeaturesFrameKind kind) {
  switch (kind) {
    case FeaturesFrameKind::Ready: return 0;
    case FeaturesFrameKind::Batch: return 8 + NetworkFeatures::kMaxBatchBytes;
    case FeaturesFrameKind::Features: return 8 + NetworkFeatures::kMaxBatchImages * NetworkFeatures::kMaxFeatures * 8;
    case FeaturesFrameKind::Failure: return FeaturesChannel::kMaxFailureBytes;
  }
  return 0;
}

}  // namespace

FeaturesChannel::FeaturesChannel(int fd, WaitReady wait_ready) : fd_(fd), wait_ready_(std::move(wait_ready)) {}

Status FeaturesChannel::send(FeaturesFrameKind kind, const std::vector<std::pair<const void*, std::size_t>>& parts) {
  std::uint64_t payload = 0;
  for (const auto& part : parts) payload += part.second;
  char head[kHeadBytes] = {};
  const auto kind_value = static_cast<std::uint32_t>(kind);
  std::memcpy(head, &kind_value, 4);
  std::memcpy(head + 8, &payload, 8);
  if (Status sent = transfer(head, kHeadBytes, true, false); !sent) return sent;
  for (const auto& [data, n] : parts)
    if (Status sent = transfer(const_cast<void*>(data), n, true, false); !sent) return sent;
  return {};
}

Result<FeaturesFrameHead> FeaturesChannel::receiveHead() {
  char head[kHeadBytes] = {};
  if (Status received = transfer(head, kHeadBytes, false, true); !received) return makeError(received.error());
  std::uint32_t kind = 0, zero = 0;
  FeaturesFrameHead frame;
  std::memcpy(&kind, head, 4);
  std::memcpy(&zero, head + 4, 4);
  std::memcpy(&frame.payload_bytes, head + 8, 8);
  if (kind < 1 || kind > 4 || zero != 0) return makeError("a frame of unknown kind " + std::to_string(kind));
  frame.kind = static_cast<FeaturesFrameKind>(kind);
  if (frame.payload_bytes > boundOf(frame.kind))
    return makeError("a frame of kind " + std::to_string(kind) + " of " + std::to_string(frame.payload_bytes) +
                     " bytes; at most " + std::to_string(boundOf(frame.kind)) + " are read");
  return frame;
}

Status FeaturesChannel::receive(void* out, std::size_t n) { return transfer(out, n, false, false); }

// A closed socket before the first byte of a head is kClosed; inside a frame it is cut short.
Status FeaturesChannel::transfer(void* data, std::size_t n, bool sending, bool frame_start) {
  auto* bytes = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t moved = sending ? ::send(fd_, bytes + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                                  : ::recv(fd_, bytes + done, n - done, MSG_DONTWAIT);
    if (moved > 0) {
      done += static_cast<std::size_t>(moved);
      continue;
    }
    if (moved == 0) return makeError(done == 0 && frame_start ? kClosed : "the other end closed in the middle of a frame");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      // The other end went away: a send finds the pipe broken, and a receive finds the connection
      // reset when it died with bytes of ours unread (a batch it never took).
      if ((sending && errno == EPIPE) || errno == ECONNRESET) return makeError(kClosed);
      return makeError(std::string(sending ? "cannot send: " : "cannot receive: ") + std::strerror(errno));
    }
    if (Status ready = wait_ready_(sending ? POLLOUT : POLLIN); !ready) return ready;
  }
  return {};
}

}  // namespace streetgan
