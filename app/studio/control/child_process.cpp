#include "app/studio/control/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace streetgan::studio {

ChildProcess::ChildProcess(QObject* parent) : QObject(parent) {
  exit_poll_.setInterval(50);
  connect(&exit_poll_, &QTimer::timeout, this, &ChildProcess::pollExit);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    signalGroup(SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  closePipes();
}

Status ChildProcess::start(const QString& program, const QStringList& arguments) {
  if (pid_ > 0) return failure("a process is already running");
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return failure(QString("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int code = errno;
    ::close(out[0]);
    ::close(out[1]);
    return failure(QString("cannot create a pipe: ") + std::strerror(code));
  }
  // Standard input: the bytes given, through a pipe that holds them all (4096 bytes fit any pipe).
  int in[2] = {-1, -1};
  if (!standard_input_.isEmpty() && ::pipe2(in, O_CLOEXEC) != 0) {
    const int code = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return failure(QString("cannot create a pipe: ") + std::strerror(code));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in[0] >= 0) posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  else posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t no_signals, defaults;
  sigemptyset(&no_signals);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  // Its own session: a Ctrl-C in the terminal that started the studio is not the run's.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> words{program.toStdString()};
  for (const QString& argument : arguments) words.push_back(argument.toStdString());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int code = ::posix_spawnp(&pid, words.front().c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(out[1]);
  ::close(err[1]);
  if (in[0] >= 0) {
    ::close(in[0]);
    if (code == 0) (void)!::write(in[1], standard_input_.constData(), static_cast<std::size_t>(standard_input_.size()));
    ::close(in[1]);
  }
  if (code != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return failure("cannot start " + program + ": " + std::strerror(code));
  }
  pid_ = pid;
  out_fd_ = out[0];
  err_fd_ = err[0];
  ::fcntl(out_fd_, F_SETFL, ::fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(err_fd_, F_SETFL, ::fcntl(err_fd_, F_GETFL) | O_NONBLOCK);
  out_notifier_ = std::make_unique<QSocketNotifier>(out_fd_, QSocketNotifier::Read);
  err_notifier_ = std::make_unique<QSocketNotifier>(err_fd_, QSocketNotifier::Read);
  connect(out_notifier_.get(), &QSocketNotifier::activated, this, [this] { readAvailable(out_fd_, out_notifier_, true); });
  connect(err_notifier_.get(), &QSocketNotifier::activated, this, [this] { readAvailable(err_fd_, err_notifier_, false); });
  exit_poll_.start();
  return {};
}

QString ChildProcess::failureReason(const QByteArray& standard_error, int exit_code) {
  const QString last_line = QString::fromUtf8(standard_error).trimmed().section('\n', -1);
  return last_line.isEmpty() ? QString("exit code %1").arg(exit_code) : last_line;
}

bool ChildProcess::sendSignal(int signal_number) {
  return pid_ > 0 && ::kill(pid_, signal_number) == 0;
}

bool ChildProcess::signalGroup(int signal_number) {
  // Its group is its pid (POSIX_SPAWN_SETSID). pid_ stays > 0 until the child is reaped, so the
  // group cannot have been handed to another process meanwhile; and pid_ > 1 keeps this from
  // ever becoming kill(-1, ...), every process of the user.
  if (pid_ <= 1) return false;
  if (::kill(-pid_, signal_number) == 0) return true;
  return ::kill(pid_, signal_number) == 0;  // not a group leader after all (never expected)
}

void ChildProcess::detach() {
  exit_poll_.stop();
  closePipes();
  pid_ = -1;  // no longer ours to kill; init reaps it once the studio has exited
}

bool ChildProcess::readAvailable(int& fd, std::unique_ptr<QSocketNotifier>& notifier, bool is_stdout) {
  char buffer[65536];
  // At most 1 MiB per wake-up, so a child that floods its pipe cannot stall the event loop.
  for (int round = 0; round < 16; ++round) {
    if (fd < 0) return false;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      const QByteArray bytes(buffer, static_cast<int>(n));
      if (is_stdout) emit standardOutput(bytes);
      else emit standardError(bytes);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    notifier.reset();  // end of file (or an error): nothing more will come
    ::close(fd);
    fd = -1;
    return false;
  }
  return true;  // stopped at the cap: more may be waiting
}

void ChildProcess::drain(int& fd, bool is_stdout) {
  std::unique_ptr<QSocketNotifier>& notifier = is_stdout ? out_notifier_ : err_notifier_;
  while (readAvailable(fd, notifier, is_stdout)) {
  }
}

void ChildProcess::pollExit() {
  if (pid_ <= 0) return;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == 0) return;
  exit_poll_.stop();
  // Deliver what the child wrote before it ended, then say it ended.
  drain(out_fd_, true);
  drain(err_fd_, false);
  closePipes();
  pid_ = -1;
  if (done < 0) {
    emit finished(-1, 0);
  } else if (WIFSIGNALED(status)) {
    emit finished(-1, WTERMSIG(status));
  } else {
    emit finished(WEXITSTATUS(status), 0);
  }
}

void ChildProcess::closePipes() {
  out_notifier_.reset();
  err_notifier_.reset();
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
}

}  // namespace streetgan::studio
