// EventStreamReader on an arbitrary stream, fed in chunks whose sizes the input's first byte
// picks, with a small line limit so that overlong lines are reached too.
#include "core/runs/event_stream_reader.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  streetgan::EventStreamReader reader(256);
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!rest.empty()) {
    const std::size_t n = rest.size() < chunk ? rest.size() : chunk;
    (void)reader.feed(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  (void)reader.finish();
  return 0;
}
