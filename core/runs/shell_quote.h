#pragma once
// Quoting for the POSIX shell that runs a command sent over SSH (the remote user's login shell
// gets one string and parses it). Every word the studio sends — run names, paths, JSON — goes
// through shellQuote(), so spaces, quotes, ';', '$()', backquotes and newlines stay data and can
// never run anything. Pure functions; nothing here fails.
#include <string>
#include <string_view>
#include <vector>

namespace streetgan {

/// `word` as one single-quoted shell word: abc → 'abc', it's → 'it'\''s'.
std::string shellQuote(std::string_view word);

/// A path on the remote host, quoted, where a leading "~/" (or a lone "~") still means the
/// remote user's home: ~/runs/a b → "$HOME"/'runs/a b'. Nothing else is expanded.
std::string shellQuotePath(std::string_view path);

/// The command line a remote shell runs: `environment_line` first (the user's own shell, e.g.
/// `source /opt/habana/env.sh`; its output goes to stderr so it cannot mix into the event stream,
/// and its failure stops the command with exit code 125), then `exec program args...`, every
/// word quoted. The program is quoted with shellQuotePath().
std::string remoteCommandLine(const std::string& environment_line, const std::string& program,
                              const std::vector<std::string>& args);

/// Exit code of remoteCommandLine() when the environment line failed.
constexpr int kEnvironmentLineFailed = 125;

}  // namespace streetgan
