#include "core/distributed/job_store_server.h"

#include "core/util/exception_message.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace streetgan {
namespace {

constexpr int kMostWarningsNamed = 20;

std::uint32_t bigEndian32(const std::uint8_t* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) | bytes[3];
}

}  // namespace

Result<std::unique_ptr<JobStoreServer>> JobStoreServer::start(JobStoreServerOptions options) {
  auto listener = StoreSocket::listenOn(options.address, options.port);
  if (!listener) return makeError("the job's store " + listener.error());
  std::unique_ptr<JobStoreServer> server(new JobStoreServer(std::move(options), std::move(*listener)));
  if (server->wake_read_ < 0) return makeError(std::string("cannot make a pipe (") + std::strerror(errno) + ")");
  {
    std::lock_guard<std::mutex> lock(server->mutex_);
    server->open_.insert(-1);
  }
  std::thread([raw = server.get()] { raw->acceptConnections(); }).detach();
  return server;
}

JobStoreServer::JobStoreServer(JobStoreServerOptions options, StoreSocket listener)
    : options_(std::move(options)), listener_(std::move(listener)) {
  port_ = listener_.localPort();
  listening_name_ = listener_.localName();
  if (options_.max_connections <= 0) options_.max_connections = 4 * options_.world_size + 16;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) == 0) {
    wake_read_ = fds[0];
    wake_write_ = fds[1];
  }
}

JobStoreServer::~JobStoreServer() {
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  for (int fd : open_)
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  if (wake_write_ >= 0) (void)!::write(wake_write_, "x", 1);
  table_.stop();
  all_done_.wait(lock, [this] { return open_.empty(); });
  lock.unlock();
  if (wake_read_ >= 0) ::close(wake_read_);
  if (wake_write_ >= 0) ::close(wake_write_);
}

void JobStoreServer::acceptConnections() {
  for (;;) {
    auto next = listener_.accept(wake_read_);
    if (!next || !next->has_value()) break;
    StoreSocket connection = std::move(**next);
    const std::string peer = connection.peerName();
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) break;
    if (static_cast<int>(pending_.size()) >= options_.max_pending) {
      ::shutdown(pending_.front(), SHUT_RDWR);  // its thread ends its handshake, and says so
      pending_.pop_front();
    }
    open_.insert(connection.fd());
    pending_.push_back(connection.fd());
    std::thread([this, peer, socket = std::move(connection)]() mutable { serve(std::move(socket), peer); }).detach();
  }
  finished(-1);
}

void JobStoreServer::serve(StoreSocket connection, const std::string& peer) {
  const int fd = connection.fd();
  try {
    auto rank = handshake(connection);
    if (rank && !admitted(fd)) {
      warn("rank " + std::to_string(*rank) + " at " + peer + " was dropped: the job's store already serves " +
           std::to_string(options_.max_connections) + " connections of ranks, its most");
    } else if (!rank) {
      bool stopping = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping = stopping_;
      }
      if (!stopping)
        warn("a connection from " + peer + " to the job's store at " + listening_name_ + " was dropped: " +
             rank.error());
    } else {
      answerRequests(connection, *rank, peer);
    }
  } catch (...) {
    warn("a connection to the job's store failed: " + exceptionMessage(std::current_exception()));
  }
  finished(fd);
}

Result<std::uint32_t> JobStoreServer::handshake(const StoreSocket& connection) {
  const auto deadline = StoreSocket::Clock::now() + options_.handshake_timeout;
  const std::vector<std::uint8_t> nonce = randomBytes(kStoreNonceBytes);
  std::vector<std::uint8_t> hello(kStoreMagic, kStoreMagic + 8);
  hello.insert(hello.end(), nonce.begin(), nonce.end());
  if (Status sent = connection.sendAll(hello.data(), hello.size()); !sent) return makeError(sent.error());
  std::uint8_t answer[kStoreRankHelloBytes];
  if (Status got = connection.receive(answer, sizeof(answer), deadline, wake_read_); !got)
    return makeError(got.error() == "timed out" ? "it did not prove this job's token within " +
                                                      std::to_string(options_.handshake_timeout.count() / 1000) + " s"
                                                : "it did not prove this job's token (" + got.error() + ")");
  if (std::memcmp(answer, kStoreMagic, 8) != 0) return makeError("it does not speak the job store's protocol");
  const std::uint32_t rank = bigEndian32(answer + 8);
  const std::uint8_t* rank_nonce = answer + 12;
  const std::uint8_t* proof = answer + 12 + kStoreNonceBytes;
  const auto refuse = [&connection](const std::string& reason) -> Result<std::uint32_t> {
    (void)connection.sendAll(&kStoreRefused, 1);
    return makeError(reason);
  };
  if (!sameProof(rankProof(options_.token, nonce.data(), rank), proof)) return refuse("it did not prove this job's token");
  if (rank >= static_cast<std::uint32_t>(options_.world_size))
    return refuse("it claimed rank " + std::to_string(rank) + " of a job of " + std::to_string(options_.world_size));
  std::vector<std::uint8_t> verdict{kStoreAccepted};
  const StoreProof mine = serverProof(options_.token, rank_nonce);
  verdict.insert(verdict.end(), mine.begin(), mine.end());
  if (Status sent = connection.sendAll(verdict.data(), verdict.size()); !sent) return makeError(sent.error());
  return rank;
}

void JobStoreServer::answerRequests(const StoreSocket& connection, std::uint32_t rank, const std::string& peer) {
  const std::string who = "rank " + std::to_string(rank) + " at " + peer;
  for (;;) {
    auto frame = connection.receiveFrame(kMaxStoreFrameBytes, std::nullopt, wake_read_);
    if (!frame) {
      if (frame.error().rfind("a message of ", 0) == 0)
        warn(who + " sent the job's store " + frame.error() + "; its connection was dropped");
      return;
    }
    auto request = decodeStoreRequest(frame->data(), frame->size());
    if (!request) {
      warn(who + " sent the job's store " + request.error() + "; its connection was dropped");
      return;
    }
    if (Status sent = connection.sendFrame(encodeStoreReply(table_.apply(*request))); !sent) return;
  }
}

void JobStoreServer::warn(const std::string& text) {
  std::lock_guard<std::mutex> lock(warn_mutex_);
  if (!options_.warn || warned_ > kMostWarningsNamed) return;
  ++warned_;
  options_.warn(warned_ <= kMostWarningsNamed ? text
                                              : "more connections to the job's store were dropped; they are not named");
}

bool JobStoreServer::admitted(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.erase(std::remove(pending_.begin(), pending_.end(), fd), pending_.end());
  if (static_cast<int>(admitted_.size()) >= options_.max_connections) return false;
  admitted_.insert(fd);
  return true;
}

void JobStoreServer::finished(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_.erase(fd);
  pending_.erase(std::remove(pending_.begin(), pending_.end(), fd), pending_.end());
  admitted_.erase(fd);
  if (open_.empty()) all_done_.notify_all();
}

}  // namespace streetgan
