#pragma once
// The job store's protocol: what a rank and rank 0's store (JobStoreServer, JobStoreClient) say to
// each other, and every bound on it, in one place. A connection opens with a handshake in which
// each side proves it knows the job's token (HMAC-SHA-256 over the other side's random nonce; the
// token itself never travels); then each request is one frame (a 4-byte big-endian length, then
// the body) answered by one frame. Decoding checks every length against the frame and the bounds
// below before anything is allocated: the server reads frames from whoever connects.
#include "core/util/random_bytes.h"
#include "core/util/result.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

/// The first 8 bytes each side sends: protocol and version.
inline constexpr char kStoreMagic[9] = "SGSTORE1";
inline constexpr std::size_t kStoreNonceBytes = 32;
inline constexpr std::size_t kStoreProofBytes = 32;
/// The server's hello: magic and its nonce.
inline constexpr std::size_t kStoreHelloBytes = 8 + kStoreNonceBytes;
/// A rank's answer: magic, its rank (4 bytes), its nonce, its proof.
inline constexpr std::size_t kStoreRankHelloBytes = 8 + 4 + kStoreNonceBytes + kStoreProofBytes;
/// The store's verdict on it, one byte: kStoreAccepted (then the store's own proof) or
/// kStoreRefused (then the connection ends). A connection that ends without a verdict was pushed
/// out before it was heard, and the rank tries again.
inline constexpr std::uint8_t kStoreAccepted = 1;
inline constexpr std::uint8_t kStoreRefused = 0;

inline constexpr std::size_t kMaxStoreKeyBytes = 1024;
inline constexpr std::size_t kMaxStoreValueBytes = 512 * 1024;
inline constexpr std::size_t kMaxStoreKeysPerRequest = 256;
/// A frame's body, either way: two values and the keys of one request fit.
inline constexpr std::size_t kMaxStoreFrameBytes = 2 * 1024 * 1024;
/// What the whole store holds: keys and values together, and how many keys.
inline constexpr std::size_t kMaxStoreBytes = 64 * 1024 * 1024;
inline constexpr std::size_t kMaxStoreEntries = 65536;

enum class StoreOp : std::uint8_t { kSet = 1, kGet, kAdd, kCheck, kWait, kDelete, kNumKeys, kCompareSet };

/// One request: `keys` holds one key but for check and wait (1 to kMaxStoreKeysPerRequest).
struct StoreRequest {
  StoreOp op = StoreOp::kGet;
  std::vector<std::string> keys;
  std::vector<std::uint8_t> value;     ///< set: the value; compare-set: the value wanted
  std::vector<std::uint8_t> expected;  ///< compare-set: the value expected
  std::int64_t number = 0;             ///< add: the amount; wait: the timeout in milliseconds
};

enum class StoreStatus : std::uint8_t { kOk = 0, kMissing = 1, kTimedOut = 2, kRefused = 3 };

/// One reply: `value` for get and compare-set, `number` for add, check (0 or 1), delete (0 or 1)
/// and the key count; `value` holds the reason when refused.
struct StoreReply {
  StoreStatus status = StoreStatus::kOk;
  std::vector<std::uint8_t> value;
  std::int64_t number = 0;
};

std::vector<std::uint8_t> encodeStoreRequest(const StoreRequest& request);
/// A request from a frame's body, or an Error saying what is wrong with it.
Result<StoreRequest> decodeStoreRequest(const std::uint8_t* data, std::size_t size);
std::vector<std::uint8_t> encodeStoreReply(const StoreReply& reply);
Result<StoreReply> decodeStoreReply(const std::uint8_t* data, std::size_t size);

using StoreProof = std::array<std::uint8_t, kStoreProofBytes>;
/// A rank's proof that it knows `token`: over the server's nonce and the rank.
StoreProof rankProof(const std::string& token, const std::uint8_t* server_nonce, std::uint32_t rank);
/// The server's proof that it knows `token`: over the rank's nonce.
StoreProof serverProof(const std::string& token, const std::uint8_t* rank_nonce);
/// Whether two proofs are equal, in time that does not depend on where they differ.
bool sameProof(const StoreProof& a, const std::uint8_t* b);

}  // namespace streetgan
