#include "core/runs/process_identity.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <fcntl.h>
#include <string>
#include <vector>
#include <sys/syscall.h>
#include <system_error>
#include <unistd.h>

namespace streetgan {

namespace {

constexpr std::int64_t kLinuxPidLimit = 4194304;  // PID_MAX_LIMIT: the highest pid_max Linux allows

// A /proc file's bytes (generated as they are read: there is no size to ask for first), up to
// about `cap`. Nothing when it cannot be opened or read: a process that ends while its files are
// read fails the read with ESRCH.
std::optional<std::string> readProcFile(const std::string& path, std::size_t cap) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() >= cap) break;
  }
  ::close(fd);
  return text;
}

template <class Integer>
bool parseDecimal(std::string_view text, Integer& value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

struct ProcStat {
  char state = '?';
  std::uint64_t start_time = 0;
};

// /proc/PID/stat is "PID (COMM) STATE PPID ...". COMM may hold spaces and ')', so the fields are
// counted from the last ')': the state is field 3, the start time field 22.
std::optional<ProcStat> readProcStat(std::int64_t pid) {
  const auto text = readProcFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return std::nullopt;
  const std::size_t paren = text->rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  ProcStat stat;
  int field = 2;  // the ')' ends field 2
  std::size_t at = paren + 1;
  while (at < text->size()) {
    at = text->find_first_not_of(" \n", at);
    if (at == std::string::npos) break;
    std::size_t end = text->find_first_of(" \n", at);
    if (end == std::string::npos) end = text->size();
    const std::string_view word(text->data() + at, end - at);
    ++field;
    if (field == 3) stat.state = word.front();
    if (field == 22) {
      if (!parseDecimal(word, stat.start_time)) return std::nullopt;
      return stat;
    }
    at = end;
  }
  return std::nullopt;
}

// Whether process `pid`'s environment (as it was started) holds STREETGAN_LAUNCH_ID=`launch_id`.
bool carriesLaunchId(std::int64_t pid, std::string_view launch_id) {
  const auto environment = readProcFile("/proc/" + std::to_string(pid) + "/environ", std::size_t(1) << 20);
  if (!environment) return false;
  const std::string wanted = std::string(kLaunchIdVariable) + "=" + std::string(launch_id);
  for (std::string_view rest(*environment); !rest.empty();) {
    const auto end = rest.find('\0');
    if (rest.substr(0, end) == wanted) return true;
    if (end == std::string_view::npos) break;
    rest = rest.substr(end + 1);
  }
  return false;
}

// Whether process `pid` holds the file at `path` open for writing: one of /proc/PID/fd/* is that
// file (same device and inode) and /proc/PID/fdinfo/N says it was opened to write. At most
// kMaxDescriptors descriptors are looked at.
bool writesFile(std::int64_t pid, std::string_view path) {
  constexpr int kMaxDescriptors = 1 << 16;
  struct stat wanted {};
  if (::stat(std::string(path).c_str(), &wanted) != 0) return false;
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(fd_dir.c_str()), &::closedir);
  if (!dir) return false;
  int seen = 0;
  for (const dirent* entry = ::readdir(dir.get()); entry && seen < kMaxDescriptors; entry = ::readdir(dir.get()), ++seen) {
    struct stat held {};
    if (entry->d_name[0] == '.' || ::stat((fd_dir + "/" + entry->d_name).c_str(), &held) != 0) continue;
    if (held.st_dev != wanted.st_dev || held.st_ino != wanted.st_ino) continue;
    const auto info = readProcFile("/proc/" + std::to_string(pid) + "/fdinfo/" + entry->d_name, 4096);
    const std::size_t at = info ? info->find("flags:") : std::string::npos;
    if (at == std::string::npos) continue;
    const unsigned long flags = std::strtoul(info->c_str() + at + 6, nullptr, 8);
    if ((flags & O_ACCMODE) != O_RDONLY) return true;
  }
  return false;
}

}  // namespace

std::int64_t processIdLimit() {
  static const std::int64_t limit = [] {
    std::string text = readProcFile("/proc/sys/kernel/pid_max", 64).value_or(std::string());
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    std::int64_t value = 0;
    return parseDecimal(text, value) && value >= 2 && value <= kLinuxPidLimit ? value : kLinuxPidLimit;
  }();
  return limit;
}

bool validProcessId(std::int64_t pid) { return pid >= 1 && pid < processIdLimit(); }

std::optional<std::uint64_t> processStartTime(std::int64_t pid) {
  if (!validProcessId(pid)) return std::nullopt;
  const auto stat = readProcStat(pid);
  if (!stat) return std::nullopt;
  return stat->start_time;
}

