#pragma once
// HttpService: the HTTP code `streetgan serve` and `streetgan publish --preview` share, on
// cpp-httplib. Connections do not go through cpp-httplib's accept loop and thread pool: listen()
// accepts them and hands them to a ConnectionGate, which gathers each request whole under bounds of
// size, count and time before a connection thread runs cpp-httplib's request processing on it. So a
// slow or hostile client never holds a thread, and the threads are started (and their failure
// reported) by start(), before serving. The owner adds its routes to server() before start().
#include "core/util/result.h"

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

namespace httplib {
class Server;
struct Response;
}  // namespace httplib

namespace streetgan::cli {

class ConnectionGate;

struct HttpServiceLimits {
  int connections = 64;           ///< connection threads
  int read_timeout_ms = 500;      ///< the longest pause inside a request
  int request_timeout_ms = 5000;  ///< the longest a whole request may take to arrive
  int max_open = 1024;            ///< connections open at once
  int max_body = 16 * 1024;       ///< bytes of a request's body; no route reads one
};

class HttpService {
public:
  explicit HttpService(HttpServiceLimits limits);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  /// Where the owner adds its routes and error handler, before start().
  httplib::Server& server();
  /// Starts the connection threads; an Error when the system refuses one (a limit on processes,
  /// threads or memory).
  Status start();
  /// Binds `host:port` (port 0: any free port). Returns the port, or an Error.
  Result<int> bind(const std::string& host, int port);
  /// Serves until stop() (also one that came first) or until `*stop_requested` (a signal
  /// handler's flag, looked at ten times a second) is set; false when accepting failed.
  bool listen(const std::atomic<bool>* stop_requested = nullptr);
  /// Ends listen() now, or at once when it starts later. Any thread; not from a signal handler.
  void stop();

  /// A plain-text answer: `status`, `text` and a newline, not to be cached.
  static void plain(httplib::Response& response, int status, const std::string& text);

private:
  class Http;
  bool answer(int fd, std::string_view request, bool last);

  HttpServiceLimits limits_;
  std::unique_ptr<Http> http_;            // before gate_: the gate's threads use it
  std::unique_ptr<ConnectionGate> gate_;
  std::atomic<bool> stopping_{false};
  int wake_ = -1;                         // an eventfd stop() writes to, to end listen()'s wait
};

}  // namespace streetgan::cli
