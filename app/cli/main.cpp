#include "app/cli/command_boundary.h"
#include "app/cli/command_line.h"
#include "app/cli/command_lines.h"
#include "app/cli/commands.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
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
    "  directions  find, save and list semantic directions of a generator (SeFa, PCA)\n"
    "  project     find the latents of photographs (a walk file of them)\n"
    "  metrics     quality metrics (SWD, MS-SSIM, NDB, FID, KID, precision/recall, copies)\n"
    "  nearest     each sample's nearest training photographs (does the model copy them?)\n"
    "  parzen      Parzen-window log-likelihood of held-out images under a model's samples\n"
    "  tensorboard write TensorBoard event files from runs' events.jsonl\n"
    "  import      turn the original PyTorch tool's checkpoint into a run\n"
    "  export      write a checkpoint's generator as a PyTorch state dict or ONNX model\n"
    "  serve       serve generated images and walks over HTTP, with a gallery page\n"
    "  publish     write a static web page that generates scenes in the browser\n"
    "  bench       measure training or data loading speed (bench train, bench data)\n"
    "\n"
    "\n"
    "Examples (more in the README, \"Using the CLI\"):\n"
    "  streetgan demo-data --out demo-data\n"
    "  streetgan train --dataroot demo-data --preset naive-64 --epochs 5 --run-dir runs/first\n"
    "  streetgan train --resume --run-dir runs/first --epochs 10\n"
    "  streetgan sample --checkpoint runs/first --out grid.png --seed 3\n"
    "  streetgan sample --checkpoint runs/first@50 --out keys.png --seeds 3,14,15\n"
    "  streetgan walk --checkpoint runs/first --seeds 3,14,15 --loop --out walk.mp4\n"
    "  streetgan metrics --run runs/first --every-checkpoint --save\n"
    "  streetgan serve --run runs/first --port 8080\n"
    "  streetgan publish --run runs/first --out site --preview\n"
    "\n"
    "A --checkpoint may be a .pt file, a run folder (its newest checkpoint), RUN@STEP (its newest\n"
    "at or before STEP) or RUN@latest.\n"
    "\n"
    "Run 'streetgan <command> --help' for the options of a command.\n"
    "  --version   print the version\n";

struct Command {
  const char* name;
  int (*run)(const streetgan::cli::Args&);  // null in streetgan: the engine runs it
  bool has_subcommands;                      // "cache build": messages name the subcommand too
};

// streetgan (STREETGAN_CLI_FRONT) is built without LibTorch: the commands that need it are the
// engine's (app/cli/CMakeLists.txt).
#ifdef STREETGAN_CLI_FRONT
#define ENGINE_COMMAND(run) nullptr
#else
#define ENGINE_COMMAND(run) run
#endif

const Command kCommands[] = {
    {"train", ENGINE_COMMAND(streetgan::cli::runTrain), false},
    {"info", ENGINE_COMMAND(streetgan::cli::runInfo), false},
    {"sample", ENGINE_COMMAND(streetgan::cli::runSample), false},
    {"demo-data", ENGINE_COMMAND(streetgan::cli::runDemoData), false},
    {"bench", ENGINE_COMMAND(streetgan::cli::runBench), true},
    {"data", ENGINE_COMMAND(streetgan::cli::runData), true},
    {"cache", ENGINE_COMMAND(streetgan::cli::runCache), true},
    {"parzen", ENGINE_COMMAND(streetgan::cli::runParzen), false},
    {"walk", ENGINE_COMMAND(streetgan::cli::runWalk), false},
    {"remote", streetgan::cli::runRemote, true},
    {"tensorboard", ENGINE_COMMAND(streetgan::cli::runTensorBoard), false},
    {"import", ENGINE_COMMAND(streetgan::cli::runImport), false},
    {"export", ENGINE_COMMAND(streetgan::cli::runExport), false},
    {"serve", ENGINE_COMMAND(streetgan::cli::runServe), false},
    {"publish", ENGINE_COMMAND(streetgan::cli::runPublish), false},
    {"metrics", ENGINE_COMMAND(streetgan::cli::runMetrics), false},
    {"nearest", ENGINE_COMMAND(streetgan::cli::runNearest), false},
    {"directions", ENGINE_COMMAND(streetgan::cli::runDirections), false},
    {"project", ENGINE_COMMAND(streetgan::cli::runProject), false},
    // Not in kUsage: `metrics --features` starts it (app/cli/features_worker_command.cpp).
    {"features-worker", ENGINE_COMMAND(streetgan::cli::runFeaturesWorker), false},
};

