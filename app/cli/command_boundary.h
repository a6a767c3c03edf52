#pragma once
// The exception boundary of every `streetgan` command. Core reports recoverable failures as
// Result; what still escapes a command (LibTorch's c10::Error, a CUDA or CPU out-of-memory, OpenCV's
// cv::Exception, std::bad_alloc, any std::exception) ends here as one plain line on stderr naming
// the command and what failed, and exit code 1 (a runtime failure), never as an abort.
#include <functional>
#include <string>

namespace streetgan::cli {

/// Runs `command` and returns its exit code; an exception escaping it is printed as
/// "<program>: <what failed>" and gives kExitFailure.
int runAtBoundary(const std::string& program, const std::function<int()>& command);

}  // namespace streetgan::cli
