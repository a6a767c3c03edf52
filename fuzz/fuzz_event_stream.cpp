// EventStreamReader on an arbitrary stream, fed in chunks whose sizes the input's first byte
// picks, with a small line limit so that overlong lines are reached too; each event is typed as it
// is read. Each typed event is written by the one serializer and read again: what is written
// once must come back the same (write → read → write), or the process aborts. The same stream goes
// through RunHistoryReader, the compare view's reader.
#include "core/runs/event_stream_reader.h"
#include "core/runs/run_event_writer.h"
#include "core/runs/run_history.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

void checkRoundTrip(const std::vector<streetgan::StreamEvent>& events) {
  for (const auto& event : events) {
    const nlohmann::json written = streetgan::events::runEventJson(event.event);
    const auto read = streetgan::events::parseRunEvent(event.type, written);
    if (streetgan::events::runEventJson(read).dump() != written.dump()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  streetgan::EventStreamReader reader(256);
  streetgan::RunHistoryReader history;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!rest.empty()) {
    const std::size_t n = rest.size() < chunk ? rest.size() : chunk;
    checkRoundTrip(reader.feed(rest.substr(0, n)));
    history.feed(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  checkRoundTrip(reader.finish());
  return 0;
}
