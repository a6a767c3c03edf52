#include "app/serve/connection_gate.h"

#include "core/util/exception_message.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <system_error>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace streetgan::cli {
namespace {

constexpr auto kLinger = std::chrono::milliseconds(1000);  // a refused connection's last second
constexpr auto kTick = std::chrono::milliseconds(50);     // how often deadlines are looked at

const char* statusText(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 416: return "Range Not Satisfiable";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

}  // namespace

struct ConnectionGate::Connection {
  enum class Phase { Idle, Reading, Closing };

  Connection(int socket, std::atomic<int>& open) : fd(socket), count(&open) { count->fetch_add(1); }
  ~Connection() {
    if (fd >= 0) ::close(fd);
    count->fetch_sub(1);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd;
  std::atomic<int>* count;
  std::string buffer;             // bytes received and not yet answered
  RequestHeadScanner scanner;
  Phase phase = Phase::Idle;
  Clock::time_point since = Clock::now();  // Idle: since when; Reading: its first byte; Closing: since when
  Clock::time_point last_byte = since;
  std::size_t request_size = 0;   // when handed to a connection thread: the request at the buffer's front
  int answered = 0;
  bool peer_closed = false;       // the client sent all it will send
};

ConnectionGate::ConnectionGate(Limits limits, Handler handler) : limits_(limits), handler_(std::move(handler)) {
  limits_.threads = std::max(1, limits_.threads);
  limits_.max_open = std::max(1, limits_.max_open);
  limits_.requests_per_connection = std::max(1, limits_.requests_per_connection);
}

ConnectionGate::~ConnectionGate() {
  stop();
  if (reader_.joinable()) reader_.join();
  for (auto& worker : workers_)
    if (worker.joinable()) worker.join();
  open_.clear();
  ready_.clear();
  adopted_.clear();
  returned_.clear();
  if (epoll_ >= 0) ::close(epoll_);
  if (wake_ >= 0) ::close(wake_);
}

Status ConnectionGate::start() {
  auto failed = [](const char* what) {
    const int error = errno;
    return makeError(std::string("cannot watch connections (") + what + ": " + std::generic_category().message(error) + ")");
  };
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) return failed("epoll_create1");
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_ < 0) return failed("eventfd");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event) != 0) return failed("epoll_ctl");
  // std::thread throws std::system_error when pthread_create fails (EAGAIN: a limit on processes,
  // threads or memory); the threads already started are stopped and joined, never left waiting.
  bool started_all = false;
  std::string refused;
  try {
    reader_ = std::thread([this] { readLoop(); });
    workers_.reserve(static_cast<std::size_t>(limits_.threads));
    for (int i = 0; i < limits_.threads; ++i) workers_.emplace_back([this] { workLoop(); });
    started_all = true;
  } catch (const std::system_error& e) {
    refused = e.code().message();
  } catch (const std::exception& e) {
    refused = firstLine(e.what());
  }
  if (started_all) return {};
  const std::size_t started = workers_.size();
  stop();
  if (reader_.joinable()) reader_.join();
  for (auto& worker : workers_) worker.join();
  workers_.clear();
  return makeError("cannot start " + std::to_string(limits_.threads) + " connection threads: the system refused one after " +
                   std::to_string(started) + " (" + refused + ")");
}

void ConnectionGate::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  ready_wake_.notify_all();
  wakeReader();
}

void ConnectionGate::wakeReader() {
  if (wake_ < 0) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(wake_, &one, sizeof one);
}

void ConnectionGate::adopt(int fd) {
  std::unique_ptr<Connection> connection;
  try {
    connection = std::make_unique<Connection>(fd, count_);
  } catch (...) {
    ::close(fd);
    return;
  }
  connection->scanner = RequestHeadScanner(limits_.head);
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_.load()) return;  // closed as `connection` goes
    adopted_.push_back(std::move(connection));
  } catch (...) {
    return;  // out of memory: closed as `connection` goes
  }
  wakeReader();
}

