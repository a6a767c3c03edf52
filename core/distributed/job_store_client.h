#pragma once
// JobStoreClient: a rank's connection to its job's store (JobStoreServer), as the c10d::Store that
// Gloo, NCCL and RankGroup's sign-in use. Connecting proves the job's token to the store and has
// the store prove it back (job_store_protocol.h), so a rank never talks to another job's store or
// a stranger's. Requests are sent one at a time; a failure throws std::runtime_error naming the
// store, as c10d's stores throw.
#include "core/distributed/job_store_protocol.h"
#include "core/distributed/store_socket.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace streetgan {

struct JobStoreAddress {
  std::string host;   ///< where rank 0's store listens
  int port = 0;
  std::string token;  ///< the job's token
  std::uint32_t rank = 0;
};

class JobStoreClient : public c10d::Store {
public:
  /// Connects (trying again while refused) and proves the token, within `timeout`.
  static c10::intrusive_ptr<JobStoreClient> connect(const JobStoreAddress& address, std::chrono::milliseconds timeout);

  JobStoreClient(JobStoreAddress address, StoreSocket socket, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                       const std::vector<std::uint8_t>& desired) override;
  std::vector<std::uint8_t> get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  std::int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  /// Another connection to the same store (LibTorch 2.x asks a store for one; 1.13 does not).
  c10::intrusive_ptr<c10d::Store> clone();

private:
  StoreReply call(const StoreRequest& request, std::chrono::milliseconds reply_within);
  std::string name() const;

  JobStoreAddress address_;
  StoreSocket socket_;
  std::mutex mutex_;
};

}  // namespace streetgan
