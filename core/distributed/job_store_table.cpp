#include "core/distributed/job_store_table.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace streetgan {
namespace {

StoreReply refused(const std::string& reason) {
  StoreReply reply;
  reply.status = StoreStatus::kRefused;
  reply.value.assign(reason.begin(), reason.end());
  return reply;
}

StoreReply withValue(const std::vector<std::uint8_t>& value) {
  StoreReply reply;
  reply.value = value;
  return reply;
}

StoreReply withNumber(std::int64_t number) {
  StoreReply reply;
  reply.number = number;
  return reply;
}

}  // namespace

StoreReply JobStoreTable::apply(const StoreRequest& request) {
  if (request.op == StoreOp::kWait) return wait(request.keys, request.number);
  if (request.op == StoreOp::kSet) return set(request.keys.front(), request.value);
  if (request.op == StoreOp::kAdd) return add(request.keys.front(), request.number);
  if (request.op == StoreOp::kCompareSet) return compareSet(request);
  std::lock_guard<std::mutex> lock(mutex_);
  switch (request.op) {
    case StoreOp::kGet: {
      const auto found = entries_.find(request.keys.front());
      if (found == entries_.end()) {
        StoreReply missing;
        missing.status = StoreStatus::kMissing;
        return missing;
      }
      return withValue(found->second);
    }
    case StoreOp::kCheck: return withNumber(hasAll(request.keys) ? 1 : 0);
    case StoreOp::kDelete: {
      const auto found = entries_.find(request.keys.front());
      if (found == entries_.end()) return withNumber(0);
      bytes_ -= found->first.size() + found->second.size();
      entries_.erase(found);
      return withNumber(1);
    }
    case StoreOp::kNumKeys: return withNumber(static_cast<std::int64_t>(entries_.size()));
    default: return refused("a request of an unknown kind");
  }
}

void JobStoreTable::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  changed_.notify_all();
}

StoreReply JobStoreTable::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const std::string reason = refusal(key, value.size()); !reason.empty()) return refused(reason);
  put(key, value);
  return {};
}

StoreReply JobStoreTable::add(const std::string& key, std::int64_t amount) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::int64_t current = 0;
  if (const auto found = entries_.find(key); found != entries_.end()) {
    const char* begin = reinterpret_cast<const char*>(found->second.data());
    const auto parsed = std::from_chars(begin, begin + found->second.size(), current);
    if (parsed.ec != std::errc() || parsed.ptr != begin + found->second.size())
      return refused("add to key '" + key + "', which does not hold a number");
  }
  if ((amount > 0 && current > std::numeric_limits<std::int64_t>::max() - amount) ||
      (amount < 0 && current < std::numeric_limits<std::int64_t>::min() - amount))
    return refused("add to key '" + key + "' would overflow");
  const std::string text = std::to_string(current + amount);
  if (const std::string reason = refusal(key, text.size()); !reason.empty()) return refused(reason);
  put(key, std::vector<std::uint8_t>(text.begin(), text.end()));
  return withNumber(current + amount);
}

// As c10d's TCPStore: a missing key is set when `expected` is empty; otherwise the value is
// replaced only when it equals `expected`. The reply holds the value afterwards (or `expected`
// for a missing key that was not set).
StoreReply JobStoreTable::compareSet(const StoreRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string& key = request.keys.front();
  const auto found = entries_.find(key);
  if (found == entries_.end() && !request.expected.empty()) return withValue(request.expected);
  if (found != entries_.end() && found->second != request.expected) return withValue(found->second);
  if (const std::string reason = refusal(key, request.value.size()); !reason.empty()) return refused(reason);
  put(key, request.value);
  return withValue(request.value);
}

StoreReply JobStoreTable::wait(const std::vector<std::string>& keys, std::int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::clamp<std::int64_t>(timeout_ms, 0, 7LL * 24 * 3600 * 1000));
  const bool ready = changed_.wait_until(lock, deadline, [&] { return stopped_ || hasAll(keys); });
  if (ready && !stopped_) return {};
  StoreReply reply;
  reply.status = StoreStatus::kTimedOut;
  return reply;
}

bool JobStoreTable::hasAll(const std::vector<std::string>& keys) const {
  for (const auto& key : keys)
    if (entries_.find(key) == entries_.end()) return false;
  return true;
}

std::string JobStoreTable::refusal(const std::string& key, std::size_t value_size) const {
  const auto found = entries_.find(key);
  const std::size_t freed = found == entries_.end() ? 0 : found->first.size() + found->second.size();
  if (found == entries_.end() && entries_.size() >= kMaxStoreEntries)
    return "the store holds " + std::to_string(kMaxStoreEntries) + " keys, its most";
  if (bytes_ - freed + key.size() + value_size > kMaxStoreBytes)
    return "the store would hold more than " + std::to_string(kMaxStoreBytes) + " bytes";
  return {};
}

void JobStoreTable::put(const std::string& key, std::vector<std::uint8_t> value) {
  if (const auto found = entries_.find(key); found != entries_.end()) bytes_ -= found->first.size() + found->second.size();
  bytes_ += key.size() + value.size();
  entries_[key] = std::move(value);
  changed_.notify_all();
}

}  // namespace streetgan
