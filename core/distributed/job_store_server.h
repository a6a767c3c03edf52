#pragma once
// JobStoreServer: the store where a distributed job's ranks meet, run by rank 0 in place of
// c10d's TCPStore (which listens on every interface, reads any length it is sent, and lets anyone
// who connects read and write). It listens on one address only (the one --master-addr names:
// 127.0.0.1 for a job on one host), accepts a connection only after it proved it knows the job's
// token (job_store_protocol.h; within `handshake_timeout`, on a thread of its own, so a slow
// stranger holds up nobody), drops it otherwise with one warning naming its address, and reads
// each message only up to the protocol's bounds. Stopping (the destructor) ends every connection.
#include "core/distributed/job_store_table.h"
#include "core/distributed/store_socket.h"
#include "core/util/result.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace streetgan {

struct JobStoreServerOptions {
  std::string address = "127.0.0.1";  ///< the one address it listens on
  int port = 0;                       ///< 0: a free port
  std::string token;                  ///< what every rank proves it knows
  int world_size = 1;                 ///< ranks 0 to world_size - 1 may connect
  std::chrono::milliseconds handshake_timeout{10000};  ///< to prove the token, from connecting
  int max_connections = 0;            ///< of ranks, at once; 0: 4 per rank and 16 more
  /// Connections still proving the token, at once; past it the oldest is dropped (a stranger who
  /// holds many open cannot keep the ranks out: they connect again, and each new one pushes the
  /// oldest out).
  int max_pending = 64;
  /// One line per connection dropped (the first 20 are named); called from the server's threads.
  std::function<void(const std::string&)> warn;
};

class JobStoreServer {
public:
  /// Listens, and serves on threads of its own until destroyed; an Error naming the address
  /// when it cannot listen there.
  static Result<std::unique_ptr<JobStoreServer>> start(JobStoreServerOptions options);
  ~JobStoreServer();
  JobStoreServer(const JobStoreServer&) = delete;
  JobStoreServer& operator=(const JobStoreServer&) = delete;

  int port() const { return port_; }
  /// "ADDRESS:PORT" it listens on.
  const std::string& listeningName() const { return listening_name_; }

private:
  JobStoreServer(JobStoreServerOptions options, StoreSocket listener);
  void acceptConnections();
  // `peer`: its address, taken when it was accepted (a stranger may be gone by the warning).
  void serve(StoreSocket connection, const std::string& peer);
  // The rank the connection proved to be, or a reason to drop it.
  Result<std::uint32_t> handshake(const StoreSocket& connection);
  void answerRequests(const StoreSocket& connection, std::uint32_t rank, const std::string& peer);
  void warn(const std::string& text);
  // Whether a connection that proved the token may stay (within max_connections); no longer pending.
  bool admitted(int fd);
  void finished(int fd);

  JobStoreServerOptions options_;
  StoreSocket listener_;
  int port_ = 0;
  std::string listening_name_;
  int wake_read_ = -1, wake_write_ = -1;
  JobStoreTable table_;
  std::mutex mutex_;
  std::condition_variable all_done_;
  std::set<int> open_;  // connections being served, and the accept thread (-1)
  std::deque<int> pending_;  // connections still in their handshake, oldest first
  std::set<int> admitted_;   // connections that proved the token
  bool stopping_ = false;
  std::mutex warn_mutex_;  // warnings are told one at a time, from any thread
  int warned_ = 0;
};

}  // namespace streetgan
