#include "app/cli/command_boundary.h"

#include "app/cli/command_line.h"
#include "core/util/exception_message.h"

#include <cstdio>
#include <exception>

namespace streetgan::cli {

int runAtBoundary(const std::string& program, const std::function<int()>& command) {
  try {
    return command();
  } catch (...) {
    std::fflush(stdout);
    try {
      return fail(program, exceptionMessage(std::current_exception()), kExitFailure);
    } catch (...) {  // no memory left even for the message
      std::fputs("streetgan: out of memory\n", stderr);
      return kExitFailure;
    }
  }
}

}  // namespace streetgan::cli