void ConnectionGate::shed() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++shed_;
  }
  wakeReader();
}

void ConnectionGate::watch(Connection& connection) {
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = connection.fd;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, connection.fd, &event) != 0) connection.peer_closed = true;
}

void ConnectionGate::forget(int fd) {
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  open_.erase(fd);  // closes it
}

void ConnectionGate::readLoop() {
  std::vector<epoll_event> events(256);
  auto last_sweep = Clock::now();
  while (!stopping_.load()) {
    try {
      const int ready = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                                     static_cast<int>(kTick.count()));
      for (int i = 0; i < ready; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == wake_) {
          std::uint64_t count = 0;
          [[maybe_unused]] const ssize_t drained = ::read(wake_, &count, sizeof count);
          continue;
        }
        const auto found = open_.find(fd);
        if (found != open_.end()) receive(*found->second);
      }
      takeHandovers();
      const auto now = Clock::now();
      if (now - last_sweep >= kTick) {
        sweep(now);
        last_sweep = now;
      }
    } catch (...) {
      // Out of memory, most likely: said once, and the loop goes on (the deadlines close what
      // it cannot finish).
      const std::string message = exceptionMessage(std::current_exception());
      if (message != last_report_) std::fprintf(stderr, "streetgan serve: reading requests: %s\n", message.c_str());
      last_report_ = message;
    }
  }
}

void ConnectionGate::receive(Connection& connection) {
  // Never more than one request's worth: the scanner refuses a longer head or body first.
  const std::size_t cap = limits_.head.max_head + limits_.head.max_body;
  char chunk[16384];
  const int fd = connection.fd;
  std::size_t dropped = 0;
  while (true) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      if (connection.phase == Connection::Phase::Closing) {  // dropped, a bounded amount per turn
        dropped += static_cast<std::size_t>(n);
        if (dropped > cap) break;
        continue;
      }
      const auto now = Clock::now();
      if (connection.phase == Connection::Phase::Idle) {
        connection.phase = Connection::Phase::Reading;
        connection.since = now;
      }
      connection.last_byte = now;
      connection.buffer.append(chunk, static_cast<std::size_t>(n));
      if (connection.buffer.size() > cap) break;
      continue;
    }
    if (n == 0) {
      connection.peer_closed = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    forget(fd);  // reset by the client
    return;
  }
  if (connection.phase == Connection::Phase::Closing) {
    if (connection.peer_closed) forget(fd);
    return;
  }
  examine(connection);
}

void ConnectionGate::examine(Connection& connection) {
  if (connection.buffer.empty()) {
    if (connection.peer_closed) forget(connection.fd);
    return;
  }
  if (connection.phase == Connection::Phase::Idle) {  // the next request was already here
    connection.phase = Connection::Phase::Reading;
    connection.since = connection.last_byte = Clock::now();
  }
  const RequestHeadScanner::Verdict verdict = connection.scanner.scan(connection.buffer);
  switch (verdict.state) {
    case RequestHeadScanner::State::Incomplete:
      if (connection.peer_closed) forget(connection.fd);
      return;
    case RequestHeadScanner::State::Refused:
      refuse(connection, verdict.status, verdict.reason);
      return;
    case RequestHeadScanner::State::Complete:
      connection.buffer.erase(0, verdict.request_start);  // the empty lines before it
      connection.request_size = verdict.request_size - verdict.request_start;
      dispatch(connection.fd);
      return;
  }
}

void ConnectionGate::dispatch(int fd) {
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  auto found = open_.find(fd);
  std::unique_ptr<Connection> connection = std::move(found->second);
  open_.erase(found);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.push_back(std::move(connection));
  }
  ready_wake_.notify_one();
}

