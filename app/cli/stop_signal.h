#pragma once
// SIGINT/SIGTERM (and SIGHUP, unless it is ignored, as under nohup) as a flag that long commands
// poll (train, import, serve, cache build), so they can finish cleanly: save a checkpoint, or
// remove an unfinished file.
#include <atomic>

namespace streetgan::cli {

/// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& installStopHandlers();

}  // namespace streetgan::cli
