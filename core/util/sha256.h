#pragma once
// Sha256: the SHA-256 digest (FIPS 180-4) of bytes or of a file, as 64 lowercase hex digits.
// Used to name exactly which feature network a quality figure was computed with. A file is read
// in 1 MiB pieces (any size, bounded memory); a file that cannot be read is an Error naming it.
// HMAC-SHA-256 (RFC 2104) proves a distributed job's token without sending it.
#include "core/util/result.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace streetgan {

class Sha256 {
public:
  Sha256();
  /// Adds `size` bytes at `data` to the message.
  void update(const void* data, std::size_t size);
  /// The digest of everything added, as 32 bytes; the object is spent afterwards.
  std::array<std::uint8_t, 32> digest();
  /// The digest of everything added, as hex; the object is spent afterwards.
  std::string hexDigest();

  static std::string ofBytes(const std::string& bytes);
  static Result<std::string> ofFile(const std::string& path);
  /// HMAC-SHA-256 of `message` under `key`.
  static std::array<std::uint8_t, 32> hmac(const std::string& key, const std::string& message);

private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

}  // namespace streetgan