void ConnectionGate::refuse(Connection& connection, int status, const std::string& reason) {
  const std::string body = reason + "\n";
  const std::string answer = "HTTP/1.1 " + std::to_string(status) + " " + statusText(status) +
                             "\r\nContent-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\n"
                             "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  // A short answer fits the socket's send buffer; if it does not, the client is not reading.
  [[maybe_unused]] const ssize_t sent = ::send(connection.fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(connection.fd, SHUT_WR);
  if (connection.peer_closed) {
    forget(connection.fd);
    return;
  }
  // Read and drop what the client still sends for a moment, so that closing with unread bytes
  // does not reset the connection before the client has read the answer.
  connection.phase = Connection::Phase::Closing;
  connection.since = Clock::now();
  std::string().swap(connection.buffer);
}

void ConnectionGate::sweep(Clock::time_point now) {
  using std::chrono::milliseconds;
  std::vector<int> closing;
  std::vector<std::pair<int, std::string>> late;
  for (auto& [fd, connection] : open_) {
    switch (connection->phase) {
      case Connection::Phase::Idle:
        if (now - connection->since > milliseconds(limits_.idle_ms)) closing.push_back(fd);
        break;
      case Connection::Phase::Reading:
        if (now - connection->since > milliseconds(limits_.request_ms))
          late.emplace_back(fd, "the request took longer than " + std::to_string(limits_.request_ms) + " ms to arrive");
        else if (now - connection->last_byte > milliseconds(limits_.pause_ms))
          late.emplace_back(fd, "the request paused for longer than " + std::to_string(limits_.pause_ms) + " ms");
        break;
      case Connection::Phase::Closing:
        if (now - connection->since > kLinger) closing.push_back(fd);
        break;
    }
  }
  for (const auto& [fd, reason] : late) refuse(*open_.at(fd), 408, reason);
  for (int fd : closing) forget(fd);
}

void ConnectionGate::evictOldest(int how_many) {
  for (int i = 0; i < how_many && !open_.empty(); ++i) {
    auto oldest = open_.begin();
    for (auto it = open_.begin(); it != open_.end(); ++it)
      if (it->second->since < oldest->second->since) oldest = it;
    forget(oldest->first);
  }
}

void ConnectionGate::takeHandovers() {
  std::vector<std::unique_ptr<Connection>> adopted, returned;
  int shed = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    adopted.swap(adopted_);
    returned.swap(returned_);
    shed = shed_;
    shed_ = 0;
  }
  for (auto& connection : returned) {
    Connection& held = *connection;
    const int fd = held.fd;
    open_[fd] = std::move(connection);
    watch(held);
    examine(held);  // a request that came right behind the last one may be whole already
  }
  for (auto& connection : adopted) {
    Connection& held = *connection;
    open_[held.fd] = std::move(connection);
    watch(held);
    if (held.peer_closed) forget(held.fd);
  }
  // Beyond the bound, the connections that have waited longest go first (a new one last).
  evictOldest(std::max(shed, count_.load() - limits_.max_open));
}

void ConnectionGate::workLoop() {
  while (true) {
    std::unique_ptr<Connection> connection;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_wake_.wait(lock, [this] { return stopping_.load() || !ready_.empty(); });
      if (stopping_.load()) return;
      connection = std::move(ready_.front());
      ready_.pop_front();
    }
    ++connection->answered;
    const bool last = connection->peer_closed || connection->answered >= limits_.requests_per_connection;
    bool keep = false;
    try {
      keep = handler_(connection->fd, std::string_view(connection->buffer).substr(0, connection->request_size), last);
    } catch (...) {
      keep = false;  // the handler answers its own failures; anything else ends the connection
    }
    if (!keep || last || stopping_.load()) continue;  // closed as `connection` goes
    connection->buffer.erase(0, connection->request_size);
    connection->request_size = 0;
    connection->scanner.reset();  // keeps its limits
    connection->phase = Connection::Phase::Idle;
    connection->since = connection->last_byte = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      returned_.push_back(std::move(connection));
    }
    wakeReader();
  }
}

}  // namespace streetgan::cli
