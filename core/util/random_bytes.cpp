#include "core/util/random_bytes.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <sys/random.h>

namespace streetgan {

std::vector<std::uint8_t> randomBytes(std::size_t count) {
  std::vector<std::uint8_t> bytes(count);
  std::size_t got = 0;
  while (got < count) {
    const ssize_t n = ::getrandom(bytes.data() + got, count - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  return bytes;
}

std::string randomHex(std::size_t count) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (std::uint8_t byte : randomBytes(count)) {
    hex += digits[byte >> 4];
    hex += digits[byte & 0xf];
  }
  return hex;
}

}  // namespace streetgan
