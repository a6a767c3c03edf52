#include "core/runs/event_stream_reader.h"

namespace streetgan {

std::vector<StreamEvent> EventStreamReader::feed(std::string_view bytes) {
  std::vector<StreamEvent> out;
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    line_bytes_ += piece.size();
    if (!overlong_) {
      if (pending_.size() + piece.size() > max_line_bytes_) {
        overlong_ = true;
        pending_.clear();
        pending_.shrink_to_fit();
      } else {
        pending_.append(piece);
      }
    }
    if (newline == std::string_view::npos) break;
    complete_bytes_ += line_bytes_ + 1;
    line_bytes_ = 0;
    if (overlong_) {
      ++malformed_;
      if (samples_.size() < 10) samples_.push_back("(a line longer than " + std::to_string(max_line_bytes_) + " bytes)");
      overlong_ = false;
    } else {
      parseLine(pending_, out);
    }
    pending_.clear();
    bytes.remove_prefix(newline + 1);
  }
  return out;
}

std::vector<StreamEvent> EventStreamReader::finish() {
  std::vector<StreamEvent> out;
  if (overlong_) {
    ++malformed_;
    overlong_ = false;
  } else if (!pending_.empty()) {
    parseLine(pending_, out);
  }
  pending_.clear();
  complete_bytes_ += line_bytes_;
  line_bytes_ = 0;
  return out;
}

void EventStreamReader::parseLine(std::string_view line, std::vector<StreamEvent>& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // blank lines are not events
  nlohmann::json body = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("type") || !body["type"].is_string()) {
    ++malformed_;
    if (samples_.size() < 10) samples_.emplace_back(line.substr(0, 200));
    return;
  }
  StreamEvent event;
  event.type = body["type"].get<std::string>();
  if (body.contains("time") && body["time"].is_number()) event.time = body["time"].get<double>();
  event.body = std::move(body);
  ++events_;
  out.push_back(std::move(event));
}

}  // namespace streetgan
