#include "app/cli/commands.h"
#include "app/cli/config_options.h"
#include "app/cli/stop_signal.h"
#include "core/train/trainer.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>

namespace streetgan::cli {
namespace {

// One human line per epoch and at the end, on stderr (stdout may carry the event stream).
void printProgress(const nlohmann::json& event) {
  const std::string type = event.value("type", "");
  if (type == "epoch_end") {
    std::fprintf(stderr, "epoch %lld/%lld  step %lld  loss_d %.4f  loss_g %.4f  %.1f s\n",
                 event.value("epoch", 0LL), event.value("epochs", 0LL), event.value("step", 0LL),
                 event.value("mean_loss_d", 0.0), event.value("mean_loss_g", 0.0),
                 event.value("seconds", 0.0));
  } else if (type == "warning") {
    std::fprintf(stderr, "warning: %s\n", event.value("message", std::string()).c_str());
  }
}

}  // namespace

int runTrain(const Args& args) {
  auto specs = configOptionSpecs();
  specs.insert(specs.begin(),
               {{"--dataroot", "DIR", "folder of training images (searched recursively)"},
                {"--epochs", "N", "total epochs of the run; a resumed run continues up to N"},
                {"--run-dir", "DIR", "run directory (default: <root>/<name> from the config)"},
                {"--resume", "", "continue the run in --run-dir from its latest checkpoint"}});
  for (const auto& spec : dataFilterOptionSpecs()) specs.push_back(spec);
  for (const auto& spec : dataLoaderOptionSpecs()) specs.push_back(spec);
  specs.push_back({"--precision", "P", "auto, fp32, fp16 (CUDA) or bf16 (default auto)"});
  specs.push_back({"--events", "-", "also print every event as a JSON line on stdout"});
  CommandLine line("train", "--dataroot DIR [options]",
                   "Trains the DCGAN. Writes config.json, events.jsonl, checkpoints/ and samples/\n"
                   "to the run directory. SIGINT or SIGTERM finishes the current step, saves a\n"
                   "checkpoint and exits 0; --resume continues from it.",
                   specs);
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.positionals().empty())
    return fail(line.program(), "unexpected argument '" + line.positionals().front() + "'", kExitUsage);
  if (line.has("--events") && line.value("--events") != "-")
    return fail(line.program(), "option '--events': only '-' (stdout) is allowed; the run directory always gets events.jsonl", kExitUsage);

  TrainerOptions options;
  options.resume = line.has("--resume");
  options.run_dir = line.value("--run-dir");
  options.events_to_stdout = line.has("--events");
  options.stop_requested = &installStopHandlers();
  options.on_event = printProgress;

  TrainConfig config;
  if (options.resume) {
    const auto refused = givenConfigOptions(line);
    if (!refused.empty())
      return fail(line.program(), "option '" + refused.front() +
                  "' cannot be used with --resume: a resumed run keeps its stored config "
                  "(only --epochs, --device, --precision, --threads, --dataroot, --workers and --cache may change)",
                  kExitUsage);
    if (!line.has("--run-dir"))
      return fail(line.program(), "--resume needs --run-dir DIR (the run to continue)", kExitUsage);
    auto epochs = line.integer("--epochs", 0, 1, 1000000);
    if (!epochs) return fail(line.program(), epochs.error(), kExitUsage);
    if (line.has("--epochs")) options.epochs = static_cast<int>(*epochs);
    auto threads = line.integer("--threads", 0, 0, 1024);
    if (!threads) return fail(line.program(), threads.error(), kExitUsage);
    if (line.has("--threads")) options.threads = static_cast<int>(*threads);
    if (line.has("--device")) options.device = line.value("--device");
    if (line.has("--precision")) options.precision = line.value("--precision");
    if (line.has("--dataroot")) options.dataroot = line.value("--dataroot");
    if (line.has("--cache")) options.cache = line.value("--cache");
    auto workers = line.integer("--workers", 0, 0, 1024);
    if (!workers) return fail(line.program(), workers.error(), kExitUsage);
    if (line.has("--workers")) options.workers = static_cast<int>(*workers);
  } else {
    auto built = configFromOptions(line);
    if (!built) return fail(line.program(), built.error(), kExitUsage);
    config = *built;
    if (config.dataroot.empty())
      return fail(line.program(), "missing --dataroot DIR (the folder of training images)", kExitUsage);
  }

  PrepareFailure failure = PrepareFailure::Config;
  auto trainer = Trainer::prepare(config, options, &failure);
  if (!trainer)  // a bad config is a usage error; a folder or file the machine refuses is a runtime one
    return fail(line.program(), trainer.error(), failure == PrepareFailure::Runtime ? kExitFailure : kExitUsage);
  std::fprintf(stderr, "run directory: %s\n", (*trainer)->runDirectory().c_str());
  auto outcome = (*trainer)->run();
  if (!outcome) return fail(line.program(), outcome.error(), kExitFailure);
  std::fprintf(stderr, "%s; run directory: %s\n",
               *outcome == RunOutcome::Completed ? "training completed" : "training stopped",
               (*trainer)->runDirectory().c_str());
  return kExitOk;
}

}  // namespace streetgan::cli
