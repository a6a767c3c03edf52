#include "core/distributed/store_socket.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace streetgan {
namespace {

std::string errnoText() { return std::strerror(errno); }

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head) ::freeaddrinfo(head);
  }
};

Status resolve(const std::string& host, int port, bool passive, AddressList& list) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string service = std::to_string(port);
  if (const int code = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list.head); code != 0)
    return makeError("cannot resolve '" + host + "' (" + ::gai_strerror(code) + ")");
  return {};
}

std::string nameOf(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  return "?";
}

// Milliseconds poll may wait: until the deadline (at least 0), or forever without one.
int pollWait(std::optional<StoreSocket::Clock::time_point> deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - StoreSocket::Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 60000));
}

// Waits until `fd` has `events`; an Error at the deadline or when `wake_fd` becomes readable.
Status waitFor(int fd, short events, std::optional<StoreSocket::Clock::time_point> deadline, int wake_fd) {
  for (;;) {
    pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, pollWait(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return makeError("poll failed (" + errnoText() + ")");
    if (wake_fd >= 0 && fds[1].revents) return makeError("the store is stopping");
    if (fds[0].revents) return {};
    if (deadline && StoreSocket::Clock::now() >= *deadline) return makeError("timed out");
  }
}

}  // namespace

StoreSocket& StoreSocket::operator=(StoreSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

StoreSocket::~StoreSocket() {
  if (fd_ >= 0) ::close(fd_);
}

int StoreSocket::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Result<StoreSocket> StoreSocket::listenOn(const std::string& address, int port) {
  AddressList list;
  if (Status resolved = resolve(address, port, true, list); !resolved) return makeError(resolved.error());
  const addrinfo* first = list.head;
  StoreSocket socket(::socket(first->ai_family, first->ai_socktype | SOCK_CLOEXEC, first->ai_protocol));
  if (socket.fd_ < 0) return makeError("cannot make a socket (" + errnoText() + ")");
  const int yes = 1;
  ::setsockopt(socket.fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (::bind(socket.fd_, first->ai_addr, first->ai_addrlen) != 0 || ::listen(socket.fd_, 128) != 0)
    return makeError("cannot listen on " + address + ":" + std::to_string(port) + " (" + errnoText() + ")");
  return socket;
}

Result<StoreSocket> StoreSocket::connectTo(const std::string& host, int port, Clock::time_point deadline) {
  std::string last = "timed out";
  do {
    AddressList list;
    if (Status resolved = resolve(host, port, false, list); !resolved) return makeError(resolved.error());
    for (const addrinfo* at = list.head; at; at = at->ai_next) {
      StoreSocket socket(::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, at->ai_protocol));
      if (socket.fd_ < 0) return makeError("cannot make a socket (" + errnoText() + ")");
      int code = ::connect(socket.fd_, at->ai_addr, at->ai_addrlen);
      if (code != 0 && errno == EINPROGRESS) {
        if (Status ready = waitFor(socket.fd_, POLLOUT, deadline, -1); !ready) return makeError(ready.error());
        int error = 0;
        socklen_t length = sizeof(error);
        ::getsockopt(socket.fd_, SOL_SOCKET, SO_ERROR, &error, &length);
        errno = error;
        code = error == 0 ? 0 : -1;
      }
      if (code == 0) {
        ::fcntl(socket.fd_, F_SETFL, ::fcntl(socket.fd_, F_GETFL) & ~O_NONBLOCK);
        const int yes = 1;
        ::setsockopt(socket.fd_, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
        return socket;
      }
      last = errnoText();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (Clock::now() < deadline);
  return makeError("cannot connect to " + host + ":" + std::to_string(port) + " (" + last + ")");
}

Result<std::optional<StoreSocket>> StoreSocket::accept(int wake_fd) const {
  for (;;) {
    if (Status ready = waitFor(fd_, POLLIN, std::nullopt, wake_fd); !ready) return std::optional<StoreSocket>();
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      const int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      return std::optional<StoreSocket>(StoreSocket(fd));
    }
    // A connection reset before it was taken, or a signal: take the next one.
    if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
    // Out of descriptors: the connection waits in the backlog; try again shortly.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    return makeError("cannot accept a connection (" + errnoText() + ")");
  }
}

int StoreSocket::localPort() const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  return 0;
}

std::string StoreSocket::localName() const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
  return nameOf(address);
}

std::string StoreSocket::peerName() const {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
  return nameOf(address);
}

Status StoreSocket::sendAll(const void* data, std::size_t size) const {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t sent = ::send(fd_, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return makeError("the connection was lost (" + errnoText() + ")");
    bytes += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return {};
}

Status StoreSocket::receive(void* data, std::size_t size, std::optional<Clock::time_point> deadline, int wake_fd) const {
  auto* bytes = static_cast<std::uint8_t*>(data);
  while (size > 0) {
    if (Status ready = waitFor(fd_, POLLIN, deadline, wake_fd); !ready) return ready;
    const ssize_t got = ::recv(fd_, bytes, size, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got == 0) return makeError("the connection was closed");
    if (got < 0) return makeError("the connection was lost (" + errnoText() + ")");
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
  return {};
}

Status StoreSocket::sendFrame(const std::vector<std::uint8_t>& body) const {
  std::vector<std::uint8_t> frame;
  frame.reserve(body.size() + 4);
  for (int shift = 24; shift >= 0; shift -= 8) frame.push_back(static_cast<std::uint8_t>(body.size() >> shift));
  frame.insert(frame.end(), body.begin(), body.end());
  return sendAll(frame.data(), frame.size());
}

Result<std::vector<std::uint8_t>> StoreSocket::receiveFrame(std::size_t most, std::optional<Clock::time_point> deadline,
                                                            int wake_fd) const {
  std::uint8_t length_bytes[4];
  if (Status got = receive(length_bytes, 4, deadline, wake_fd); !got) return makeError(got.error());
  std::size_t length = 0;
  for (std::uint8_t byte : length_bytes) length = (length << 8) | byte;
  if (length > most)
    return makeError("a message of " + std::to_string(length) + " bytes (at most " + std::to_string(most) + ")");
  std::vector<std::uint8_t> body(length);
  if (Status got = receive(body.data(), length, deadline, wake_fd); !got) return makeError(got.error());
  return body;
}

void StoreSocket::shutdownBoth() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace streetgan
