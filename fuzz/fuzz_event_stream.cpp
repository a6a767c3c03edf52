// EventStreamReader on an arbitrary stream, fed in chunks whose sizes the input's first byte
// picks, with a small line limit so that overlong lines are reached too; each event is typed as it
// is read. The same stream goes through RunHistoryReader, the compare view's reader.
#include "core/runs/event_stream_reader.h"
#include "core/runs/run_history.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  streetgan::EventStreamReader reader(256);
  streetgan::RunHistoryReader history;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!rest.empty()) {
    const std::size_t n = rest.size() < chunk ? rest.size() : chunk;
    (void)reader.feed(rest.substr(0, n));
    history.feed(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  (void)reader.finish();
  return 0;
}
