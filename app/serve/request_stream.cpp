#include "app/serve/request_stream.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

namespace streetgan::cli {
namespace {

// The numeric address and port of a socket address.
void addressOf(const sockaddr_storage& address, socklen_t length, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {};
  char service[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, service, sizeof service,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(service);
}

}  // namespace

RequestStream::RequestStream(int fd, std::string_view request, int write_timeout_ms)
    : fd_(fd), request_(request), write_timeout_ms_(write_timeout_ms) {}

bool RequestStream::is_readable() const { return offset_ < request_.size(); }

bool RequestStream::waitWritable() const {
  pollfd wanted{fd_, POLLOUT, 0};
  while (true) {
    const int ready = ::poll(&wanted, 1, write_timeout_ms_);
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0 && (wanted.revents & POLLOUT) != 0 && (wanted.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
  }
}

bool RequestStream::is_writable() const { return waitWritable(); }

ssize_t RequestStream::read(char* ptr, size_t size) {
  const std::size_t n = std::min(size, request_.size() - offset_);
  if (n > 0) std::memcpy(ptr, request_.data() + offset_, n);
  offset_ += n;
  return static_cast<ssize_t>(n);  // 0 past the request: its end
}

ssize_t RequestStream::write(const char* ptr, size_t size) {
  while (true) {
    const ssize_t sent = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) return sent;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    if (!waitWritable()) return -1;  // the client stopped reading for longer than the timeout
  }
}

void RequestStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) addressOf(address, length, ip, port);
}

void RequestStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) addressOf(address, length, ip, port);
}

}  // namespace streetgan::cli
