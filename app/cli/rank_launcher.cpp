#include "app/cli/rank_launcher.h"

#include "app/cli/command_line.h"
#include "app/cli/stop_signal.h"
#include "core/runs/event_fields.h"
#include "core/runs/event_log.h"
#include "core/runs/event_log_tail.h"
#include "core/distributed/job_token.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

namespace streetgan::cli {
namespace {

namespace run_status = events::status;

using Clock = std::chrono::steady_clock;
constexpr int kGraceSeconds = 10;
constexpr int kStopGraceSeconds = 60;
// A stopped attempt that has not begun training (its ranks load data or wait to join a host that
// never comes) has nothing to save: it is killed sooner, unless it begins training meanwhile.
constexpr int kStopBeforeTrainingGraceSeconds = 5;
// Between a failed attempt and the restart: the ports of the old ranks are let go.
constexpr int kRestartPauseSeconds = 3;

// A port nothing listens on now (the kernel's choice); rank 0 binds it a moment later.
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

// Whether something already listens on `port` here (rank 0's store binds every address). A port
// left in TIME_WAIT by a job that just ended is free: the store reuses it as well.
bool portTaken(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return taken;
}

std::string describeExit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "ended";
}

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;
};

// One attempt: starts this host's ranks and supervises them to their end.
struct AttemptOutcome {
  bool failed = false;
  bool could_not_start = false;  ///< a fork failed: the launcher itself cannot go on
  bool usage_failure = false;    ///< a rank exited 2: its options, config or data are wrong
  std::string first_failure;     ///< "rank 1 of 4 exited with code 1"
  std::string rank0_death;       ///< rank 0 was killed by a signal
};

