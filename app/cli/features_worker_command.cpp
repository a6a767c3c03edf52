// `streetgan features-worker`: the process in which `metrics --features` runs a TorchScript
// network (core/eval/features_worker.h), started by that command with a socket as its standard
// input; not a command to run by hand, and not listed in `streetgan --help`.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"

#include "core/eval/features_worker.h"

#include <sys/stat.h>

#include <cstdio>

namespace streetgan::cli {

int runFeaturesWorker(const Args& args) {
  const std::string program = "streetgan features-worker";
  for (const std::string& word : args)
    if (word == "--help" || word == "-h") {
      std::printf("Usage: %s --network FILE --size S --device D --sha256 HEX [--threads N]\n\n"
                  "Runs a features network for `streetgan metrics --features`, which starts it with a socket as its\n"
                  "standard input. Not a command to run by hand.\n",
                  program.c_str());
      return kExitOk;
    }
  auto arguments = FeaturesWorkerArguments::fromWords(args);
  if (!arguments) return fail(program, arguments.error(), kExitUsage);
  struct stat input {};
  if (::fstat(0, &input) != 0 || !S_ISSOCK(input.st_mode))
    return fail(program, "its standard input must be the socket `streetgan metrics --features` gives it; it is not run by hand",
                kExitUsage);
  return streetgan::runFeaturesWorker(*arguments, 0);
}

}  // namespace streetgan::cli
