#include "core/runs/event_log.h"

#include "core/runs/event_fields.h"
#include "core/runs/run_event_writer.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan {

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

EventLog::EventLog(EventLog&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), echo_stdout_(other.echo_stdout_) {
  other.fd_ = -1;
}

EventLog& EventLog::operator=(EventLog&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    echo_stdout_ = other.echo_stdout_;
    other.fd_ = -1;
  }
  return *this;
}

Result<EventLog> EventLog::open(const std::string& path, bool echo_stdout) {
  EventLog log;
  log.path_ = path;
  log.echo_stdout_ = echo_stdout;
  // Non-blocking only to open: a FIFO put where the log goes would wait for a reader forever.
  // Never through a link: a linked log would append the run's events to whatever it names.
  log.fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
  if (log.fd_ < 0) {
    if (errno == ENXIO) return makeError(path + ": cannot open the event log (not a regular file: a FIFO)");
    if (errno == ELOOP) return makeError(path + ": cannot open the event log (a symbolic link; a run writes only its own files)");
    return makeError(path + ": cannot open the event log (" + std::strerror(errno) + ")");
  }
  struct stat info {};
  if (::fstat(log.fd_, &info) != 0 || !S_ISREG(info.st_mode))
    return makeError(path + ": cannot open the event log (not a regular file)");
  ::fcntl(log.fd_, F_SETFL, ::fcntl(log.fd_, F_GETFL) & ~O_NONBLOCK);
  return log;
}

double EventLog::now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Status EventLog::append(const events::RunEvent& event) { return append(event, now()); }

Status EventLog::append(const events::RunEvent& typed, double time_s) {
  if (std::holds_alternative<std::monostate>(typed)) return makeError("an event without a type is not written");
  nlohmann::json event = events::runEventJson(typed);
  event[events::field::kVersion] = kProtocolVersion;
  event[events::field::kTime] = time_s;
  // Invalid UTF-8 in a file name must not make the line unreadable: replace it.
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (echo_stdout_) {
    // A reader that went away (a closed studio, `| head`) must not stop training: stop echoing
    // and go on writing events.jsonl. (The CLI ignores SIGPIPE, so this is an EPIPE here.)
    const bool echoed = std::fwrite(line.data(), 1, line.size(), stdout) == line.size() && std::fflush(stdout) == 0;
    if (!echoed) {
      echo_stdout_ = false;
      std::fprintf(stderr, "warning: the events reader on stdout went away (%s); events go on to %s\n",
                   std::strerror(errno), path_.c_str());
    }
  }
  if (fd_ < 0) return makeError("the event log is not open");
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return makeError(path_ + ": cannot append to the event log (" + std::strerror(errno) + ")");
    written += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace streetgan
