// `streetgan export --checkpoint C --out G.pt`: a generator as a PyTorch state dict.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"

#include "core/train/generator_export.h"

#include <cstdio>

namespace streetgan::cli {

int runExport(const Args& args) {
  CommandLine line("export", "--checkpoint FILE --out G.pt",
                   "Writes a checkpoint's generator as a PyTorch state dict that torch.load and\n"
                   "load_state_dict take into the reference nn.Sequential layout (main.0.weight, ...),\n"
                   "and beside it G.json with nz, ngf, nc, img_size, preset, run and step\n"
                   "(docs/interop.md).",
                   {checkpointOptionSpec(ModelOptionsUse{}),
                    {"--out", "FILE", "state dict to write (the sidecar gets the same name, .json)"}});
  if (auto done = line.parseOrExit(args)) return *done;
  if (Status given = checkpointGiven(line); !given) return fail(line.program(), given.error(), kExitUsage);
  if (!line.has("--out")) return fail(line.program(), "missing --out G.pt", kExitUsage);
  auto report = exportGenerator(line.value("--checkpoint"), line.value("--out"));
  if (!report) return fail(line.program(), report.error(), kExitFailure);
  std::printf("wrote the generator (step %lld, %lld tensors) to %s and %s\n", static_cast<long long>(report->step),
              static_cast<long long>(report->tensors), report->state_path.c_str(), report->sidecar_path.c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
