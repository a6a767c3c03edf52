#include "app/cli/command_lines.h"
#include "app/cli/commands.h"
#include "app/cli/config_options.h"
#include "app/cli/rank_launcher.h"
#include "app/cli/stop_signal.h"
#include "app/cli/train_progress_printer.h"
#include "core/runs/run_directory.h"
#include "core/distributed/job_token.h"
#include "core/train/checkpoint.h"
#include "core/train/launch_check.h"
#include "core/train/trainer.h"

#include <dlfcn.h>
#include <netdb.h>
#include <sched.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <tuple>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>

namespace streetgan::cli {
namespace {

// The CPU cores this process may run on (its affinity mask, as taskset or a container sets it).
int usableCoreCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// c10d logs its own errors on stderr (through glog where LibTorch uses it, as Debian's 1.13 does;
// through c10's own logger with a backtrace in 2.x builds without glog) before throwing the
// exceptions a rank's one-line message already quotes: a rank keeps stderr to that line.
void quietDistributedLog() {
  if (auto* level = static_cast<int*>(dlsym(RTLD_DEFAULT, "_ZN3fLI17FLAGS_minloglevelE"))) *level = 3;
  if (auto* level = static_cast<int*>(dlsym(RTLD_DEFAULT, "FLAGS_caffe2_log_level"))) *level = 3;
}

// The most ranks a job may have: WORLD_SIZE's range in core/distributed/rank_placement.cpp.
constexpr std::int64_t kMaxWorldSize = 65536;

const char* const kLauncherOptions[] = {"--nproc", "--nnodes", "--node-rank", "--master-addr", "--master-port",
                                        "--dist-timeout", "--max-restarts", "--job-token"};

// The arguments every rank gets: the launcher's own options left out.
std::vector<std::string> rankArguments(const Args& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    bool launcher = false;
    for (const char* name : kLauncherOptions) {
      const std::string option = name;
      if (args[i] == option) {
        launcher = true;
        ++i;  // its value
      } else if (args[i].rfind(option + "=", 0) == 0) {
        launcher = true;
      }
      if (launcher) break;
    }
    if (!launcher) out.push_back(args[i]);
  }
  return out;
}

// The job's token: --job-token's file, else the environment's; a job on one host makes its own,
// a job on several hosts must share one.
Status readJobToken(const CommandLine& line, RankLaunchOptions& launch) {
  auto token = line.has("--job-token") ? readJobTokenFile(line.value("--job-token")) : jobTokenFromEnvironment();
  if (!token) return makeError((line.has("--job-token") ? "option '--job-token': " : "") + token.error());
  launch.job_token = *token;
  if (!launch.job_token.empty()) return {};
  if (launch.nnodes > 1)
    return makeError("--nnodes " + std::to_string(launch.nnodes) + " needs the job's token on every host: --job-token "
                     "FILE (the same file on each host, readable by its owner alone) or the environment variable " +
                     kJobTokenVariable + "; make one with: head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > "
                     "job.token && chmod 600 job.token");
  launch.job_token = newJobToken();
  return {};
}

// The launcher's options (--nproc ... --dist-timeout) into `launch`, checked against each other
// and this host; without --nproc or --nnodes none may be given. Every error is a usage error.
Status readLaunchOptions(const CommandLine& line, bool launcher, RankLaunchOptions& launch) {
  for (const auto& [name, field, lo, hi] :
       {std::tuple<const char*, int*, int, int>{"--nproc", &launch.nproc, 1, 1024},
        {"--nnodes", &launch.nnodes, 1, 65536},
        {"--node-rank", &launch.node_rank, 0, 65535},
        {"--master-port", &launch.master_port, 1, 65535},
        {"--dist-timeout", &launch.timeout_s, 1, 86400},
        {"--max-restarts", &launch.max_restarts, 0, 1000}}) {
    auto value = line.integer(name, *field, lo, hi);
    if (!value) return makeError(value.error());
    *field = static_cast<int>(*value);
  }
  // The ranks of the whole job (each host's --nproc): a rank refuses a WORLD_SIZE above
  // kMaxWorldSize (core/distributed/rank_placement.cpp), so the launcher refuses it first, as a usage
  // error, instead of starting ranks that each fail. int64: no product of the ranges above wraps.
  if (const std::int64_t world = std::int64_t{launch.nproc} * launch.nnodes; world > kMaxWorldSize)
    return makeError("options '--nproc " + std::to_string(launch.nproc) + " --nnodes " +
                     std::to_string(launch.nnodes) + "' make " + std::to_string(world) + " ranks; allowed: at most " +
                     std::to_string(kMaxWorldSize) + " in all (--nproc × --nnodes)");
  // Each rank is a whole process with its own model, optimiser and loader: 1024 of them on two
  // cores ran the machine out of memory. Four a core (eight at least) is all a host can use.
  if (const int cores = usableCoreCount(), most = std::max(8, 4 * cores); launch.nproc > most)
    return makeError("option '--nproc': " + std::to_string(launch.nproc) + " ranks are more than this host can run (" +
                     std::to_string(cores) + " CPU cores); allowed: at most " + std::to_string(most) + ", four a core");
  if (launch.node_rank >= launch.nnodes)
    return makeError("option '--node-rank': " + std::to_string(launch.node_rank) +
                     " is not allowed; allowed: 0 to " + std::to_string(launch.nnodes - 1) + " (--nnodes " +
                     std::to_string(launch.nnodes) + ")");
  if (line.has("--master-addr")) {
    launch.master_addr = line.value("--master-addr");
    // A name that does not resolve would keep every rank retrying for the whole --dist-timeout.
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int code = ::getaddrinfo(launch.master_addr.c_str(), nullptr, &hints, &found);
    if (found != nullptr) ::freeaddrinfo(found);
    if (code != 0)
      return makeError("option '--master-addr': cannot resolve '" + launch.master_addr + "' (" + ::gai_strerror(code) + ")");
  }
  if (launch.nnodes > 1 && !line.has("--master-port")) launch.master_port = 29500;
  if (!launcher)
    for (const char* name : kLauncherOptions)
      if (line.has(name)) return makeError(std::string("option '") + name + "' needs --nproc N (the ranks to start)");
  return launcher ? readJobToken(line, launch) : Status{};
}

// A resumed run's config as the trainer will read it (readResumeConfig); none when this process
// cannot read it (no checkpoint here, as on another host, or none readable: the trainer says why).
std::optional<TrainConfig> storedRunConfig(const std::string& run_dir) {
  const auto checkpoints = RunDirectory(run_dir).checkpoints();
  if (checkpoints.empty()) return std::nullopt;
  auto read = readResumeConfig(checkpoints);
  if (!read) return std::nullopt;
  return *read;
}

// On --resume the run keeps its stored config: only what may change (epochs, device, precision,
// threads, data folder, cache, workers, CUDA graphs, and through -t the learning rates, penalties
// and augmentation) goes into `options`, as a partial config the trainer applies to the stored
// one. Every error is a usage error.
Status readResumeOptions(const CommandLine& line, TrainerOptions& options) {
  const auto refused = givenConfigOptions(line);
  if (!refused.empty())
    return makeError("option '" + refused.front() +
                     "' cannot be used with --resume: a resumed run keeps its stored config "
                     "(only " +
                     resumableOptions() + " may change)");
  if (!line.has("--run-dir")) return makeError("--resume needs --run-dir DIR (the run to continue)");
  auto overrides = keyOptionsConfig(line, ConfigScope::Resume);
  if (!overrides) return makeError(overrides.error());
  if (line.has("-t")) {
    // The learning rates, penalties and augmentation may change from here on (the trainer warns).
    const auto stored = storedRunConfig(line.value("--run-dir"));
    auto tuned = applyConfigText(stored.value_or(TrainConfig()), line.value("-t"),
                                 stored ? ConfigScope::Resume : ConfigScope::ResumeUnread, "-t");
    if (!tuned) return makeError(tuned.error());
    overrides->merge_patch(nlohmann::json::parse(line.value("-t")));
  }
  options.resume_overrides = std::move(*overrides);
  return {};
}

// A new run's config: the config options; it must name a data folder.
Result<TrainConfig> newRunConfig(const CommandLine& line) {
  auto built = configFromOptions(line);
  if (!built) return makeError(built.error());
  const TrainConfig& config = *built;
  if (config.dataroot.empty()) return makeError("missing --dataroot DIR (the folder of training images)");
  return config;
}

// This process trains, alone or as one rank: the run is prepared and run, with a line on stderr
// at its start and end (rank 0).
int trainHere(const CommandLine& line, const TrainConfig& config, const TrainerOptions& options,
              TrainProgressPrinter& printer, bool quiet) {
  auto trainer = Trainer::prepare(config, options);
  // A rank other than 0 says which it is in every line it prints.
  const std::string program = options.placement.has_value() && options.placement->rank != 0
                                  ? line.program() + " (rank " + std::to_string(options.placement->rank) + ")"
                                  : line.program();
  if (!trainer)  // a bad config is a usage error; a folder or file the machine refuses is a runtime one
    return fail(program, trainer.error(), trainer.errorKind() == ErrorKind::Machine ? kExitFailure : kExitUsage);
  const bool rank0 = (*trainer)->rank() == 0;
  if (rank0 && !quiet) {
    printer.printLine("device: " + (*trainer)->deviceChoice());
    printer.printLine("run directory: " + (*trainer)->runDirectory());
  }
  auto outcome = (*trainer)->run();
  printer.clear();
  if (!outcome) return fail(program, outcome.error(), kExitFailure);
  if (!rank0) return kExitOk;
  printer.printLine(std::string(*outcome == RunOutcome::Completed ? "training completed" : "training stopped") +
                    "; run directory: " + (*trainer)->runDirectory());
  return kExitOk;
}

// The config the ranks will train with: a new run's, or a resumed run's stored one (its newest
// checkpoint's; when that cannot be read, with no device or precision: the ranks find out and say)
// with the command line's overrides, applied as the trainer applies them.
Result<TrainConfig> launchConfig(const TrainerOptions& options, const TrainConfig& config) {
  if (!options.resume) return config;
  TrainConfig unread;  // the ranks find out why it cannot be read, and say
  unread.device.clear();
  unread.precision.clear();
  const auto stored = storedRunConfig(options.run_dir);
  return applyConfigJson(stored.value_or(unread), options.resume_overrides,
                         stored ? ConfigScope::Resume : ConfigScope::ResumeUnread, "command line");
}

// What every rank would refuse is refused by the launcher, once, before any starts, by the rules
// each rank applies again (launch_check.h). A resumed run's stored config says what its options
// leave as it was (when it can be read; else the ranks find out and say).
Status checkLaunch(const TrainerOptions& options, const TrainConfig& config, const RankLaunchOptions& launch) {
  auto launched = launchConfig(options, config);
  if (!launched) return makeError(launched.error());
  LaunchWorld world;
  world.world_size = std::int64_t{launch.nproc} * launch.nnodes;
  world.ranks_per_host = launch.nproc;
  world.starts_ranks = true;
  auto checked = checkLaunchable(*launched, options, world);
  if (!checked) return makeError(checked.error());
  return {};
}

}  // namespace

