#include "core/distributed/job_store_client.h"

#include <cstring>
#include <stdexcept>
#include <thread>

namespace streetgan {
namespace {

using Milliseconds = std::chrono::milliseconds;

// What a wait of `timeout` may take at most (c10d's kNoTimeout, 0, waits as long as allowed).
Milliseconds boundedWait(Milliseconds timeout) {
  const Milliseconds most = std::chrono::hours(24 * 7);
  return timeout.count() <= 0 || timeout > most ? most : timeout;
}

StoreRequest requestOf(StoreOp op, std::vector<std::string> keys) {
  StoreRequest request;
  request.op = op;
  request.keys = std::move(keys);
  return request;
}

// The store closed the connection before its greeting: it had too many pending at once (a
// stranger holding connections open pushes the oldest out), or was stopping. Worth another try.
struct GreetingLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void proveToken(const StoreSocket& socket, const JobStoreAddress& address, StoreSocket::Clock::time_point deadline,
                const std::string& where) {
  std::uint8_t hello[kStoreHelloBytes];
  if (Status got = socket.receive(hello, sizeof(hello), deadline); !got)
    throw GreetingLost("the job's store at " + where + " closed the connection before it spoke (" + got.error() + ")");
  if (std::memcmp(hello, kStoreMagic, 8) != 0)
    throw std::runtime_error("the service at " + where + " is not a job store of streetgan (it spoke another protocol)");
  const std::vector<std::uint8_t> nonce = randomBytes(kStoreNonceBytes);
  std::vector<std::uint8_t> answer(kStoreMagic, kStoreMagic + 8);
  for (int shift = 24; shift >= 0; shift -= 8) answer.push_back(static_cast<std::uint8_t>(address.rank >> shift));
  answer.insert(answer.end(), nonce.begin(), nonce.end());
  const StoreProof proof = rankProof(address.token, hello + 8, address.rank);
  answer.insert(answer.end(), proof.begin(), proof.end());
  if (Status sent = socket.sendAll(answer.data(), answer.size()); !sent)
    throw std::runtime_error("the job's store at " + where + ": " + sent.error());
  std::uint8_t verdict = kStoreRefused;
  if (Status got = socket.receive(&verdict, 1, deadline); !got)
    throw GreetingLost("the job's store at " + where + " closed the connection before its verdict (" + got.error() + ")");
  if (verdict != kStoreAccepted)
    throw std::runtime_error("the job's store at " + where + " refused this rank: do the ranks have the same job token?");
  std::uint8_t theirs[kStoreProofBytes];
  if (Status got = socket.receive(theirs, sizeof(theirs), deadline); !got)
    throw std::runtime_error("the job's store at " + where + ": " + got.error());
  if (!sameProof(serverProof(address.token, nonce.data()), theirs))
    throw std::runtime_error("the store at " + where + " did not prove this job's token: it belongs to another job");
}

}  // namespace

c10::intrusive_ptr<JobStoreClient> JobStoreClient::connect(const JobStoreAddress& address, Milliseconds timeout) {
  const std::string where = address.host + ":" + std::to_string(address.port);
  const auto deadline = StoreSocket::Clock::now() + timeout;
  for (;;) {
    auto socket = StoreSocket::connectTo(address.host, address.port, deadline);
    if (!socket) throw std::runtime_error("the job's store: " + socket.error());
    try {
      proveToken(*socket, address, deadline, where);
      return c10::make_intrusive<JobStoreClient>(address, std::move(*socket), timeout);
    } catch (const GreetingLost&) {
      if (StoreSocket::Clock::now() >= deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

JobStoreClient::JobStoreClient(JobStoreAddress address, StoreSocket socket, Milliseconds timeout)
    : c10d::Store(timeout), address_(std::move(address)), socket_(std::move(socket)) {}

std::string JobStoreClient::name() const { return address_.host + ":" + std::to_string(address_.port); }

StoreReply JobStoreClient::call(const StoreRequest& request, Milliseconds reply_within) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto deadline = StoreSocket::Clock::now() + reply_within;
  if (Status sent = socket_.sendFrame(encodeStoreRequest(request)); !sent)
    throw std::runtime_error("the job's store at " + name() + ": " + sent.error());
  auto frame = socket_.receiveFrame(kMaxStoreFrameBytes, deadline);
  if (!frame) throw std::runtime_error("the job's store at " + name() + ": " + frame.error());
  auto reply = decodeStoreReply(frame->data(), frame->size());
  if (!reply) throw std::runtime_error("the job's store at " + name() + " sent " + reply.error());
  if (reply->status == StoreStatus::kRefused)
    throw std::runtime_error("the job's store at " + name() + " refused: " +
                             std::string(reply->value.begin(), reply->value.end()));
  return std::move(*reply);
}

void JobStoreClient::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  StoreRequest request = requestOf(StoreOp::kSet, {key});
  request.value = value;
  call(request, boundedWait(timeout_));
}

std::vector<std::uint8_t> JobStoreClient::compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                                     const std::vector<std::uint8_t>& desired) {
  StoreRequest request = requestOf(StoreOp::kCompareSet, {key});
  request.expected = expected;
  request.value = desired;
  return call(request, boundedWait(timeout_)).value;
}

std::vector<std::uint8_t> JobStoreClient::get(const std::string& key) {
  wait({key}, timeout_);
  StoreReply reply = call(requestOf(StoreOp::kGet, {key}), boundedWait(timeout_));
  if (reply.status == StoreStatus::kMissing)
    throw std::runtime_error("the job's store at " + name() + " no longer holds '" + key + "'");
  return std::move(reply.value);
}

std::int64_t JobStoreClient::add(const std::string& key, std::int64_t value) {
  StoreRequest request = requestOf(StoreOp::kAdd, {key});
  request.number = value;
  return call(request, boundedWait(timeout_)).number;
}

bool JobStoreClient::deleteKey(const std::string& key) {
  return call(requestOf(StoreOp::kDelete, {key}), boundedWait(timeout_)).number != 0;
}

bool JobStoreClient::check(const std::vector<std::string>& keys) {
  return call(requestOf(StoreOp::kCheck, keys), boundedWait(timeout_)).number != 0;
}

std::int64_t JobStoreClient::getNumKeys() { return call(requestOf(StoreOp::kNumKeys, {}), boundedWait(timeout_)).number; }

void JobStoreClient::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void JobStoreClient::wait(const std::vector<std::string>& keys, const Milliseconds& timeout) {
  const Milliseconds bounded = boundedWait(timeout);
  StoreRequest request = requestOf(StoreOp::kWait, keys);
  request.number = bounded.count();
  // The store answers at the timeout; a minute more before its silence counts as lost.
  if (call(request, bounded + std::chrono::minutes(1)).status == StoreStatus::kTimedOut) {
    std::string named;
    for (std::size_t i = 0; i < keys.size() && i < 3; ++i) named += (i ? ", '" : "'") + keys[i] + "'";
    throw std::runtime_error("timed out after " + std::to_string(bounded.count() / 1000) + " s waiting for " + named +
                             " in the job's store at " + name());
  }
}

c10::intrusive_ptr<c10d::Store> JobStoreClient::clone() { return connect(address_, timeout_); }

}  // namespace streetgan