ProcessCheck checkTrainingProcess(std::int64_t pid, std::string_view program_name, std::uint64_t start_time,
                                  std::string_view launch_id, std::string_view written_file) {
  // The range check comes first: only a pid in range is ever passed to kill().
  if (!validProcessId(pid)) return ProcessCheck::NotAProcessId;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return ProcessCheck::Gone;
  // No /proc here: the signal check is all there is, unless a launch id must be seen, which
  // cannot be.
  if (::access("/proc/self/stat", R_OK) != 0) return launch_id.empty() ? ProcessCheck::Alive : ProcessCheck::Reused;
  const auto stat = readProcStat(pid);
  // Gone while we looked, or a zombie (ended, not reaped yet): not running.
  if (!stat || stat->state == 'Z' || stat->state == 'X') return ProcessCheck::Gone;
  if (start_time != 0 && stat->start_time != start_time) return ProcessCheck::Reused;
  if (!launch_id.empty() && !carriesLaunchId(pid, launch_id)) return ProcessCheck::Reused;
  if (!written_file.empty() && !writesFile(pid, written_file)) return ProcessCheck::NotTheWriter;
  const auto command_line = readProcFile("/proc/" + std::to_string(pid) + "/cmdline", std::size_t(1) << 20);
  // An empty command line: it ended between the two reads (a zombie has none).
  if (!command_line || command_line->empty()) return ProcessCheck::Gone;
  if (command_line->find(program_name) == std::string::npos) return ProcessCheck::Reused;
  if (start_time == 0 && !program_name.empty()) {
    // No start time was recorded (a run from before they were): the command line is all that
    // tells our process from another, so it must be the training command itself, `<dir>/streetgan
    // train …`, not any process whose arguments merely mention the program (`tail -f
    // streetgan.log`, `streetgan serve`, a process renamed `streetgan-helper`).
    // argv[0] is the program, or argv[1] when an interpreter runs it (a script, as the tests'
    // stand-ins are).
    std::vector<std::string_view> args;
    for (std::string_view line(*command_line); !line.empty() && args.size() < 3;) {
      const auto end = line.find('\0');
      args.push_back(line.substr(0, end));
      line = end == std::string_view::npos ? std::string_view() : line.substr(end + 1);
    }
    const auto baseName = [](std::string_view path) {
      const auto slash = path.find_last_of('/');
      return slash == std::string_view::npos ? path : path.substr(slash + 1);
    };
    bool training = false;
    for (std::size_t i = 0; i + 1 < args.size() && i < 2; ++i)
      if (baseName(args[i]) == program_name && args[i + 1] == "train") training = true;
    if (!training) return ProcessCheck::Reused;
  }
  return ProcessCheck::Alive;
}

Status signalTrainingProcess(std::int64_t pid, std::string_view program_name, std::uint64_t start_time,
                             int signal_number, std::string_view launch_id, std::string_view written_file) {
  const std::string name = "pid " + std::to_string(pid);
  const std::string not_running = "the training process (" + name + ") is not running";
  if (!validProcessId(pid))
    return makeError(name + " is not a process id (allowed: 1 to " + std::to_string(processIdLimit() - 1) +
                     "); nothing was signalled");
  // A pidfd taken before the check names the process that was checked: should the pid be reused
  // right after, the signal cannot reach the newcomer. Without pidfds (an old kernel, a seccomp
  // filter), kill() it is, right after the check.
  int pidfd = -1;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
  pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0 && errno == ESRCH) return makeError(not_running);
#endif
  std::string refusal;
  switch (checkTrainingProcess(pid, program_name, start_time, launch_id, written_file)) {
    case ProcessCheck::NotAProcessId:  // checked above; kept for the switch's completeness
    case ProcessCheck::Gone: refusal = not_running; break;
    case ProcessCheck::Reused:
      refusal = name + " is no longer the run's training process (the pid was reused by another process); "
                       "nothing was signalled";
      break;
    case ProcessCheck::NotTheWriter:
      refusal = name + " does not write " + std::string(written_file) +
                ", so it is not the run's training process; nothing was signalled";
      break;
    case ProcessCheck::Alive: break;
  }
  if (!refusal.empty()) {
    if (pidfd >= 0) ::close(pidfd);
    return makeError(refusal);
  }
  int result = -1;
  int error = 0;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
  if (pidfd >= 0) {
    result = static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, signal_number, nullptr, 0));
    error = errno;
    ::close(pidfd);
  }
#endif
  if (pidfd < 0) {
    // Never kill(0, ...) (our own process group) or kill(-N, ...) (a whole group, or with -1
    // every process of the user), whatever the cast made of the number.
    const pid_t id = static_cast<pid_t>(pid);
    if (id <= 0) return makeError(name + " is not a process id; nothing was signalled");
    result = ::kill(id, signal_number);
    error = errno;
  }
  if (result != 0) {
    if (error == ESRCH) return makeError(not_running);
    return makeError("cannot signal " + name + " (" + std::strerror(error) + ")");
  }
  return {};
}

}  // namespace streetgan