int runTrain(const Args& args) {
  CommandLine line = trainCommandLine();
  if (auto done = line.parseOrExit(args)) return *done;
  if (!line.positionals().empty())
    return fail(line.program(), "unexpected argument '" + line.positionals().front() + "'", kExitUsage);
  if (line.has("--events") && line.value("--events") != "-")
    return fail(line.program(), "option '--events': only '-' (stdout) is allowed; the run directory always gets events.jsonl", kExitUsage);

  auto placement = rankPlacementFromEnvironment();
  if (!placement) return fail(line.program(), placement.error(), kExitUsage);
  const bool launcher = line.has("--nproc") || line.has("--nnodes");
  if (launcher && *placement)
    return fail(line.program(), "--nproc and --nnodes start ranks, and this process already is one (RANK is set, "
                "as torchrun sets it); leave them out under torchrun", kExitUsage);
  RankLaunchOptions launch;
  if (Status read = readLaunchOptions(line, launcher, launch); !read)
    return fail(line.program(), read.error(), kExitUsage);

  TrainerOptions options;
  options.resume = line.has("--resume");
  options.placement = *placement;
  if (*placement) quietDistributedLog();
  options.run_dir = line.value("--run-dir");
  options.events_to_stdout = line.has("--events");
  options.stop_requested = &installStopHandlers();
  const bool quiet = line.has("--quiet");
  auto every = line.number("--progress-every", 30, 0, 86400);
  if (!every) return fail(line.program(), every.error(), kExitUsage);
  if (quiet && line.has("--progress-every"))
    return fail(line.program(), "--progress-every cannot go with --quiet (which prints no status lines)", kExitUsage);
  TrainProgressOptions progress;
  progress.mode = TrainProgressPrinter::modeFor(stderr, quiet);
  progress.every_s = *every;
  TrainProgressPrinter printer(progress);
  options.on_event = [&printer](const events::RunEvent& event) { printer.onEvent(event); };

  TrainConfig config;
  if (options.resume) {
    if (Status read = readResumeOptions(line, options); !read) return fail(line.program(), read.error(), kExitUsage);
  } else {
    auto built = newRunConfig(line);
    if (!built) return fail(line.program(), built.error(), kExitUsage);
    config = *built;
  }

  if (launcher) {
    if (Status launchable = checkLaunch(options, config, launch); !launchable)
      return fail(line.program(), launchable.error(), kExitUsage);
    launch.rank_args = rankArguments(args);
    if (launch.node_rank == 0) {
      const std::string run_dir = options.run_dir.empty()
                                      ? (std::filesystem::path(config.root) / config.name).string()
                                      : options.run_dir;
      launch.events_path = RunDirectory(run_dir).eventsPath();
    }
    return launchRanks(launch);
  }
  return trainHere(line, config, options, printer, quiet);
}

}  // namespace streetgan::cli
