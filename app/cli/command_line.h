#pragma once
// CommandLine: the options of one `streetgan` subcommand. Parses "--name value", "--name=value",
// bare flags and the original tool's short "-t JSON" / "-c JSON" forms, and writes the --help
// text from the same table, so help and parser never disagree.
#include "core/util/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace streetgan::cli {

struct OptionSpec {
  std::string name;        ///< "--epochs" or "-t"
  std::string value_name;  ///< "N"; empty for a flag without a value
  std::string help;
};

class CommandLine {
public:
  CommandLine(std::string command, std::string usage, std::string summary,
              std::vector<OptionSpec> options);

  /// Parses `args` (the words after the subcommand). Errors name the option.
  Status parse(const std::vector<std::string>& args);

  /// Parses `args` and deals with the two outcomes every command treats alike: a bad option
  /// (one-line error, returns kExitUsage) and --help (help on stdout, returns kExitOk). A
  /// --checkpoint given as a run folder, RUN@STEP or RUN@latest becomes that checkpoint's file
  /// ("using FILE" on stderr; one that names none is a usage error). Returns nothing when the
  /// command should go on.
  std::optional<int> parseOrExit(const std::vector<std::string>& args);
  /// parseOrExit as `streetgan` asks it before it starts the engine: the same answers to a bad
  /// option, --help and a --checkpoint that names no checkpoint, but silent about one that does
  /// (the engine parses again and says "using FILE").
  std::optional<int> answerWithoutRunning(const std::vector<std::string>& args);

  bool helpRequested() const { return help_; }
  /// The options this command takes, as given to the constructor.
  const std::vector<OptionSpec>& options() const { return options_; }
  std::string helpText() const;

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string value(const std::string& name, const std::string& fallback = {}) const;
  /// The option as an integer in [lo, hi], or an Error naming the option and the value.
  Result<long long> integer(const std::string& name, long long fallback, long long lo,
                            long long hi) const;
  /// The option as a finite number in (lo, hi], or an Error naming the option and the value.
  /// --name X: a number above `lo` (from `lo` with lo_included) and at most `hi`.
  Result<double> number(const std::string& name, double fallback, double lo, double hi, bool lo_included = false) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  /// "streetgan <command>", for messages.
  std::string program() const { return "streetgan " + command_; }

private:
  const OptionSpec* find(const std::string& name) const;
  /// parseOrExit, with "using FILE" and the resolved --checkpoint only when `use_checkpoint`.
  std::optional<int> parseAndAnswer(const std::vector<std::string>& args, bool use_checkpoint);

  std::string command_, usage_, summary_;
  std::vector<OptionSpec> options_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positionals_;
  bool help_ = false;
};

/// The items of a comma-separated option value ("3,14,15"), empty items included so the caller
/// can name them in its error.
std::vector<std::string> splitCommaList(const std::string& text);

/// The seeds of a comma-separated list ("3,14,15") of at most `max_count`; an Error names
/// `option` and the bad item, or the count.
Result<std::vector<std::uint64_t>> parseSeedList(const std::string& option, const std::string& text,
                                                 std::size_t max_count);

/// Exit codes of every command.
enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

/// Prints "streetgan <command>: <message>" on stderr as one line and returns `code`.
int fail(const std::string& program, const std::string& message, int code);

}  // namespace streetgan::cli
