#include "core/util/progress_line.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace streetgan {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxTaskBytes = 64;

bool isTask(const std::string& task) {
  if (task.empty() || task.size() > kMaxTaskBytes) return false;
  return std::all_of(task.begin(), task.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// A detail fits the line whatever it holds: even escaped (6 bytes a byte at worst), 512 bytes stay
// far below the line's 4 KiB.
std::string boundedDetail(const std::string& detail) {
  if (detail.size() <= kMaxProgressDetailBytes) return detail;
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // "…"
  std::size_t cut = kMaxProgressDetailBytes - kEllipsis.size();
  // Back to the start of the character cut through, so no UTF-8 sequence is split.
  while (cut > 0 && (static_cast<unsigned char>(detail[cut]) & 0xC0) == 0x80) --cut;
  return detail.substr(0, cut) + std::string(kEllipsis);
}

// A count is a JSON integer from 0 to INT64_MAX; a float (3.0), a string or a negative is not.
std::optional<std::int64_t> countField(const json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(value);
  }
  if (it->is_number_integer()) {
    const auto value = it->get<std::int64_t>();
    if (value < 0) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

std::optional<ProgressLine> parseBody(std::string_view body) {
  const json object = json::parse(body.data(), body.data() + body.size(), nullptr, false);
  if (!object.is_object()) return std::nullopt;
  ProgressLine line;
  const auto task = object.find("task");
  if (task == object.end() || !task->is_string()) return std::nullopt;
  line.task = task->get<std::string>();
  if (!isTask(line.task)) return std::nullopt;
  const auto done = countField(object, "done");
  const auto total = countField(object, "total");
  if (!done || !total || *total < 1 || *done > *total) return std::nullopt;
  line.done = *done;
  line.total = *total;
  if (const auto detail = object.find("detail"); detail != object.end()) {
    if (!detail->is_string()) return std::nullopt;
    line.detail = detail->get<std::string>();
  }
  return line;
}

}  // namespace

std::string formatProgressLine(const ProgressLine& line) {
  const std::int64_t total = std::max<std::int64_t>(1, line.total);
  // ordered_json: the fields in the documented order (task, done, total, detail), for a human reading along.
  nlohmann::ordered_json body = {
      {"task", line.task}, {"done", std::clamp<std::int64_t>(line.done, 0, total)}, {"total", total}};
  if (!line.detail.empty()) body["detail"] = boundedDetail(line.detail);
  // replace: a path that is not UTF-8 is still one line, never a type_error.
  return std::string(kProgressLinePrefix) + body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void printProgressLine(std::FILE* stream, const ProgressLine& line) {
  std::fprintf(stream, "%s\n", formatProgressLine(line).c_str());
  std::fflush(stream);
}

std::optional<ProgressLine> parseProgressLine(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (text.size() > kMaxProgressLineBytes) return std::nullopt;
  if (text.substr(0, kProgressLinePrefix.size()) != kProgressLinePrefix) return std::nullopt;
  // The JSON lexer takes a NUL byte for the end of its input: what follows one would go unread.
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  try {
    return parseBody(text.substr(kProgressLinePrefix.size()));
  } catch (...) {  // only an allocation failure can get here: that is no progress line either
    return std::nullopt;
  }
}

}  // namespace streetgan
