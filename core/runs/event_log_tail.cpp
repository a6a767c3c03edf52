#include "core/runs/event_log_tail.h"

#include "core/runs/event_fields.h"
#include "core/runs/event_stream_reader.h"
#include "core/util/json_value.h"
#include "core/util/regular_file.h"

#include <unistd.h>

#include <cerrno>
#include <variant>

namespace streetgan {

EventLogTail readEventLogTail(const std::string& path) {
  EventLogTail tail;
  auto file = RegularFile::open(path);
  if (!file) return tail;
  tail.exists = true;
  EventStreamReader reader;  // its line limit bounds what is kept of a line
  // Only the event types that matter here are parsed; steps, the bulk of a log, are not.
  const std::string started = std::string("\"") + events::type::kRunStarted + "\"",
                    error = std::string("\"") + events::type::kError + "\"",
                    finished = std::string("\"") + events::type::kRunFinished + "\"";
  // Where the line passed on began: a whole line is counted before it is passed on (its newline
  // included), a last line without one after.
  bool finishing = false;
  const auto keep = [&](std::string_view line) {
    const auto complete = static_cast<std::int64_t>(reader.completeBytes());
    const std::int64_t at = finishing ? complete : complete - static_cast<std::int64_t>(line.size()) - 1;
    if (line.find(started) == std::string_view::npos && line.find(error) == std::string_view::npos &&
        line.find(finished) == std::string_view::npos) {
      if (line.find_first_not_of(" \t\r") != std::string_view::npos) tail.finished = false;
      return;
    }
    const auto event = reader.parse(line);
    if (!event) return;
    tail.finished = std::holds_alternative<events::RunFinished>(event->event);
    if (std::holds_alternative<events::RunStarted>(event->event)) {
      tail.last_error.clear();
      tail.last_job = jsonString(event->body, events::field::kJob);
      tail.last_started_at = at;
    }
    if (const auto* failed = std::get_if<events::Error>(&event->event)) tail.last_error = failed->message;
  };
  std::string chunk(1 << 16, '\0');
  for (;;) {
    const ssize_t n = ::read(file->descriptor(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reader.feedLines(std::string_view(chunk.data(), static_cast<std::size_t>(n)), keep);
  }
  finishing = true;
  reader.finishLines(keep);
  return tail;
}

}  // namespace streetgan
