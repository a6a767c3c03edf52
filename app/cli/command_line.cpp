#include "app/cli/command_line.h"

#include "core/runs/checkpoint_reference.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <regex>
#include <sstream>

namespace streetgan::cli {

CommandLine::CommandLine(std::string command, std::string usage, std::string summary,
                         std::vector<OptionSpec> options)
    : command_(std::move(command)),
      usage_(std::move(usage)),
      summary_(std::move(summary)),
      options_(std::move(options)) {}

const OptionSpec* CommandLine::find(const std::string& name) const {
  for (const auto& option : options_)
    if (option.name == name) return &option;
  return nullptr;
}

std::vector<std::string> splitCommaList(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

Result<std::vector<std::uint64_t>> parseSeedList(const std::string& option, const std::string& text,
                                                 std::size_t max_count) {
  const auto items = splitCommaList(text);
  if (items.size() > max_count)
    return makeError("option '" + option + "': " + std::to_string(items.size()) + " seeds; at most " +
                     std::to_string(max_count) + " are taken");
  std::vector<std::uint64_t> seeds;
  for (const std::string& item : items) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 19)
      return makeError("option '" + option + "': \"" + item + "\" is not a seed (a non-negative integer)");
    const std::uint64_t seed = std::stoull(item);
    // The latents are drawn from a signed 64-bit seed: a larger one would alias a smaller seed.
    if (seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return makeError("option '" + option + "': \"" + item + "\" is not a seed (a non-negative integer up to " +
                       std::to_string(std::numeric_limits<std::int64_t>::max()) + ")");
    seeds.push_back(seed);
  }
  return seeds;
}

std::optional<int> CommandLine::parseOrExit(const std::vector<std::string>& args) { return parseAndAnswer(args, true); }

std::optional<int> CommandLine::answerWithoutRunning(const std::vector<std::string>& args) {
  return parseAndAnswer(args, false);
}

std::optional<int> CommandLine::parseAndAnswer(const std::vector<std::string>& args, bool use_checkpoint) {
  if (Status parsed = parse(args); !parsed) return fail(program(), parsed.error(), kExitUsage);
  if (help_) {
    std::fputs(helpText().c_str(), stdout);
    return kExitOk;
  }
  // Every command's --checkpoint takes a run folder, RUN@STEP and RUN@latest too
  // (core/runs/checkpoint_reference.h); the command itself only ever sees a file.
  if (find("--checkpoint") != nullptr && has("--checkpoint") && !value("--checkpoint").empty()) {
    auto resolved = resolveCheckpointReference(value("--checkpoint"));
    if (!resolved) return fail(program(), "option '--checkpoint': " + resolved.error(), kExitUsage);
    if (!use_checkpoint) return std::nullopt;
    if (resolved->from_run) {
      std::string shown = resolved->path;  // one line, as fail() keeps its messages
      for (char& c : shown)
        if (c == '\n' || c == '\r') c = ' ';
      std::fprintf(stderr, "using %s\n", shown.c_str());
    }
    values_["--checkpoint"] = resolved->path;
  }
  return std::nullopt;
}

Status CommandLine::parse(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string word = args[i];
    if (word == "--help" || word == "-h") {
      help_ = true;
      continue;
    }
    if (word.size() < 2 || word[0] != '-' || word == "-") {
      positionals_.push_back(word);
      continue;
    }
    std::string inline_value;
    bool has_inline = false;
    if (const auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = word.substr(eq + 1);
      word = word.substr(0, eq);
      has_inline = true;
    }
    const OptionSpec* spec = find(word);
    if (!spec)
      return makeError("unknown option '" + word + "' (see " + program() + " --help)");
    if (values_.count(word))
      return makeError("option '" + word + "' is given more than once");
    if (spec->value_name.empty()) {
      if (has_inline) return makeError("option '" + word + "' takes no value");
      values_[word] = "";
      continue;
    }
    if (has_inline) {
      values_[word] = inline_value;
    } else {
      if (i + 1 >= args.size())
        return makeError("option '" + word + "' needs a value (" + word + " " + spec->value_name + ")");
      values_[word] = args[++i];
    }
  }
  return {};
}

std::string CommandLine::value(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

Result<long long> CommandLine::integer(const std::string& name, long long fallback, long long lo,
                                       long long hi) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || n < lo || n > hi)
    return makeError("option '" + name + "': '" + text + "' is not allowed; allowed: an integer from " +
                     std::to_string(lo) + " to " + std::to_string(hi));
  return n;
}

Result<double> CommandLine::number(const std::string& name, double fallback, double lo, double hi, bool lo_included) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  // Decimal only: strtod alone would also take " 5", "0x10" and "infinity". libstdc++'s regex
  // recurses once a character: a long text is refused before it is matched.
  static const std::regex decimal(R"([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)");
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(text.c_str(), &end);
  if (text.size() > 64 || !std::regex_match(text, decimal) || *end != '\0' || errno != 0 || !std::isfinite(x) || x < lo || (x == lo && !lo_included) || x > hi) {
    std::ostringstream range;
    range << (lo_included ? "a number from " : "a number above ") << lo << (lo_included ? " to " : " and at most ") << hi;
    return makeError("option '" + name + "': '" + text + "' is not allowed; allowed: " + range.str());
  }
  return x;
}

std::string CommandLine::helpText() const {
  std::ostringstream out;
  out << "Usage: " << program() << " " << usage_ << "\n\n" << summary_ << "\n\nOptions:\n";
  for (const auto& option : options_) {
    std::string left = "  " + option.name + (option.value_name.empty() ? "" : " " + option.value_name);
    if (left.size() < 26) left.resize(26, ' ');
    else left += "\n" + std::string(26, ' ');
    out << left << option.help << "\n";
  }
  out << "  --help                  show this help\n";
  return out.str();
}

int fail(const std::string& program, const std::string& message, int code) {
  // One line, and nothing a terminal would act on: a carriage return or an escape sequence in a
  // value the user gave would redraw the line.
  std::string line = message;
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  std::fprintf(stderr, "%s: %s\n", program.c_str(), line.c_str());
  return code;
}

}  // namespace streetgan::cli
