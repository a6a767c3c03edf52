#include "core/distributed/job_store_protocol.h"

#include "core/util/sha256.h"


namespace streetgan {
namespace {

void putU32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

void putI64(std::vector<std::uint8_t>& out, std::int64_t value) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(bits >> shift));
}

void putBytes(std::vector<std::uint8_t>& out, const void* data, std::size_t size) {
  putU32(out, static_cast<std::uint32_t>(size));
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), bytes, bytes + size);
}

// Reads a frame's body front to back; every read is checked against what is left first.
class BodyReader {
public:
  BodyReader(const std::uint8_t* data, std::size_t size) : data_(data), left_(size) {}

  bool u8(std::uint8_t& value) {
    if (left_ < 1) return false;
    value = *data_;
    advance(1);
    return true;
  }
  bool u32(std::uint32_t& value) {
    if (left_ < 4) return false;
    value = 0;
    for (int i = 0; i < 4; ++i) value = (value << 8) | data_[i];
    advance(4);
    return true;
  }
  bool i64(std::int64_t& value) {
    if (left_ < 8) return false;
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | data_[i];
    value = static_cast<std::int64_t>(bits);
    advance(8);
    return true;
  }
  bool bytes(std::vector<std::uint8_t>& value, std::size_t most) {
    std::uint32_t size = 0;
    if (!u32(size) || size > most || size > left_) return false;
    value.assign(data_, data_ + size);
    advance(size);
    return true;
  }
  bool text(std::string& value, std::size_t most) {
    std::uint32_t size = 0;
    if (!u32(size) || size > most || size > left_) return false;
    value.assign(reinterpret_cast<const char*>(data_), size);
    advance(size);
    return true;
  }
  bool atEnd() const { return left_ == 0; }

private:
  void advance(std::size_t count) {
    data_ += count;
    left_ -= count;
  }
  const std::uint8_t* data_;
  std::size_t left_;
};

bool takesManyKeys(StoreOp op) { return op == StoreOp::kCheck || op == StoreOp::kWait; }

bool readKeys(BodyReader& body, StoreRequest& request) {
  std::uint32_t count = 1;
  if (takesManyKeys(request.op) && (!body.u32(count) || count < 1 || count > kMaxStoreKeysPerRequest)) return false;
  if (request.op == StoreOp::kNumKeys) count = 0;
  request.keys.resize(count);
  for (auto& key : request.keys)
    if (!body.text(key, kMaxStoreKeyBytes)) return false;
  return true;
}

}  // namespace

std::vector<std::uint8_t> encodeStoreRequest(const StoreRequest& request) {
  std::vector<std::uint8_t> out;
  out.push_back(static_cast<std::uint8_t>(request.op));
  if (takesManyKeys(request.op)) putU32(out, static_cast<std::uint32_t>(request.keys.size()));
  for (const auto& key : request.keys) putBytes(out, key.data(), key.size());
  switch (request.op) {
    case StoreOp::kSet: putBytes(out, request.value.data(), request.value.size()); break;
    case StoreOp::kCompareSet:
      putBytes(out, request.expected.data(), request.expected.size());
      putBytes(out, request.value.data(), request.value.size());
      break;
    case StoreOp::kAdd:
    case StoreOp::kWait: putI64(out, request.number); break;
    default: break;
  }
  return out;
}

Result<StoreRequest> decodeStoreRequest(const std::uint8_t* data, std::size_t size) {
  BodyReader body(data, size);
  StoreRequest request;
  std::uint8_t op = 0;
  if (!body.u8(op) || op < static_cast<std::uint8_t>(StoreOp::kSet) || op > static_cast<std::uint8_t>(StoreOp::kCompareSet))
    return makeError("a store request of an unknown kind (" + std::to_string(op) + ")");
  request.op = static_cast<StoreOp>(op);
  bool ok = readKeys(body, request);
  if (ok && request.op == StoreOp::kSet) ok = body.bytes(request.value, kMaxStoreValueBytes);
  if (ok && request.op == StoreOp::kCompareSet)
    ok = body.bytes(request.expected, kMaxStoreValueBytes) && body.bytes(request.value, kMaxStoreValueBytes);
  if (ok && (request.op == StoreOp::kAdd || request.op == StoreOp::kWait)) ok = body.i64(request.number);
  if (!ok || !body.atEnd())
    return makeError("a store request of kind " + std::to_string(op) + " whose lengths do not fit its " +
                     std::to_string(size) + " bytes or pass the store's bounds");
  return request;
}

std::vector<std::uint8_t> encodeStoreReply(const StoreReply& reply) {
  std::vector<std::uint8_t> out;
  out.push_back(static_cast<std::uint8_t>(reply.status));
  putBytes(out, reply.value.data(), reply.value.size());
  putI64(out, reply.number);
  return out;
}

Result<StoreReply> decodeStoreReply(const std::uint8_t* data, std::size_t size) {
  BodyReader body(data, size);
  StoreReply reply;
  std::uint8_t status = 0;
  if (!body.u8(status) || status > static_cast<std::uint8_t>(StoreStatus::kRefused) ||
      !body.bytes(reply.value, kMaxStoreValueBytes) || !body.i64(reply.number) || !body.atEnd())
    return makeError("a store reply that does not follow the protocol (" + std::to_string(size) + " bytes)");
  reply.status = static_cast<StoreStatus>(status);
  return reply;
}

StoreProof rankProof(const std::string& token, const std::uint8_t* server_nonce, std::uint32_t rank) {
  std::string message = "streetgan store: rank ";
  message.append(reinterpret_cast<const char*>(server_nonce), kStoreNonceBytes);
  for (int shift = 24; shift >= 0; shift -= 8) message.push_back(static_cast<char>(rank >> shift));
  return Sha256::hmac(token, message);
}

StoreProof serverProof(const std::string& token, const std::uint8_t* rank_nonce) {
  std::string message = "streetgan store: server ";
  message.append(reinterpret_cast<const char*>(rank_nonce), kStoreNonceBytes);
  return Sha256::hmac(token, message);
}

bool sameProof(const StoreProof& a, const std::uint8_t* b) {
  std::uint8_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differ |= static_cast<std::uint8_t>(a[i] ^ b[i]);
  return differ == 0;
}

}  // namespace streetgan
