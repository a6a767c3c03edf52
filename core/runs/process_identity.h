#pragma once
// Checks made before signalling a process that a file names — a run's launch record or the pid
// in its events.jsonl. Those files can be stale, edited, or come from another host, so a pid read
// from them is never trusted as it is:
//   - it must be a pid this system can have: 1 ≤ pid < /proc/sys/kernel/pid_max. A value outside
//     that range, cast to pid_t, can become 0 or -1 — and kill(0, sig) signals our own process
//     group, kill(-1, sig) every process of the user;
//   - the process must be alive, and its command line must name the program (a pid reused by
//     another program does not count);
//   - when the run recorded its process's start time (field 22 of /proc/PID/stat, clock ticks
//     after boot), the process must have that start time: a pid reused by another `streetgan`
//     is not the run's.
//   - when the launch gave the process a launch id (STREETGAN_LAUNCH_ID in its environment, a
//     random value kept in a file only its owner reads), /proc/PID/environ must hold it: the
//     start time alone is readable by anyone, so a crafted record could name another of the
//     user's training processes with the right start time, never with its launch id.
//   - when the caller names the file the run's process writes (a followed run's events.jsonl,
//     which the trainer holds open for its whole run), the process must hold that very file
//     (device and inode) open for writing: a log copied or crafted to name another of the user's
//     training processes names one that writes another log.
// Runs written before the start time was recorded carry none (0): for them only the range, the
// process's existence and its command line are checked. Nothing here throws.
#include "core/util/result.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace streetgan {

/// The largest pid this system hands out plus one: /proc/sys/kernel/pid_max, or 4194304 (Linux's
/// highest pid_max) when it cannot be read.
std::int64_t processIdLimit();

/// Whether `pid` is one a process can have here: 1 ≤ pid < processIdLimit().
bool validProcessId(std::int64_t pid);

/// The start time of process `pid` (field 22 of /proc/PID/stat), or nothing when the pid is not
/// valid, there is no such process, or /proc cannot tell.
std::optional<std::uint64_t> processStartTime(std::int64_t pid);

enum class ProcessCheck {
  NotAProcessId,  ///< outside 1 ≤ pid < processIdLimit()
  Gone,           ///< no such process (or only a zombie of it)
  Reused,         ///< a process has the pid, but another program or another start time
  NotTheWriter,   ///< the process does not hold the named file open for writing
  Alive,          ///< the recorded process, alive
};

/// The environment variable that carries a detached training process's launch id.
inline constexpr char kLaunchIdVariable[] = "STREETGAN_LAUNCH_ID";

/// Looks at process `pid` as described above; `start_time` 0 means none was recorded, an empty
/// `launch_id` none given, an empty `written_file` none named.
ProcessCheck checkTrainingProcess(std::int64_t pid, std::string_view program_name, std::uint64_t start_time,
                                  std::string_view launch_id = {}, std::string_view written_file = {});

/// Sends `signal_number` to `pid` only when checkTrainingProcess() says it is the recorded process
/// (through a pidfd where the kernel has them, so the process checked is the one signalled).
/// Otherwise an Error saying plainly why nothing was signalled.
Status signalTrainingProcess(std::int64_t pid, std::string_view program_name, std::uint64_t start_time,
                             int signal_number, std::string_view launch_id = {}, std::string_view written_file = {});

}  // namespace streetgan
