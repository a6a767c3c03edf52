// `streetgan export --checkpoint C --out G.pt`: a generator as a PyTorch state dict.
#include "app/cli/command_line.h"
#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"

#include "core/interop/generator_export.h"

#include <cstdio>

namespace streetgan::cli {

int runExport(const Args& args) {
  CommandLine line = exportCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "missing --out G.pt", kExitUsage);
  auto choice = generatorOption(line);
  if (!choice) return fail(line.program(), choice.error(), kExitUsage);
  auto report = exportGenerator(line.value("--checkpoint"), line.value("--out"), *choice);
  if (!report) return fail(line.program(), report.error(), kExitFailure);
  std::printf("wrote the generator (step %lld, generator %s, %lld tensors) to %s and %s\n",
              static_cast<long long>(report->step), report->generator.c_str(), static_cast<long long>(report->tensors),
              report->state_path.c_str(), report->sidecar_path.c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