#ifdef STREETGAN_CLI_FRONT
// This program's own folder, with a trailing slash: from /proc/self/exe, else (no /proc) from the
// path it was started by; empty when neither tells.
std::string ownFolder() {
  char self[PATH_MAX + 1];
  ssize_t length = ::readlink("/proc/self/exe", self, PATH_MAX);
  std::string path;
  if (length > 0 && length < PATH_MAX) {
    path.assign(self, static_cast<std::size_t>(length));
  } else if (const auto started = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
             started && ::realpath(started, self)) {
    path = self;
  }
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Why `path` may not be run as our engine, or empty when it may: it and its folder must belong to
// root or to us and be writable by no one else, as a program in /usr/libexec is. A copy of
// streetgan in a shared folder (/tmp) must not run a streetgan-engine someone else put beside it.
std::string untrustedBecause(const std::string& path, const struct stat& file) {
  const uid_t us = ::geteuid();
  const gid_t our_group = ::getegid();
  // Group-writable is ours when the group is our own (a umask of 002 with a group per user).
  const auto trusted = [us, our_group](const struct stat& what) {
    return (what.st_uid == 0 || what.st_uid == us) && (what.st_mode & S_IWOTH) == 0 &&
           ((what.st_mode & S_IWGRP) == 0 || what.st_gid == our_group);
  };
  if (!S_ISREG(file.st_mode)) return "not a regular file";
  if (!trusted(file)) return "it belongs to another user or others may change it";
  struct stat folder {};
  const std::string parent = path.substr(0, path.find_last_of('/') + 1);
  if (::stat(parent.c_str(), &folder) != 0 || !trusted(folder))
    return "its folder belongs to another user or others may change it";
  return {};
}

// Becomes the engine, in this same process, with the same arguments: beside this program in a
// build folder, under libexec when installed. Returns only when it cannot.
int runInEngine(char** argv) {
  using streetgan::cli::fail;
  using streetgan::cli::kExitFailure;
  const std::string folder = ownFolder();
  if (folder.empty()) return fail("streetgan", "cannot find this program's own folder (/proc/self/exe)", kExitFailure);
  const std::string beside = folder + STREETGAN_ENGINE_NAME;
  const std::string installed = folder + STREETGAN_ENGINE_FROM_BIN "/" STREETGAN_ENGINE_NAME;
  for (const std::string& engine : {beside, installed}) {
    struct stat file {};
    if (::stat(engine.c_str(), &file) != 0) {
      if (errno == ENOENT) continue;
      return fail("streetgan", "cannot start its engine " + engine + ": " + std::strerror(errno), kExitFailure);
    }
    if (const std::string why = untrustedBecause(engine, file); !why.empty())
      return fail("streetgan", "refuses to start its engine " + engine + ": " + why, kExitFailure);
    ::execv(engine.c_str(), argv);
    const int error = errno;
    return fail("streetgan", "cannot start its engine " + engine + ": " + std::strerror(error), kExitFailure);
  }
  return fail("streetgan", "its engine is missing: neither " + beside + " nor " + installed +
                               " exists; reinstall streetgan",
              kExitFailure);
}
#endif

// "streetgan walk", or with the subcommand ("streetgan cache build") as the command's own
// messages name it.
std::string programName(const Command& command, const streetgan::cli::Args& args) {
  const std::string program = std::string("streetgan ") + command.name;
  if (!command.has_subcommands || args.empty() || args.front().empty() || args.front()[0] == '-') return program;
  return program + " " + args.front();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace streetgan::cli;
#ifndef STREETGAN_CLI_FRONT
  // Started as streetgan, it is streetgan to ps, top and pgrep too.
  ::prctl(PR_SET_NAME, "streetgan");
#endif
  // A reader that goes away (`--events - | head`, a closed studio) must not kill a training run:
  // writes to a closed pipe fail with EPIPE instead, and each writer decides what that means.
  std::signal(SIGPIPE, SIG_IGN);
  // A standard stream started closed (`2>&-`) would be the next file opened, and a run's
  // events.jsonl would get every status line: each closed one is /dev/null instead.
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int null_fd = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null_fd >= 0 && null_fd != fd) {
        ::dup2(null_fd, fd);
        ::close(null_fd);
      }
    }
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
  for (const Command& known : kCommands) {
    if (command != known.name) continue;
#ifdef STREETGAN_CLI_FRONT
    // --help, a bad option and a --checkpoint that names nothing are answered here, without
    // loading LibTorch; the engine runs the rest.
    if (!known.run)
      return runAtBoundary(programName(known, args), [&] {
        if (const auto answered = streetgan::cli::answerWithoutEngine(command, args)) return *answered;
        return runInEngine(argv);
      });
#endif
    // Every exception that escapes a command ends at this boundary as one line and exit 1.
    return runAtBoundary(programName(known, args), [&] { return known.run(args); });
  }
  return fail("streetgan", "unknown command '" + command + "' (see streetgan --help)", kExitUsage);
}
