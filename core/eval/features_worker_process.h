#pragma once
// FeaturesWorkerProcess: a features worker (FeaturesWorker) started for NetworkFeatures, and the
// end of the socket pair that talks to it. The process gets the other end as its standard input,
// /dev/null as its standard output and error (a network's text never reaches a terminal), no other
// descriptor of ours, at most `memory_bytes` of data (RLIMIT_DATA: what a network's tensors
// take), and is killed when this process ends. Destroying the object kills it (SIGKILL) and reaps it.
#include "core/util/result.h"

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace streetgan {

class FeaturesWorkerProcess {
public:
  /// Starts `command`: the program's path (also its argv[0]), then its words.
  static Result<std::unique_ptr<FeaturesWorkerProcess>> start(const std::vector<std::string>& command,
                                                              std::int64_t memory_bytes);
  ~FeaturesWorkerProcess();
  FeaturesWorkerProcess(const FeaturesWorkerProcess&) = delete;
  FeaturesWorkerProcess& operator=(const FeaturesWorkerProcess&) = delete;

  /// Our end of the socket pair.
  int socket() const { return socket_; }
  pid_t pid() const { return pid_; }
  /// How the process ended, once its end of the socket closed ("exited with status 1", "was
  /// killed by signal 11 (Segmentation fault)"), waiting up to 2 s for it; "is still running" else.
  std::string howItEnded();

private:
  FeaturesWorkerProcess(pid_t pid, int socket) : pid_(pid), socket_(socket) {}

  pid_t pid_;
  int socket_;
  std::string ended_;
};

}  // namespace streetgan
