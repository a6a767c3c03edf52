#pragma once
// A path that came from outside (a remote host's event, a fetch request) resolved inside one run
// directory and nowhere else. Refused: empty paths, absolute paths, any ".." component, control
// characters; and, when the file exists, one whose real path (symlinks followed) leaves the run
// directory. Errors name the path.
#include "core/util/result.h"

#include <string>

namespace streetgan {

/// `run_dir`/`relative`, or an Error saying why `relative` is not a path inside the run.
Result<std::string> resolveInsideRunDirectory(const std::string& run_dir, const std::string& relative);

}  // namespace streetgan
