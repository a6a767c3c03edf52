#pragma once
// EventLogTail: what a run's events.jsonl says about how its last process ended, for the processes
// that take over a run another process wrote: the rank launcher (did rank 0 finish the log before
// it died? did the last attempt start training?) and a restarted rank 0 (is this the run its job
// began, and why did the attempt before fail?). Reads the file once through EventStreamReader, so
// a line is bounded by its limit; only a regular file is read (never a FIFO or a device), and a
// missing or unreadable one reads as empty (exists false), never as a failure.
#include <cstdint>
#include <string>

namespace streetgan {

struct EventLogTail {
  bool exists = false;      ///< a regular file that could be opened
  bool finished = false;    ///< its last event is run_finished
  std::string last_error;   ///< the message of the last `error` event after the last run_started
  std::string last_job;     ///< the last run_started's "job" (the launch that wrote it); "" when absent
  std::int64_t last_started_at = -1;  ///< byte offset of the last run_started line; -1: none
};

EventLogTail readEventLogTail(const std::string& path);

}  // namespace streetgan
