#pragma once
// StoreSocket: one TCP socket of the job store (JobStoreServer, JobStoreClient), owned: listen on
// one address, accept, connect within a deadline, and send and receive whole frames (4-byte
// big-endian length, then the body) with a bound checked before anything is allocated. Every
// wait can end at a deadline and at a wake descriptor (the server's stop); none raises SIGPIPE.
#include "core/util/result.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

class StoreSocket {
public:
  using Clock = std::chrono::steady_clock;

  StoreSocket() = default;
  explicit StoreSocket(int fd) : fd_(fd) {}
  StoreSocket(StoreSocket&& other) noexcept : fd_(other.release()) {}
  StoreSocket& operator=(StoreSocket&& other) noexcept;
  StoreSocket(const StoreSocket&) = delete;
  StoreSocket& operator=(const StoreSocket&) = delete;
  ~StoreSocket();

  /// Listens on `address` (a numeric address or a host name; its first address) at `port`
  /// (0: a free port), on that address only.
  static Result<StoreSocket> listenOn(const std::string& address, int port);
  /// Connects to `host`:`port`, trying again while it is refused until `deadline`.
  static Result<StoreSocket> connectTo(const std::string& host, int port, Clock::time_point deadline);

  /// The next connection, or nothing when `wake_fd` became readable first.
  Result<std::optional<StoreSocket>> accept(int wake_fd) const;
  int localPort() const;
  /// "ADDRESS:PORT" of this socket's own end.
  std::string localName() const;
  /// "ADDRESS:PORT" of the other end.
  std::string peerName() const;

  Status sendAll(const void* data, std::size_t size) const;
  /// Exactly `size` bytes, or an Error: closed, `deadline` passed, or `wake_fd` readable.
  Status receive(void* data, std::size_t size, std::optional<Clock::time_point> deadline, int wake_fd = -1) const;
  Status sendFrame(const std::vector<std::uint8_t>& body) const;
  /// One frame whose body is at most `most` bytes; a longer one is an Error before its body is read.
  Result<std::vector<std::uint8_t>> receiveFrame(std::size_t most, std::optional<Clock::time_point> deadline,
                                                 int wake_fd = -1) const;
  /// Ends both directions (a thread blocked on this socket returns).
  void shutdownBoth() const;

  int fd() const { return fd_; }
  int release();

private:
  int fd_ = -1;
};

}  // namespace streetgan
