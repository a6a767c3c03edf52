// `streetgan remote …`: the remote side of a studio run over SSH. The studio sends these over one
// shared SSH connection; each is short except `follow`, which streams the event log.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "core/runs/run_directory.h"
#include "core/runs/run_launch.h"
#include "core/runs/run_relative_path.h"
#include "core/distributed/job_token.h"
#include "core/util/atomic_file.h"
#include "core/util/own_folder.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace streetgan::cli {
namespace {

namespace fs = std::filesystem;

const char* kRemoteUsage =
    "Usage: streetgan remote <subcommand> RUN_DIR ...\n"
    "\n"
    "The remote side of a studio run over SSH (the studio sends these; they are plain commands).\n"
    "\n"
    "  launch RUN_DIR [--job-token-stdin] [--config-json JSON] [TRAIN OPTIONS...]\n"
    "         start `streetgan train --run-dir RUN_DIR` detached (it outlives the connection);\n"
    "         prints its pid. The launch record goes to RUN_DIR/launch/. --job-token-stdin:\n"
    "         the job's token (a run on several hosts) is the first line of standard input\n"
    "  follow RUN_DIR [--offset BYTES]\n"
    "         write RUN_DIR/events.jsonl from byte BYTES to stdout, following it until the\n"
    "         launched process has ended and every byte is written\n"
    "  status RUN_DIR\n"
    "         one JSON line: pid, running, exit_code or signal, events_bytes, stderr_tail\n"
    "  signal RUN_DIR stop|kill\n"
    "         stop: finish the step, save a checkpoint, exit (SIGINT); kill: SIGKILL\n"
    "  get RUN_DIR PATH...\n"
    "         for each PATH (inside the run directory): a line \"size N\" and the file's N\n"
    "         bytes, or a line \"error MESSAGE\"\n";

// The first line of standard input (at most a job token's length), checked.
Result<std::string> jobTokenFromStandardInput() {
  std::string line;
  for (int c; line.size() <= kMaxJobTokenBytes && (c = std::getchar()) != EOF && c != '\n';) line.push_back(static_cast<char>(c));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return checkJobToken(line, "standard input (--job-token-stdin)");
}

int launch(const Args& args) {
  const std::string program = "streetgan remote launch";
  if (args.empty()) return fail(program, "missing RUN_DIR", kExitUsage);
  std::error_code ec;
  const std::string run_dir = fs::absolute(args[0], ec).lexically_normal().string();
  Args train_args{"train", "--run-dir", run_dir};
  std::size_t i = 1;
  std::string config_json;
  // launch's own options, in either order, before train's.
  for (bool token_read = false; i < args.size();) {
    if (args[i] == "--job-token-stdin" && !token_read) {
      // The token of a job on several hosts reaches the ranks through the environment, never a
      // command line another user could read.
      auto token = jobTokenFromStandardInput();
      if (!token) return fail(program, token.error(), kExitUsage);
      ::setenv(kJobTokenVariable, token->c_str(), 1);
      token_read = true;
      ++i;
    } else if (args[i] == "--config-json" && config_json.empty()) {
      if (i + 1 >= args.size()) return fail(program, "option '--config-json' needs a value", kExitUsage);
      config_json = args[i + 1];
      i += 2;
    } else {
      break;
    }
  }
  train_args.insert(train_args.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (!config_json.empty()) {
    if (!nlohmann::json::accept(config_json))
      return fail(program, "option '--config-json': the value is not valid JSON", kExitUsage);
    if (Status made = makeOwnFolder(launchRecordDir(run_dir)); !made) return fail(program, made.error(), kExitFailure);
    const std::string config_path = launchConfigPath(run_dir);
    if (auto written = writeFileAtomically(config_path, config_json); !written)
      return fail(program, written.error(), kExitFailure);
    train_args.push_back("--config");
    train_args.push_back(config_path);
  }
  const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return fail(program, "cannot find this program's own path (/proc/self/exe): " + ec.message(), kExitFailure);
  auto pid = launchDetachedTraining(run_dir, self, train_args);
  if (!pid) return fail(program, pid.error(), kExitFailure);
  std::printf("%lld\n", static_cast<long long>(*pid));
  return kExitOk;
}

// Writes what `fd` holds from its position on; false when stdout is gone.
bool copyAvailable(int fd, std::int64_t& written) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (std::fwrite(buffer, 1, static_cast<std::size_t>(n), stdout) != static_cast<std::size_t>(n) ||
        std::fflush(stdout) != 0)
      return false;
    written += n;
  }
}

