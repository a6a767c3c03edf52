#include "app/cli/command_line.h"
#include "app/cli/commands.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

const char* kUsage =
    "Usage: streetgan <command> [options]\n"
    "\n"
    "Train a DCGAN on street-level photographs and work with its runs.\n"
    "\n"
    "Commands:\n"
    "  train       train a model (locally; the studio also runs this)\n"
    "  sample      write a grid of generated images from a checkpoint\n"
    "  info        parameter counts of a preset or config, and the devices\n"
    "  demo-data   render procedural street scenes to train on without a download\n"
    "  data        data set statistics and augmentation previews (data stats, data preview)\n"
    "  cache       pre-decode a data set into one file for fast loading (cache build, cache info)\n"
    "  walk        render a latent-space walk to GIF, MP4, WebM or PNG frames\n"
    "  parzen      Parzen-window log-likelihood of held-out images under a model's samples\n"
    "  bench       measure training or data loading speed (bench train, bench data)\n"
    "\n"
    "Run 'streetgan <command> --help' for the options of a command.\n"
    "  --version   print the version\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace streetgan::cli;
  // A reader that goes away (`--events - | head`, a closed studio) must not kill a training run:
  // writes to a closed pipe fail with EPIPE instead, and each writer decides what that means.
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string command = argv[1];
  const Args args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (command == "--version") {
    std::printf("streetgan %s\n", STREETGAN_VERSION);
    return kExitOk;
  }
  if (command == "train") return runTrain(args);
  if (command == "info") return runInfo(args);
  if (command == "sample") return runSample(args);
  if (command == "demo-data") return runDemoData(args);
  if (command == "bench") return runBench(args);
  if (command == "data") return runData(args);
  if (command == "cache") return runCache(args);
  if (command == "parzen") return runParzen(args);
  if (command == "walk") return runWalk(args);
  if (command == "remote") return runRemote(args);
  return fail("streetgan", "unknown command '" + command + "' (see streetgan --help)", kExitUsage);
}
