#pragma once
// The command lines of the commands the engine runs: each one's options, usage and summary, made
// without LibTorch. The engine's commands parse with them, and streetgan (app/cli/main.cpp) asks
// answerWithoutEngine first: --help, a bad option and a --checkpoint that names no checkpoint are
// answered without loading LibTorch's 287 libraries, a second of CPU (the shell completion asks
// every command for its --help at each TAB). model_command_lines.h and bench_command_lines.h hold
// the commands that run a model and the benchmarks.
#include "app/cli/command_line.h"
#include "app/cli/commands.h"
#include "app/cli/option_specs.h"

#include <optional>
#include <string>

namespace streetgan::cli {

CommandLine trainCommandLine();
CommandLine infoCommandLine();
CommandLine demoDataCommandLine();
CommandLine importCommandLine();
CommandLine exportCommandLine();
CommandLine tensorBoardCommandLine();
CommandLine dataStatsCommandLine();
CommandLine dataPreviewCommandLine();
CommandLine cacheBuildCommandLine();
CommandLine cacheInfoCommandLine();

/// What `streetgan COMMAND ARGS...` gets without the engine: --help (exit 0), or a bad option or
/// --checkpoint (one line, exit 2), as CommandLine::answerWithoutRunning gives them. Nothing when
/// the engine must run the command, and for what the command answers itself (a group's --help or
/// unknown subcommand, features-worker).
std::optional<int> answerWithoutEngine(const std::string& command, const Args& args);

}  // namespace streetgan::cli