// In the child of fork(): becomes rank `rank` (this host's `local`-th), this same program with
// torchrun's variables; never returns.
[[noreturn]] void execRank(const RankLaunchOptions& options, int port, int attempt, const std::string& job, int rank,
                           int local, pid_t launcher) {
  const int world = options.nproc * options.nnodes;
  // The rank ends with its launcher: killed with it (the studio's Kill, `remote signal kill`,
  // the OOM killer), the launcher can no longer stop it, and it would train on alone. The
  // parent-death signal survives exec. The launcher may have died before it was set: then
  // our parent is no longer the launcher, and the rank ends here. (The signal is sent when
  // the thread that forked ends: this is the launcher's main thread, which ends with it.)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(1);
  // The rank: this same program, with torchrun's variables.
  ::setenv("RANK", std::to_string(rank).c_str(), 1);
  ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
  ::setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", std::to_string(options.nproc).c_str(), 1);
  ::setenv("GROUP_RANK", std::to_string(options.node_rank).c_str(), 1);
  ::setenv("MASTER_ADDR", options.master_addr.c_str(), 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  ::setenv("STREETGAN_DIST_TIMEOUT", std::to_string(options.timeout_s).c_str(), 1);
  ::setenv("TORCHELASTIC_RESTART_COUNT", std::to_string(attempt).c_str(), 1);
  ::setenv("TORCHELASTIC_MAX_RESTARTS", std::to_string(options.max_restarts).c_str(), 1);
  ::setenv("TORCHELASTIC_RUN_ID", job.c_str(), 1);
  ::setenv(kJobTokenVariable, options.job_token.c_str(), 1);  // the environment: no other user reads it
  ::unsetenv("TORCHELASTIC_USE_AGENT_STORE");
  std::vector<std::string> words{"streetgan", "train"};
  words.insert(words.end(), options.rank_args.begin(), options.rank_args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "streetgan train: cannot start rank %d: %s\n", rank, std::strerror(errno));
  ::_exit(127);
}

// Whether the attempt that began when the log was `log_before` bytes long reached training: this
// launch's run_started was written since.
bool attemptReachedTraining(const EventLogTail& tail, const std::string& job, std::int64_t log_before) {
  return tail.exists && tail.last_job == job && tail.last_started_at >= log_before;
}

// The same, read now from the run's log (node 0 only; another host cannot tell, and is taken to
// train).
bool attemptTrains(const RankLaunchOptions& options, const std::string& job, std::int64_t log_before) {
  return options.events_path.empty() || attemptReachedTraining(readEventLogTail(options.events_path), job, log_before);
}

AttemptOutcome runAttempt(const RankLaunchOptions& options, int port, int attempt, const std::string& job,
                          std::int64_t log_before, const std::atomic<bool>& stop) {
  const std::string program = "streetgan train";
  const int world = options.nproc * options.nnodes;
  const pid_t launcher = ::getpid();
  AttemptOutcome outcome;
  std::vector<Rank> ranks;
  for (int local = 0; local < options.nproc && !stop.load(); ++local) {
    Rank r;
    r.rank = options.node_rank * options.nproc + local;
    const pid_t pid = ::fork();
    if (pid < 0) {
      fail(program, std::string("cannot start rank ") + std::to_string(r.rank) + ": " + std::strerror(errno), kExitFailure);
      for (auto& started : ranks) ::kill(started.pid, SIGKILL);  // each pid > 0: its fork() succeeded
      for (auto& started : ranks) ::waitpid(started.pid, nullptr, 0);
      outcome.failed = outcome.could_not_start = true;
      return outcome;
    }
    if (pid == 0) execRank(options, port, attempt, job, r.rank, local, launcher);
    r.pid = pid;
    r.running = true;
    ranks.push_back(r);
  }

  bool forwarded = false;
  Clock::time_point kill_at = Clock::time_point::max();
  int kill_after_s = 0;             // kill_at is this long after
  bool kill_after_stop = false;     // the stop request (else the first failure)
  Clock::time_point stopped_at;
  for (;;) {
    if (stop.load() && !forwarded) {
      forwarded = true;
      stopped_at = Clock::now();
      for (auto& r : ranks)
        if (r.running) ::kill(r.pid, SIGTERM);
      // A rank still joining the others (they wait up to --dist-timeout for a host that never
      // comes) cannot stop before the join ends: SIGTERM took the whole --dist-timeout, 300 s by
      // default. Whatever has not ended a minute later (time enough to write its last checkpoint)
      // is killed; an attempt that has not begun training, a few seconds later.
      const int stop_grace_s = attemptTrains(options, job, log_before) ? kStopGraceSeconds : kStopBeforeTrainingGraceSeconds;
      if (stopped_at + std::chrono::seconds(stop_grace_s) < kill_at) {
        kill_at = stopped_at + std::chrono::seconds(stop_grace_s);
        kill_after_s = stop_grace_s;
        kill_after_stop = true;
      }
    }
    bool any_running = false;
    for (auto& r : ranks) {
      if (!r.running) continue;
      int status = 0;
      const pid_t done = ::waitpid(r.pid, &status, WNOHANG);
      if (done == r.pid) {
        r.running = false;
        r.status = status;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok) {
          const std::string said = "rank " + std::to_string(r.rank) + " of " + std::to_string(world) + " " + describeExit(status);
          std::fprintf(stderr, "%s: %s\n", program.c_str(), said.c_str());
          if (!outcome.failed) {
            outcome.failed = true;
            outcome.first_failure = said;
            // The others notice at once (its connections closed) and end by themselves after
            // saying why; one that hangs, or is busy outside a collective, is killed after this.
            kill_after_s = std::min(options.timeout_s, kGraceSeconds);
            kill_after_stop = false;
            kill_at = Clock::now() + std::chrono::seconds(kill_after_s);
          }
          if (r.rank == 0 && WIFSIGNALED(status)) outcome.rank0_death = describeExit(status);
          if (WIFEXITED(status) && WEXITSTATUS(status) == kExitUsage) outcome.usage_failure = true;
        }
      } else {
        any_running = true;
      }
    }
    if (!any_running) break;
    if (Clock::now() >= kill_at && kill_after_stop && kill_after_s == kStopBeforeTrainingGraceSeconds &&
        attemptTrains(options, job, log_before)) {
      // It began training after the stop: it gets the minute to write its checkpoint.
      kill_after_s = kStopGraceSeconds;
      kill_at = stopped_at + std::chrono::seconds(kill_after_s);
    }
    if (Clock::now() >= kill_at) {
      for (auto& r : ranks)
        if (r.running) {
          std::fprintf(stderr, "%s: rank %d of %d did not end within %d s of the %s; killing it\n", program.c_str(),
                       r.rank, world, kill_after_s, kill_after_stop ? "stop request" : "failure");
          ::kill(r.pid, SIGKILL);
        }
      kill_at = Clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return outcome;
}

// The launch every attempt of this job belongs to (TORCHELASTIC_RUN_ID): a restarted rank 0
// continues a run only when its log was begun by this launch.
std::string jobName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || !*host) std::strcpy(host, "host");
  std::string name = "streetgan-" + std::string(host) + "-" + std::to_string(::getpid()) + "-" +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                        std::chrono::system_clock::now().time_since_epoch()).count());
  for (char& c : name)
    if (c < 0x21 || c > 0x7e) c = '_';
  return name.substr(0, 256);
}

