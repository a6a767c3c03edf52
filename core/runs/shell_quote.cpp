#include "core/runs/shell_quote.h"

namespace streetgan {

std::string shellQuote(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') quoted += "'\\''";  // close, an escaped quote, reopen
    else quoted += c;
  }
  quoted += '\'';
  return quoted;
}

std::string shellQuotePath(std::string_view path) {
  if (path == "~") return "\"$HOME\"";
  if (path.substr(0, 2) == "~/") return "\"$HOME\"/" + shellQuote(path.substr(2));
  return shellQuote(path);
}

std::string remoteCommandLine(const std::string& environment_line, const std::string& program,
                              const std::vector<std::string>& args) {
  std::string line;
  if (environment_line.find_first_not_of(" \t\r\n") != std::string::npos) {
    // A brace group (not a subshell), so what the line exports or sources stays for the exec.
    line += "{ " + environment_line + "\n} >&2 || { echo 'the host profile'\"'\"'s environment line failed' >&2; exit " +
            std::to_string(kEnvironmentLineFailed) + "; }\n";
  }
  line += "exec " + shellQuotePath(program);
  for (const auto& arg : args) line += ' ' + shellQuote(arg);
  return line;
}

}  // namespace streetgan