int follow(const Args& args) {
  CommandLine line("remote follow", "RUN_DIR [--offset BYTES]",
                   "Writes the run's events.jsonl from byte BYTES on, following it until the\n"
                   "launched training process has ended and the whole log is written.",
                   {{"--offset", "BYTES", "where to start (default 0)"},
                    {"--poll-ms", "MS", "how often to look for more (default 100)"}});
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.positionals().size() != 1) return fail(line.program(), "expects one RUN_DIR", kExitUsage);
  auto offset = line.integer("--offset", 0, 0, INT64_MAX);
  if (!offset) return fail(line.program(), offset.error(), kExitUsage);
  auto poll_ms = line.integer("--poll-ms", 100, 1, 10000);
  if (!poll_ms) return fail(line.program(), poll_ms.error(), kExitUsage);
  const std::string run_dir = line.positionals().front();
  const std::string events = RunDirectory(run_dir).eventsPath();
  if (!fs::is_directory(run_dir)) return fail(line.program(), run_dir + ": no such run directory", kExitFailure);

  const pid_t parent = ::getppid();
  const auto pause = std::chrono::milliseconds(*poll_ms);
  std::optional<RegularFile> log;
  std::int64_t position = *offset;
  for (;;) {
    if (!log) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(events, ec))) {
        // Only a regular file is followed: a FIFO would block, a device (a link to /dev/zero)
        // would stream without end.
        auto opened = RegularFile::open(events);
        if (!opened) return fail(line.program(), opened.error(), kExitFailure);
        if (opened->size() < position)
          return fail(line.program(), events + ": offset " + std::to_string(position) + " is past its end (" +
                      std::to_string(opened->size()) + " bytes): the log was replaced", kExitFailure);
        ::lseek(opened->descriptor(), position, SEEK_SET);
        log = std::move(*opened);
      }
    }
    // Status first, then the read: a process seen ended has written its last event already.
    const LaunchStatus status = readLaunchStatus(run_dir);
    if (log && !copyAvailable(log->descriptor(), position)) return kExitFailure;  // the reader is gone
    if (!status.launched || !status.running) return kExitOk;
    // Our SSH session is gone (its process was replaced as our parent): nobody reads any more.
    if (::getppid() != parent) return kExitFailure;
    std::this_thread::sleep_for(pause);
  }
}

int status(const Args& args) {
  if (args.size() != 1) return fail("streetgan remote status", "expects one RUN_DIR", kExitUsage);
  const LaunchStatus s = readLaunchStatus(args[0]);
  std::printf("%s\n", launchStatusJson(s).c_str());
  return fs::is_directory(args[0]) ? kExitOk : fail("streetgan remote status", args[0] + ": no such run directory", kExitFailure);
}

int signalRun(const Args& args) {
  const std::string program = "streetgan remote signal";
  if (args.size() != 2 || (args[1] != "stop" && args[1] != "kill"))
    return fail(program, "expects RUN_DIR and stop or kill", kExitUsage);
  auto sent = signalLaunchedTraining(args[0], args[1] == "stop" ? SIGINT : SIGKILL);
  if (!sent) return fail(program, sent.error(), kExitFailure);
  return kExitOk;
}

// One record per path: "size N\n" and the N bytes, or "error MESSAGE\n".
int get(const Args& args) {
  const std::string program = "streetgan remote get";
  if (args.size() < 2) return fail(program, "expects RUN_DIR and at least one PATH", kExitUsage);
  bool all_sent = true;
  for (std::size_t i = 1; i < args.size(); ++i) {
    auto path = resolveInsideRunDirectory(args[0], args[i]);
    // A FIFO would block the open, a device stream without end: regular files only.
    auto file = path ? RegularFile::open(*path) : Result<RegularFile>(makeError(path.error()));
    if (!file) {
      std::printf("error %s\n", file.error().c_str());
      all_sent = false;
      continue;
    }
    std::printf("size %lld\n", static_cast<long long>(file->size()));
    // Exactly the size announced, even if the file grows meanwhile.
    std::int64_t left = file->size();
    char buffer[1 << 16];
    while (left > 0) {
      const ssize_t n =
          ::read(file->descriptor(), buffer, static_cast<std::size_t>(std::min<std::int64_t>(left, sizeof buffer)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (std::fwrite(buffer, 1, static_cast<std::size_t>(n), stdout) != static_cast<std::size_t>(n)) break;
      left -= n;
    }
    if (left > 0) return fail(program, *path + ": the file shrank while it was sent", kExitFailure);
  }
  return std::fflush(stdout) == 0 && all_sent ? kExitOk : kExitFailure;
}

}  // namespace

int runRemote(const Args& args) {
  // --help anywhere, before anything acts: shell completion asks `remote launch --help`, which
  // would otherwise take "--help" for the run folder and start a training there.
  const bool help = std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
  if (args.empty() || help) {
    std::fputs(kRemoteUsage, args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const Args rest(args.begin() + 1, args.end());
  // The run folder comes first and is never an option ("--help=1" once became a run folder).
  if (!rest.empty() && !rest[0].empty() && rest[0][0] == '-')
    return fail("streetgan remote " + args[0], "the run folder '" + rest[0] + "' cannot start with '-'", kExitUsage);
  if (args[0] == "launch") return launch(rest);
  if (args[0] == "follow") return follow(rest);
  if (args[0] == "status") return status(rest);
  if (args[0] == "signal") return signalRun(rest);
  if (args[0] == "get") return get(rest);
  return fail("streetgan remote", "unknown subcommand '" + args[0] + "'; allowed: launch, follow, status, signal, get", kExitUsage);
}

}  // namespace streetgan::cli
