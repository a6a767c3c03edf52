#pragma once
// ConnectionGate: the connections of `streetgan serve`, between accept() and the HTTP library.
// One reader thread holds every open connection (epoll) and gathers each request's bytes until
// RequestHeadScanner says they are a whole request; only then does one of the connection threads
// get it, answer it and hand the connection back for the next request. So no thread ever waits for
// a slow client: a client that trickles its request, or any number of them, or idle keep-alive
// connections, cannot keep /health from being answered.
//
// Every request is bounded in time twice: the longest pause between its bytes, and the longest
// time from its first byte to its last (a client sending a byte just inside each pause is cut off
// all the same). A request that breaks a limit is answered (408, 413, 414, 431, 501) and its
// connection closed. The open connections are bounded too; when a new one would go beyond the
// bound, the one that has waited longest is closed. Threads are started by start(), which says so
// plainly when the system refuses one (a limit on processes or memory) instead of hanging.
#include "app/serve/request_head_scanner.h"
#include "core/util/result.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace streetgan::cli {

class ConnectionGate {
public:
  struct Limits {
    int threads = 64;                  ///< connection threads: each answers one whole request at a time
    int max_open = 1024;               ///< connections held at once
    int pause_ms = 500;                ///< the longest pause inside a request
    int request_ms = 5000;             ///< the longest time a whole request may take to arrive
    int idle_ms = 5000;                ///< a connection with no request in progress closes after this
    int requests_per_connection = 100; ///< keep-alive requests on one connection
    RequestHeadScanner::Limits head;
  };

  /// Answers one request on the connection `fd` (blocking; non-blocking socket, so it waits for
  /// writes itself): `request` holds its head and body. `last`: the connection closes after it,
  /// so the answer should say so. Returns whether the connection may carry another request.
  using Handler = std::function<bool(int fd, std::string_view request, bool last)>;

  ConnectionGate(Limits limits, Handler handler);
  /// Stops, waits for the requests being answered, and closes every connection.
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  /// Starts the reader and the connection threads; an Error says how many the system allowed.
  Status start();
  /// Takes an accepted connection (its fd is then the gate's to close).
  void adopt(int fd);
  /// Closes the connection that has waited longest (the process ran out of file descriptors).
  void shed();
  /// Stops reading and answering; requests not yet being answered are dropped.
  void stop();
  /// Connections open now, wherever they are.
  int openConnections() const { return count_.load(); }

private:
  using Clock = std::chrono::steady_clock;
  struct Connection;
  void readLoop();
  void workLoop();
  void wakeReader();
  void receive(Connection& connection);
  void examine(Connection& connection);
  void dispatch(int fd);
  void refuse(Connection& connection, int status, const std::string& reason);
  void forget(int fd);
  void sweep(Clock::time_point now);
  void evictOldest(int how_many);
  void takeHandovers();
  void watch(Connection& connection);

  Limits limits_;
  Handler handler_;
  int epoll_ = -1;
  int wake_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> count_{0};

  std::mutex mutex_;
  std::condition_variable ready_wake_;
  std::deque<std::unique_ptr<Connection>> ready_;      // whole requests, for the connection threads
  std::vector<std::unique_ptr<Connection>> adopted_;   // new connections, for the reader
  std::vector<std::unique_ptr<Connection>> returned_;  // connections back after a request
  int shed_ = 0;                                       // evictions asked for by shed()

  std::unordered_map<int, std::unique_ptr<Connection>> open_;  // the reader thread's alone
  std::string last_report_;                                    // the reader thread's alone
  std::thread reader_;
  std::vector<std::thread> workers_;
};

}  // namespace streetgan::cli
