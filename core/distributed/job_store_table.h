#pragma once
// JobStoreTable: the keys and values of the job store, shared by every connection of
// JobStoreServer, with c10d's semantics (add keeps a decimal number; get and wait block until the
// keys exist) and the protocol's bounds on what the whole store may hold. Thread-safe.
#include "core/distributed/job_store_protocol.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace streetgan {

class JobStoreTable {
public:
  /// The reply to one request; a wait returns at its timeout, or at stop().
  StoreReply apply(const StoreRequest& request);
  /// Ends every wait now and every later one at once.
  void stop();

private:
  StoreReply set(const std::string& key, const std::vector<std::uint8_t>& value);
  StoreReply add(const std::string& key, std::int64_t amount);
  StoreReply compareSet(const StoreRequest& request);
  StoreReply wait(const std::vector<std::string>& keys, std::int64_t timeout_ms);
  bool hasAll(const std::vector<std::string>& keys) const;
  // Whether `key` may hold `value` within the store's bounds; the reason when not.
  std::string refusal(const std::string& key, std::size_t value_size) const;
  void put(const std::string& key, std::vector<std::uint8_t> value);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<std::uint8_t>> entries_;
  std::size_t bytes_ = 0;
  bool stopped_ = false;
};

}  // namespace streetgan
