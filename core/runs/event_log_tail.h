#pragma once
// EventLogTail: what the end of a run's events.jsonl says, for the processes that take over a run
// another process wrote: the rank launcher (did rank 0 finish the log before it died?) and a
// restarted rank 0 (why did the attempt before it fail?). Reads the whole file once through
// EventStreamReader, so a line is bounded by its limit; a missing or unreadable file reads as
// empty (nothing finished, no error), never as a failure.
#include <string>

namespace streetgan {

struct EventLogTail {
  bool exists = false;      ///< the file could be opened
  bool finished = false;    ///< its last event is run_finished
  std::string last_error;   ///< the message of the last `error` event after the last run_started
};

EventLogTail readEventLogTail(const std::string& path);

}  // namespace streetgan
