#include "app/cli/rank_launcher.h"

#include "app/cli/command_line.h"
#include "app/cli/stop_signal.h"
#include "core/runs/event_fields.h"
#include "core/runs/event_log.h"
#include "core/runs/event_stream_reader.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

namespace streetgan::cli {
namespace {

namespace field = events::field;
namespace event_type = events::type;
namespace run_status = events::status;

using Clock = std::chrono::steady_clock;
constexpr int kGraceSeconds = 10;
constexpr int kStopGraceSeconds = 60;

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

std::string describeExit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "ended";
}

// Whether the last line of events.jsonl is a run_finished event.
bool logFinished(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EventStreamReader reader;  // its line limit bounds what is kept of a line
  std::string last;
  const auto keep = [&last](std::string_view line) {
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) last.assign(line);
  };
  std::string chunk(1 << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    reader.feedLines(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())), keep);
  }
  reader.finishLines(keep);
  const auto event = reader.parse(last);
  return event && std::holds_alternative<events::RunFinished>(event->event);
}

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;
};

}  // namespace

int launchRanks(const RankLaunchOptions& options) {
  const std::string program = "streetgan train";
  int port = options.master_port;
  if (port == 0) {
    port = freePort();
    if (port <= 0) return fail(program, std::string("cannot find a free port for the ranks' store: ") + std::strerror(errno), kExitUsage);
  }
  const int world = options.nproc * options.nnodes;
  const std::atomic<bool>& stop = installStopHandlers();
  const pid_t launcher = ::getpid();
  std::vector<Rank> ranks;
  for (int local = 0; local < options.nproc && !stop.load(); ++local) {
    Rank r;
    r.rank = options.node_rank * options.nproc + local;
    const pid_t pid = ::fork();
    if (pid < 0) {
      fail(program, std::string("cannot start rank ") + std::to_string(r.rank) + ": " + std::strerror(errno), kExitFailure);
      for (auto& started : ranks) ::kill(started.pid, SIGKILL);  // each pid > 0: its fork() succeeded
      for (auto& started : ranks) ::waitpid(started.pid, nullptr, 0);
      return kExitFailure;
    }
    if (pid == 0) {
      // The rank ends with its launcher: killed with it (the studio's Kill, `remote signal kill`,
      // the OOM killer), the launcher can no longer stop it, and it would train on alone. The
      // parent-death signal survives exec. The launcher may have died before it was set: then
      // our parent is no longer the launcher, and the rank ends here. (The signal is sent when
      // the thread that forked ends: this is the launcher's main thread, which ends with it.)
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) ::_exit(1);
      // The rank: this same program, with torchrun's variables.
      ::setenv("RANK", std::to_string(r.rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(options.nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", options.master_addr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("STREETGAN_DIST_TIMEOUT", std::to_string(options.timeout_s).c_str(), 1);
      ::unsetenv("TORCHELASTIC_USE_AGENT_STORE");
      std::vector<std::string> words{"streetgan", "train"};
      words.insert(words.end(), options.rank_args.begin(), options.rank_args.end());
      std::vector<char*> argv;
      for (auto& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      ::execv("/proc/self/exe", argv.data());
      std::fprintf(stderr, "%s: cannot start rank %d: %s\n", program.c_str(), r.rank, std::strerror(errno));
      ::_exit(127);
    }
    r.pid = pid;
    r.running = true;
    ranks.push_back(r);
  }

  bool forwarded = false;
  bool failed = false;
  Clock::time_point kill_at = Clock::time_point::max();
  std::string rank0_death;
  for (;;) {
    if (stop.load() && !forwarded) {
      forwarded = true;
      for (auto& r : ranks)
        if (r.running) ::kill(r.pid, SIGTERM);
      // A rank still joining the others (they wait up to --dist-timeout for a host that never
      // comes) cannot stop before the join ends: SIGTERM took the whole --dist-timeout, 300 s by
      // default. Whatever has not ended a minute later (time enough to write its last checkpoint)
      // is killed.
      kill_at = std::min(kill_at, Clock::now() + std::chrono::seconds(kStopGraceSeconds));
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
          std::fprintf(stderr, "%s: rank %d of %d %s\n", program.c_str(), r.rank, world, describeExit(status).c_str());
          if (!failed) {
            failed = true;
            // The others notice at once (its connections closed) and end by themselves after
            // saying why; one that hangs, or is busy outside a collective, is killed after this.
            kill_at = Clock::now() + std::chrono::seconds(std::min(options.timeout_s, kGraceSeconds));
          }
          if (r.rank == 0 && WIFSIGNALED(status)) rank0_death = describeExit(status);
        }
      } else {
        any_running = true;
      }
    }
    if (!any_running) break;
    if (Clock::now() >= kill_at) {
      for (auto& r : ranks)
        if (r.running) {
          std::fprintf(stderr, "%s: rank %d of %d did not end within %d s of the %s; killing it\n", program.c_str(),
                       r.rank, world, failed ? std::min(options.timeout_s, kGraceSeconds) : kStopGraceSeconds,
                       failed ? "failure" : "stop request");
          ::kill(r.pid, SIGKILL);
        }
      kill_at = Clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!rank0_death.empty() && !options.events_path.empty() && ::access(options.events_path.c_str(), F_OK) == 0 &&
      !logFinished(options.events_path)) {
    const std::string message = "rank 0 " + rank0_death + " before it could finish the run";
    if (auto log = EventLog::open(options.events_path, false)) {
      (void)log->emit(event_type::kError, {{field::kMessage, message}});
      (void)log->emit(event_type::kRunFinished, {{field::kStatus, run_status::kFailed}, {field::kMessage, message}});
    }
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace streetgan::cli
