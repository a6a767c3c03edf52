#include "core/eval/features_worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace streetgan {

namespace {

// Between fork and exec only async-signal-safe calls: everything is prepared before the fork.
[[noreturn]] void becomeWorker(pid_t parent, int socket, int null_fd, const rlimit& memory, char* const* argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(socket, 0) < 0 || ::dup2(null_fd, 1) < 0 || ::dup2(null_fd, 2) < 0) ::_exit(127);
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  if (::setrlimit(RLIMIT_DATA, &memory) != 0) ::_exit(127);
  ::execv(argv[0], argv);
  ::_exit(127);
}

std::string endingOf(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

}  // namespace

Result<std::unique_ptr<FeaturesWorkerProcess>> FeaturesWorkerProcess::start(const std::vector<std::string>& command,
                                                                             std::int64_t memory_bytes) {
  if (command.empty()) return makeError("no program to run the features network with");
  std::vector<std::string> words = command;
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const rlimit memory{static_cast<rlim_t>(memory_bytes), static_cast<rlim_t>(memory_bytes)};
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return makeError(std::string("cannot make a socket for the features network's process: ") + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = null_fd < 0 ? -1 : ::fork();
  if (pid == 0) becomeWorker(parent, pair[1], null_fd, memory, argv.data());
  const int fork_errno = errno;
  ::close(pair[1]);
  if (null_fd >= 0) ::close(null_fd);
  if (pid < 0) {
    ::close(pair[0]);
    return makeError(std::string("cannot start the features network's process: ") + std::strerror(fork_errno));
  }
  return std::unique_ptr<FeaturesWorkerProcess>(new FeaturesWorkerProcess(pid, pair[0]));
}

FeaturesWorkerProcess::~FeaturesWorkerProcess() {
  ::close(socket_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

std::string FeaturesWorkerProcess::howItEnded() {
  if (pid_ <= 0) return ended_;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    int status = 0;
    const pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_) {
      pid_ = -1;
      ended_ = endingOf(status);
      return ended_;
    }
    if (reaped < 0 && errno != EINTR) return "ended";
    if (std::chrono::steady_clock::now() > give_up) return "is still running";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace streetgan