// Node 0's launcher writes into rank 0's log only what rank 0 could not: why rank 0 died, and the
// end of a run whose last attempt did not finish it.
void noteInLog(const std::string& path, const std::string& error, const std::optional<std::string>& finished) {
  if (auto log = EventLog::open(path, false)) {
    if (!error.empty()) (void)log->append(events::Error{error});
    if (finished) {
      events::RunFinished failed;
      failed.status = run_status::kFailed;
      failed.message = *finished;
      (void)log->append(failed);
    }
  }
}

}  // namespace

int launchRanks(const RankLaunchOptions& options) {
  const std::string program = "streetgan train";
  int port = options.master_port;
  if (port == 0) {
    port = freePort();
    if (port <= 0) return fail(program, std::string("cannot find a free port for the ranks' store: ") + std::strerror(errno), kExitUsage);
  } else if (options.node_rank == 0 && portTaken(port)) {
    return fail(program, "option '--master-port': port " + std::to_string(port) + " is in use on this host (another "
                "job's store, or another program); choose another port", kExitUsage);
  }
  const std::atomic<bool>& stop = installStopHandlers();
  const std::string job = jobName();
  const bool node0 = !options.events_path.empty();
  AttemptOutcome outcome;
  int attempt = 0;
  std::int64_t log_before = 0;  // node 0: the log's size when the attempt began
  for (;; ++attempt) {
    if (node0) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(options.events_path, ec);
      log_before = ec ? 0 : static_cast<std::int64_t>(size);
    }
    outcome = runAttempt(options, port, attempt, job, log_before, stop);
    if (!outcome.failed || outcome.could_not_start || stop.load()) break;
    // The launcher writes only into a log this launch wrote (its job in the last run_started).
    const EventLogTail tail = node0 ? readEventLogTail(options.events_path) : EventLogTail{};
    const bool ours = tail.exists && tail.last_job == job;
    // Rank 0 killed by a signal left no error event: the cause the next attempt's restart event
    // reads, and the reason of run_finished if none follows.
    if (!tail.finished && !outcome.rank0_death.empty() && attemptReachedTraining(tail, job, log_before))
      noteInLog(options.events_path, "rank 0 " + outcome.rank0_death + " before it could finish the run", std::nullopt);
    if (options.max_restarts == 0) break;
    if (outcome.usage_failure) {
      std::fprintf(stderr, "%s: not restarted: a rank could not start with these options, config or data (exit code "
                   "2), and a restart would fail the same way\n", program.c_str());
      break;
    }
    if (ours && tail.finished) {
      std::fprintf(stderr, "%s: the run had finished before %s; not restarted\n", program.c_str(), outcome.first_failure.c_str());
      break;
    }
    if (attempt >= options.max_restarts) {
      std::fprintf(stderr, "%s: giving up after %d restart(s) (--max-restarts %d); the last attempt failed: %s\n",
                   program.c_str(), attempt, options.max_restarts, outcome.first_failure.c_str());
      break;
    }
    // Every host's ranks end when one fails; each host's launcher restarts its own after the
    // same pause, and the new ranks find each other in rank 0's new store (an older store is
    // told apart by its attempt number).
    std::fprintf(stderr, "%s: %s; restarting the ranks from the run's last checkpoint in %d s (restart %d of %d)\n",
                 program.c_str(), outcome.first_failure.c_str(), kRestartPauseSeconds, attempt + 1, options.max_restarts);
    const auto resume_at = Clock::now() + std::chrono::seconds(kRestartPauseSeconds);
    while (Clock::now() < resume_at && !stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (stop.load()) {
      std::fprintf(stderr, "%s: stopped before restart %d; not restarted\n", program.c_str(), attempt + 1);
      break;
    }
  }
  // Rank 0 writes run_finished itself; when it could not (it was killed, or a restart that would
  // have continued the run was stopped or not allowed), the launcher of node 0 finishes the log.
  if (outcome.failed && node0) {
    const EventLogTail tail = readEventLogTail(options.events_path);
    if (tail.exists && tail.last_job == job && !tail.finished) {
      const bool trained = attemptReachedTraining(tail, job, log_before);
      std::string message;
      if (!outcome.rank0_death.empty() && trained) message = "rank 0 " + outcome.rank0_death + " before it could finish the run";
      else if (trained && !tail.last_error.empty()) message = tail.last_error;
      else if (attempt > 0) message = "restart " + std::to_string(attempt) + " of " + std::to_string(options.max_restarts) +
                                      " failed before training started: " + outcome.first_failure +
                                      " (the ranks' reasons are on their standard error)";
      else message = outcome.first_failure;
      const bool said = trained && (!tail.last_error.empty() || !outcome.rank0_death.empty());
      noteInLog(options.events_path, said ? std::string() : message, message);
    }
  }
  return outcome.failed ? (outcome.usage_failure && !stop.load() ? kExitUsage : kExitFailure) : kExitOk;
}

}  // namespace streetgan::cli
