#include "core/util/plain_text.h"

#include <algorithm>
#include <cstdint>

namespace streetgan {
namespace {

// The length of the valid UTF-8 character at the start of `text` (shortest form, no surrogate,
// at most U+10FFFF) and its code point; 0 when it is not one.
std::size_t utf8Character(std::string_view text, std::uint32_t& code) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char first = byte(0);
  std::size_t length = first < 0x80 ? 1 : (first >> 5) == 0x6 ? 2 : (first >> 4) == 0xe ? 3 : (first >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || length > text.size()) return 0;
  code = length == 1 ? first : first & (0x7f >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3f);
  }
  static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

bool isControl(std::uint32_t code) { return code < 0x20 || (code >= 0x7f && code < 0xa0); }

}  // namespace

std::string plainText(std::string_view bytes, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(bytes.size(), max_bytes));
  while (!bytes.empty()) {
    std::uint32_t code = 0;
    const std::size_t length = utf8Character(bytes, code);
    const bool keep = length > 0 && !isControl(code);
    const std::size_t adds = keep ? length : 1;
    if (out.size() + adds > max_bytes) return out + "...";
    if (keep) out.append(bytes.substr(0, length));
    else out.push_back(code == '\t' || code == '\n' || code == '\r' ? ' ' : '?');
    bytes.remove_prefix(length > 0 ? length : 1);
  }
  return out;
}

}  // namespace streetgan
