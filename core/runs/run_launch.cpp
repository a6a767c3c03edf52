#include "core/runs/run_launch.h"

#include "core/runs/process_identity.h"
#include "core/runs/run_directory.h"
#include "core/runs/run_summary.h"
#include "core/util/atomic_file.h"
#include "core/util/own_folder.h"
#include "core/util/random_bytes.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace streetgan {

namespace fs = std::filesystem;

namespace {

std::string recordFile(const std::string& run_dir, const char* name) {
  return (fs::path(launchRecordDir(run_dir)) / name).string();
}

// A record file's text; empty when it is missing, a link (another run's record), not a regular
// file (a FIFO would block, a device never end) or larger than a record can be.
std::string readSmallFile(const std::string& path) {
  auto text = RegularFile::readAll(path, 4096, /*follow_links=*/false);
  return text ? std::move(*text) : std::string();
}

// The last `limit` bytes of the log at `path`; empty when it is not a regular file.
std::string tailOf(const std::string& path, std::int64_t limit) {
  auto file = RegularFile::open(path);
  if (!file) return {};
  std::string tail(static_cast<std::size_t>(std::min(limit, file->size())), '\0');
  const off_t from = static_cast<off_t>(file->size() - static_cast<std::int64_t>(tail.size()));
  std::size_t done = 0;
  while (done < tail.size()) {
    const ssize_t n = ::pread(file->descriptor(), tail.data() + done, tail.size() - done, from + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  tail.resize(done);
  return tail;
}

// The number a record file holds ("123\n"), or 0 when it holds anything else.
template <class Integer>
Integer parseRecordNumber(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  Integer value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() ? value : Integer(0);
}

bool writeAllToLaunchFile(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, std::size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Runs in the watcher, a forked child of the single-threaded launcher; the training process it
// forks calls only async-signal-safe functions before exec.
[[noreturn]] void runWatcher(int report_fd, const std::string& stderr_path, const std::string& pid_path,
                             const std::string& start_path, const std::string& status_path,
                             const std::vector<char*>& argv, const std::vector<char*>& envp) {
  ::setsid();
  const int null_fd = ::open("/dev/null", O_RDWR);
  const int log_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  std::int64_t failure = 0;
  if (null_fd < 0 || log_fd < 0) failure = -errno;
  int exec_pipe[2] = {-1, -1};
  if (failure == 0 && ::pipe2(exec_pipe, O_CLOEXEC) != 0) failure = -errno;
  pid_t child = -1;
  if (failure == 0) {
    child = ::fork();
    if (child < 0) failure = -errno;
  }
  if (child == 0) {
    // The training process: nothing of the caller's (an SSH channel's pipes) stays open, or the
    // connection could not close while it runs.
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(log_fd, 2);
    for (int fd = 3; fd < 1024; ++fd)
      if (fd != exec_pipe[1]) ::close(fd);
    struct sigaction action{};
    action.sa_handler = SIG_DFL;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::sigaction(sig, &action, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    const int error = errno;
    writeAllToLaunchFile(exec_pipe[1], &error, sizeof error);
    ::_exit(127);
  }
  if (failure == 0) {
    ::close(exec_pipe[1]);
    int exec_error = 0;
    if (readAll(exec_pipe[0], &exec_error, sizeof exec_error)) failure = -exec_error;
    ::close(exec_pipe[0]);
  }
  if (failure == 0) {
    // The start time first, then the pid: whoever finds the pid finds the start time too. The
    // child has not been waited for, so its /proc entry is there even if it already ended.
    // Without /proc there is no start time to record; readers then check the pid alone.
    const auto start_time = processStartTime(child);
    if (start_time && !writeFileAtomically(start_path, std::to_string(*start_time) + "\n")) failure = -EIO;
    // The pid file is written before the launcher hears of success, so a follower never misses it.
    if (failure == 0 && !writeFileAtomically(pid_path, std::to_string(child) + "\n")) failure = -EIO;
    if (failure != 0) ::kill(child, SIGKILL);  // child > 0: fork() succeeded
  }
  const std::int64_t report = failure == 0 ? static_cast<std::int64_t>(child) : failure;
  writeAllToLaunchFile(report_fd, &report, sizeof report);
  ::close(report_fd);
  if (failure != 0) ::_exit(1);
  ::dup2(null_fd, 0);
  ::dup2(null_fd, 1);
  ::dup2(log_fd, 2);
  for (int fd = 3; fd < 1024; ++fd) ::close(fd);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string text = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) + "\n"
                                               : "exit " + std::to_string(WEXITSTATUS(status)) + "\n";
  // Nobody is left to tell when this fails; readers then see a process gone without a status.
  static_cast<void>(writeFileAtomically(status_path, text));
  ::_exit(0);
}

// `text` into `path`, a new file that only its owner can read (never through a link).
Status writePrivateFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return makeError(path + ": cannot create it (" + std::strerror(errno) + ")");
  const bool written = writeAllToLaunchFile(fd, text.data(), text.size());
  if (::close(fd) != 0 || !written) return makeError(path + ": cannot write it");
  return {};
}

}  // namespace

std::string launchRecordDir(const std::string& run_dir) { return RunDirectory(run_dir).launchDir(); }
std::string launchConfigPath(const std::string& run_dir) { return recordFile(run_dir, "config.json"); }

Result<std::int64_t> launchDetachedTraining(const std::string& run_dir, const std::string& program,
                                            const std::vector<std::string>& arguments) {
  const LaunchStatus before = readLaunchStatus(run_dir);
  if (before.running)
    return makeError(run_dir + ": a training process (pid " + std::to_string(before.pid) + ") is still running in this run");
  std::error_code ec;
  // A linked launch/ would have the record written, and removed, in another run's folder.
  if (Status made = makeOwnFolder(launchRecordDir(run_dir)); !made) return makeError(made.error());
  const std::string pid_path = recordFile(run_dir, "pid");
  const std::string start_path = recordFile(run_dir, "start-time");
  const std::string status_path = recordFile(run_dir, "exit-status");
  const std::string id_path = recordFile(run_dir, "launch-id");
  fs::remove(status_path, ec);
  fs::remove(pid_path, ec);
  fs::remove(start_path, ec);
  fs::remove(id_path, ec);
  // The launch id: in the process's environment (which only its owner reads) and in a file only
  // its owner reads; a signal later goes only to a process that carries it (process_identity.h).
  const std::string launch_id = randomHex(16);
  if (Status kept = writePrivateFile(id_path, launch_id + "\n"); !kept) return makeError(kept.error());
  const std::string id_entry = std::string(kLaunchIdVariable) + "=" + launch_id;
  std::vector<std::string> environment{id_entry};
  for (char** entry = environ; *entry; ++entry)
    if (std::string_view(*entry).rfind(std::string(kLaunchIdVariable) + "=", 0) != 0) environment.emplace_back(*entry);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  std::vector<std::string> words{program};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return makeError(std::string("cannot create a pipe: ") + std::strerror(errno));
  const pid_t watcher = ::fork();
  if (watcher < 0) {
    const int error = errno;
    ::close(report[0]);
    ::close(report[1]);
    return makeError(std::string("cannot start a process: ") + std::strerror(error));
  }
  if (watcher == 0) {
    ::close(report[0]);
    runWatcher(report[1], recordFile(run_dir, "stderr.log"), pid_path, start_path, status_path, argv, envp);
  }
  ::close(report[1]);
  std::int64_t pid = 0;
  const bool heard = readAll(report[0], &pid, sizeof pid);
  ::close(report[0]);
  if (!heard) return makeError(run_dir + ": the launcher ended before starting the training process");
  if (pid < 0) return makeError(program + ": cannot start it (" + std::strerror(static_cast<int>(-pid)) + ")");
  return pid;
}

LaunchStatus readLaunchStatus(const std::string& run_dir) {
  LaunchStatus status;
  std::error_code ec;
  const auto events_size = fs::file_size(RunDirectory(run_dir).eventsPath(), ec);
  status.events_bytes = ec ? 0 : static_cast<std::int64_t>(events_size);
  // A linked launch/ holds another run's record, not this run's.
  if (!refuseLinkedFolder(launchRecordDir(run_dir))) return status;
  const std::string pid_text = readSmallFile(recordFile(run_dir, "pid"));
  if (pid_text.empty()) return status;
  status.launched = true;
  // Strictly a number: "4294967295" stays that (not a pid: see process_identity.h), "12abc" is 0.
  status.pid = parseRecordNumber<std::int64_t>(pid_text);
  status.start_time = parseRecordNumber<std::uint64_t>(readSmallFile(recordFile(run_dir, "start-time")));
  status.launch_id = readSmallFile(recordFile(run_dir, "launch-id"));
  while (!status.launch_id.empty() && (status.launch_id.back() == '\n' || status.launch_id.back() == '\r'))
    status.launch_id.pop_back();
  const std::string exit_text = readSmallFile(recordFile(run_dir, "exit-status"));
  int value = 0;
  if (std::sscanf(exit_text.c_str(), "exit %d", &value) == 1) {
    status.ended = true;
    status.exit_code = value;
  } else if (std::sscanf(exit_text.c_str(), "signal %d", &value) == 1) {
    status.ended = true;
    status.signal_number = value;
  }
  status.running = !status.ended &&
                   checkTrainingProcess(status.pid, "streetgan", status.start_time, status.launch_id) == ProcessCheck::Alive;
  status.stderr_tail = tailOf(recordFile(run_dir, "stderr.log"), 4096);
  return status;
}

Status signalLaunchedTraining(const std::string& run_dir, int signal_number) {
  const LaunchStatus status = readLaunchStatus(run_dir);
  if (!status.launched) return makeError(run_dir + ": no training process was launched in this run");
  if (!validProcessId(status.pid)) {
    const std::string what = status.pid != 0 ? "pid " + std::to_string(status.pid) + " is not a process id"
                                             : "it does not hold a process id";
    return makeError(recordFile(run_dir, "pid") + ": " + what + " (allowed: 1 to " +
                     std::to_string(processIdLimit() - 1) + "); nothing was signalled");
  }
  if (status.ended) return makeError(run_dir + ": the training process (pid " + std::to_string(status.pid) + ") is not running");
  // The start time anyone can read; the launch id only the process's owner. A record without one
  // (launched by a streetgan before it, or altered) cannot show which process is the run's.
  if (status.launch_id.empty())
    return makeError(recordFile(run_dir, "launch-id") + ": missing, empty or not a regular file, so the record does not "
                     "show that pid " +
                     std::to_string(status.pid) + " is this run's process (launched by an older streetgan, or the "
                     "record was altered); nothing was signalled");
  // Checked again here, and signalled only when it still is the recorded process.
  if (Status sent = signalTrainingProcess(status.pid, "streetgan", status.start_time, signal_number, status.launch_id); !sent)
    return makeError(run_dir + ": " + sent.error());
  return {};
}

std::string launchStatusJson(const LaunchStatus& s) {
  nlohmann::json out{{"launched", s.launched},
                     {"pid", s.pid},
                     {"running", s.running},
                     {"ended", s.ended},
                     {"events_bytes", s.events_bytes},
                     {"stderr_tail", s.stderr_tail}};
  if (s.ended && s.signal_number != 0) out["signal"] = s.signal_number;
  else if (s.ended) out["exit_code"] = s.exit_code;
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace streetgan
