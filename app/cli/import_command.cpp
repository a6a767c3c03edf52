// `streetgan import CHECKPOINT.pt --run-dir DIR`: the original PyTorch tool's checkpoint as a run.
#include "app/cli/command_line.h"
#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/stop_signal.h"

#include "core/interop/checkpoint_import.h"
#include "core/train/compute_device.h"
#include "core/util/progress_line.h"

#include <cstdio>

namespace streetgan::cli {

int runImport(const Args& args) {
  CommandLine line = importCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (line.positionals().size() != 1) return fail(line.program(), "give exactly one CHECKPOINT.pt", kExitUsage);
  if (!line.has("--run-dir")) return fail(line.program(), "missing --run-dir DIR", kExitUsage);
  if (importRunFolder(line.value("--run-dir")).empty())
    return fail(line.program(), "option '--run-dir': \"" + line.value("--run-dir") +
                "\" names no folder a run can be created as", kExitUsage);
  auto batch = line.integer("--batch-size", 128, 1, 1 << 20);
  if (!batch) return fail(line.program(), batch.error(), kExitUsage);
  setComputeThreads(0);
  CheckpointImportOptions options;
  options.checkpoint = line.positionals().front();
  options.run_dir = line.value("--run-dir");
  options.batch_size = *batch;
  options.dataroot = line.value("--dataroot");
  // SIGINT/SIGTERM stop the import between its steps; the staging folder is removed.
  const std::atomic<bool>& stop = installStopHandlers();
  options.cancelled = [&stop] { return stop.load(); };
  // The import reports no steps of its own: one line as it begins (naming the file), one when done.
  const bool progress_lines = line.has("--progress");
  if (progress_lines) printProgressLine(stderr, {kProgressTaskImport, 0, 1, options.checkpoint});
  auto report = importReferenceCheckpoint(options);
  if (!report) return fail(line.program(), report.error(), kExitFailure);
  if (progress_lines) printProgressLine(stderr, {kProgressTaskImport, 1, 1, report->run_dir});
  std::printf("imported %s into %s\n", options.checkpoint.c_str(), report->run_dir.c_str());
  const std::string ndf = report->has_discriminator ? std::to_string(report->ndf)
                                                   : std::to_string(report->ndf) + " (the default: the file has no discriminator)";
  std::printf("  net: %d px, nz %d, ngf %d, nc %d, ndf %s%s\n", report->img_size, report->nz, report->ngf, report->nc,
              ndf.c_str(), report->ddp_prefixed ? "; DistributedDataParallel names" : "");
  auto count = [](std::int64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::printf("  progress: %s, %s, %s\n", count(report->epochs, "epoch", "epochs").c_str(),
              count(report->steps, "logged step", "logged steps").c_str(),
              count(report->samples, "sample grid", "sample grids").c_str());
  std::printf("  checkpoint: %s\n", report->checkpoint_path.c_str());
  if (report->has_optimizers)
    std::printf("  --resume continues with both optimizers' moments\n");
  else
    std::printf("  the file has no %s: --resume would start %s afresh\n",
                report->has_discriminator ? "optimizer state" : "discriminator or optimizer state",
                report->has_discriminator ? "the optimizers" : "the discriminator and the optimizers");
  return kExitOk;
}

}  // namespace streetgan::cli
