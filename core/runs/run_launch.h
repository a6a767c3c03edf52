#pragma once
// A training process started detached from whoever asked for it — the remote side of a studio run
// over SSH: it must outlive the SSH connection and the studio. launchDetachedTraining() starts
// `streetgan train --run-dir R ...` in a session of its own with stdin and stdout on /dev/null and
// stderr appended to R/launch/stderr.log; a small watcher process waits for it and writes its
// exit status. The launch record lives in R/launch/:
//   pid          the training process's pid (written before launch returns)
//   start-time   its start time (field 22 of /proc/PID/stat), written just before pid, so a pid
//                reused by another process is never taken for it; records from before it was
//                kept have none, and for them only the pid's range and process are checked
//   launch-id    a random id (mode 0600) the process also carries in its environment
//                (STREETGAN_LAUNCH_ID): only a process that carries it is signalled
//   exit-status  "exit N" or "signal N", written atomically when the process has ended
//   stderr.log   what the process wrote to stderr
//   config.json  the config the studio sent, when it sent one
// readLaunchStatus() reads that record back; signalLaunchedTraining() signals the process only
// while it is the one the record names (a valid pid, the recorded start time, a command line
// naming streetgan: see core/runs/process_identity.h) and has not ended. Failures come back as an
// Error naming the file or the reason; nothing here throws.
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct LaunchStatus {
  bool launched = false;      ///< R/launch/pid exists
  std::int64_t pid = 0;       ///< as recorded (0 when the file does not hold a number); not yet checked
  std::uint64_t start_time = 0;  ///< as recorded in R/launch/start-time; 0: none recorded
  std::string launch_id;      ///< as recorded in R/launch/launch-id; empty: none
  bool running = false;       ///< the process is alive and has not ended
  bool ended = false;         ///< exit-status was written
  int exit_code = -1;         ///< when ended by exit
  int signal_number = 0;      ///< when ended by a signal
  std::int64_t events_bytes = 0;  ///< size of R/events.jsonl now
  std::string stderr_tail;    ///< the last 4 KiB of stderr.log
};

/// The folder of the launch record: R/launch.
std::string launchRecordDir(const std::string& run_dir);
/// R/launch/config.json: the config the studio sent with the launch.
std::string launchConfigPath(const std::string& run_dir);

/// Starts `program` (absolute path) with `arguments` (argv[1...]) detached, records the launch in
/// `run_dir`/launch and returns the pid. Refuses when the record names a process still running.
Result<std::int64_t> launchDetachedTraining(const std::string& run_dir, const std::string& program,
                                            const std::vector<std::string>& arguments);

LaunchStatus readLaunchStatus(const std::string& run_dir);

/// The one line of JSON `streetgan remote status` prints (docs/remote.md): launched, pid, running,
/// ended, events_bytes, stderr_tail, and signal or exit_code once ended. Invalid UTF-8 in the
/// stderr tail is replaced, never an exception.
std::string launchStatusJson(const LaunchStatus& status);

/// Sends `signal_number` to the recorded process; an Error when it is not running, when the record
/// does not hold a valid pid, or when the pid now belongs to another process (then nothing is sent).
Status signalLaunchedTraining(const std::string& run_dir, int signal_number);

}  // namespace streetgan
