#include "app/cli/stop_signal.h"

#include <csignal>

namespace streetgan::cli {
namespace {

std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void requestStop(int) { g_stop_requested.store(true); }

}  // namespace

const std::atomic<bool>& installStopHandlers() {
  struct sigaction action {};
  action.sa_handler = requestStop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed terminal (SIGHUP) ends the command as cleanly, unless it was started to outlive its
  // terminal (nohup, or a launcher that ignores SIGHUP): an ignored SIGHUP stays ignored.
  struct sigaction hangup {};
  if (sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) sigaction(SIGHUP, &action, nullptr);
  return g_stop_requested;
}

}  // namespace streetgan::cli
