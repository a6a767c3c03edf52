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
  return g_stop_requested;
}

}  // namespace streetgan::cli
