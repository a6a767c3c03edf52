#pragma once
// EventLog: the writer side of the event protocol of docs/events.md. Each event is a typed RunEvent
// (core/runs/run_event.h), written by runEventJson() as one JSON object on one line with "v": 1,
// "type" and "time" (unix seconds), appended to events.jsonl with a single write() so a reader
// never sees half a line, and echoed to stdout when asked. Failing to write the log is reported by append();
// failing to echo (the reader on stdout went away) only ends the echo, with one line on stderr.
#include "core/runs/run_event.h"
#include "core/util/result.h"

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

  /// Appends `event` with v, type and time (`time_s`, unix seconds; now when not given).
  Status append(const events::RunEvent& event);
  Status append(const events::RunEvent& event, double time_s);

  /// Unix seconds now, as "time" is written.
  static double now();

  static constexpr int kProtocolVersion = 1;

private:
  std::string path_;
  int fd_ = -1;
  bool echo_stdout_ = false;
};

}  // namespace streetgan
