#include "core/runs/event_log_tail.h"

#include "core/runs/event_fields.h"
#include "core/runs/event_stream_reader.h"

#include <fstream>
#include <variant>

namespace streetgan {

EventLogTail readEventLogTail(const std::string& path) {
  EventLogTail tail;
  std::ifstream in(path, std::ios::binary);
  if (!in) return tail;
  tail.exists = true;
  EventStreamReader reader;  // its line limit bounds what is kept of a line
  // Only the event types that matter here are parsed; steps, the bulk of a log, are not.
  const std::string started = std::string("\"") + events::type::kRunStarted + "\"",
                    error = std::string("\"") + events::type::kError + "\"",
                    finished = std::string("\"") + events::type::kRunFinished + "\"";
  const auto keep = [&](std::string_view line) {
    if (line.find(started) == std::string_view::npos && line.find(error) == std::string_view::npos &&
        line.find(finished) == std::string_view::npos) {
      if (line.find_first_not_of(" \t\r") != std::string_view::npos) tail.finished = false;
      return;
    }
    const auto event = reader.parse(line);
    if (!event) return;
    tail.finished = std::holds_alternative<events::RunFinished>(event->event);
    if (std::holds_alternative<events::RunStarted>(event->event)) tail.last_error.clear();
    if (const auto* error = std::get_if<events::Error>(&event->event)) tail.last_error = error->message;
  };
  std::string chunk(1 << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    reader.feedLines(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())), keep);
  }
  reader.finishLines(keep);
  return tail;
}

}  // namespace streetgan
