#pragma once
// EventLog: the writer side of the event protocol of docs/events.md. Each event is one JSON object on one line with "v": 1, "type" and
// "time" (unix seconds), appended to events.jsonl with a single write() so a reader never sees
// half a line, and echoed to stdout when asked. Failing to write the log is reported by emit();
// failing to echo (the reader on stdout went away) only ends the echo, with one line on stderr.
#include "core/util/result.h"

#include <nlohmann/json.hpp>

#include <string>

namespace streetgan {

class EventLog {
public:
  EventLog() = default;
  ~EventLog();
  EventLog(EventLog&& other) noexcept;
  EventLog& operator=(EventLog&& other) noexcept;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  /// Opens `path` for appending (creating it). `echo_stdout` also prints every line to stdout.
  static Result<EventLog> open(const std::string& path, bool echo_stdout);

  /// Appends an event of `type` with `fields` (an object) plus v, type and time.
  Status emit(const std::string& type, nlohmann::json fields = nlohmann::json::object());

  static constexpr int kProtocolVersion = 1;

private:
  std::string path_;
  int fd_ = -1;
  bool echo_stdout_ = false;
};

}  // namespace streetgan
