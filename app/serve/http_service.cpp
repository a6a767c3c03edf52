#include "app/serve/http_service.h"

#include "app/serve/connection_gate.h"
#include "app/serve/request_stream.h"

#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace streetgan::cli {
namespace {

constexpr int kWriteTimeoutMs = 10000;  // the longest a client may stop reading an answer

}  // namespace

// cpp-httplib's Server, for its routing and request processing (process_request, protected) and
// its bind; its own accept loop and thread pool are not used.
class HttpService::Http : public httplib::Server {
public:
  /// Answers the request `stream` reads; `closed` says whether the client asked to close.
  bool answer(httplib::Stream& stream, bool last, bool& closed) { return process(*this, stream, last, closed, 0); }
  int listeningSocket() const { return svr_sock_.load(); }
  void closeListeningSocket() {
    const socket_t socket = svr_sock_.exchange(INVALID_SOCKET);
    if (socket != INVALID_SOCKET) ::close(socket);
  }

private:
  // cpp-httplib 0.11 (bookworm) reads the client's address from the stream itself …
  template <class Self>
  static auto process(Self& self, httplib::Stream& stream, bool last, bool& closed, int)
      -> decltype(self.process_request(stream, last, closed, nullptr)) {
    return self.process_request(stream, last, closed, nullptr);
  }
  // … later ones (trixie's 0.18) take the addresses as arguments.
  template <class Self>
  static auto process(Self& self, httplib::Stream& stream, bool last, bool& closed, long)
      -> decltype(self.process_request(stream, std::string(), 0, std::string(), 0, last, closed, nullptr)) {
    std::string remote_ip, local_ip;
    int remote_port = -1, local_port = -1;
    stream.get_remote_ip_and_port(remote_ip, remote_port);
    stream.get_local_ip_and_port(local_ip, local_port);
    return self.process_request(stream, remote_ip, remote_port, local_ip, local_port, last, closed, nullptr);
  }
};

HttpService::HttpService(HttpServiceLimits limits) : limits_(limits), http_(std::make_unique<Http>()) {
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // without one, listen() looks at stop() twice a second
  // The gate refuses a larger body before this.
  http_->set_payload_max_length(static_cast<std::size_t>(limits_.max_body));
  // On the listening socket, inherited by every accepted one: no Nagle delay (headers and body
  // are separate writes, and a keep-alive client would wait for the delayed ACK, ~40 ms a
  // request), and SO_REUSEADDR but not the library's SO_REUSEPORT, so a second server on a port
  // in use fails instead of sharing it.
  http_->set_socket_options([](socket_t socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    plain(response, 500, "internal error");
  });
}

HttpService::~HttpService() {
  stop();
  gate_.reset();  // waits for the answers being written, then closes every connection
  http_->closeListeningSocket();
  if (wake_ >= 0) ::close(wake_);
}

httplib::Server& HttpService::server() { return *http_; }

void HttpService::plain(httplib::Response& response, int status, const std::string& text) {
  response.status = status;
  response.set_header("Cache-Control", "no-store");
  response.set_content(text + "\n", "text/plain; charset=utf-8");
}

Status HttpService::start() {
  ConnectionGate::Limits gate;
  gate.threads = limits_.connections;
  gate.max_open = limits_.max_open;
  gate.pause_ms = limits_.read_timeout_ms;
  gate.request_ms = limits_.request_timeout_ms;
  gate.idle_ms = 5000;
  gate.requests_per_connection = 100;
  gate.head.max_body = limits_.max_body;
  gate_ = std::make_unique<ConnectionGate>(gate, [this](int fd, std::string_view request, bool last) {
    return answer(fd, request, last);
  });
  if (Status started = gate_->start(); !started) {
    gate_.reset();
    return started;
  }
  return {};
}

Result<int> HttpService::bind(const std::string& host, int port) {
  const int bound = port == 0 ? http_->bind_to_any_port(host) : (http_->bind_to_port(host, port) ? port : -1);
  if (bound < 0) return makeError("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not an address of this machine)");
  ::listen(http_->listeningSocket(), SOMAXCONN);  // a longer backlog than the library's 5
  return bound;
}

bool HttpService::listen(const std::atomic<bool>* stop_requested) {
  const int listening = http_->listeningSocket();
  if (listening < 0 || !gate_) return false;
  while (!stopping_.load() && (stop_requested == nullptr || !stop_requested->load())) {
    pollfd watched[2] = {{listening, POLLIN, 0}, {wake_, POLLIN, 0}};
    const int ready = ::poll(watched, 2, 100);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if ((watched[0].revents & (POLLERR | POLLNVAL)) != 0) return false;
    if ((watched[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listening, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      gate_->adopt(fd);
      continue;
    }
    switch (errno) {
      case EMFILE:
      case ENFILE:
      case ENOBUFS:
      case ENOMEM:
        // Out of file descriptors or memory: the connection that has waited longest makes room.
        gate_->shed();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      case EBADF:
      case EINVAL:
      case ENOTSOCK:
      case EOPNOTSUPP:
        return false;
      default:
        continue;  // EINTR, EAGAIN, ECONNABORTED, EPROTO and the network errors accept(2) says to retry
    }
  }
  return true;
}

void HttpService::stop() {
  stopping_.store(true);
  if (wake_ >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_, &one, sizeof one);
  }
}

bool HttpService::answer(int fd, std::string_view request, bool last) {
  RequestStream stream(fd, request, kWriteTimeoutMs);
  bool closed = false;
  const bool answered = http_->answer(stream, last, closed);
  return answered && !closed;
}

}  // namespace streetgan::cli
