#include "core/runs/event_stream_reader.h"

#include "core/runs/event_fields.h"
#include "core/util/json_value.h"


namespace streetgan {

void EventStreamReader::feedLines(std::string_view bytes, const LineSink& on_line) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    line_bytes_ += piece.size();
    if (!overlong_) {
      if (pending_.size() + piece.size() > max_line_bytes_) {
        overlong_ = true;
        pending_.clear();
        pending_.shrink_to_fit();
      } else if (newline != std::string_view::npos && pending_.empty()) {
        // The whole line is in this chunk: passed on without a copy.
        complete_bytes_ += line_bytes_ + 1;
        line_bytes_ = 0;
        on_line(piece);
        bytes.remove_prefix(newline + 1);
        continue;
      } else {
        pending_.append(piece);
      }
    }
    if (newline == std::string_view::npos) break;
    complete_bytes_ += line_bytes_ + 1;
    line_bytes_ = 0;
    if (overlong_) {
      malformed("(a line longer than " + std::to_string(max_line_bytes_) + " bytes)");
      overlong_ = false;
    } else {
      on_line(pending_);
    }
    pending_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void EventStreamReader::finishLines(const LineSink& on_line) {
  if (overlong_) {
    ++malformed_;
    overlong_ = false;
  } else if (!pending_.empty()) {
    on_line(pending_);
  }
  pending_.clear();
  complete_bytes_ += line_bytes_;
  line_bytes_ = 0;
}

std::vector<StreamEvent> EventStreamReader::feed(std::string_view bytes) {
  std::vector<StreamEvent> out;
  feedLines(bytes, [&](std::string_view line) {
    if (auto event = parse(line)) out.push_back(std::move(*event));
  });
  return out;
}

std::vector<StreamEvent> EventStreamReader::finish() {
  std::vector<StreamEvent> out;
  finishLines([&](std::string_view line) {
    if (auto event = parse(line)) out.push_back(std::move(*event));
  });
  return out;
}

std::optional<StreamEvent> EventStreamReader::parse(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;  // blank lines are not events
  // An event is a few levels deep; a line nested deeper is no event of ours, and refused before a
  // reader could recurse through it (printing a value nested 100,000 deep overflows the stack).
  // (Counting the brackets first is cheap; only a line with many walks them in order.)
  std::size_t brackets = 0;
  for (const char c : line) brackets += static_cast<std::size_t>((c | 0x20) == '{');  // '[' | 0x20 is '{'

  if (brackets > kMaxEventDepth && jsonNestingDepth(line) > kMaxEventDepth) {
    malformed("(a line nested deeper than " + std::to_string(kMaxEventDepth) + " levels)");
    return std::nullopt;
  }
  nlohmann::json body = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  const auto type = body.is_object() ? body.find(events::field::kType) : body.end();
  if (body.is_discarded() || !body.is_object() || type == body.end() || !type->is_string()) {
    malformed(std::string(line.substr(0, 200)));
    return std::nullopt;
  }
  const auto time = body.find(events::field::kTime);
  const double seconds = time != body.end() && time->is_number() ? time->get<double>() : 0;
  std::string type_name = type->get<std::string>();
  ++events_;
  return makeStreamEvent(std::move(type_name), seconds, std::move(body));
}

StreamEvent makeStreamEvent(std::string type, double time, nlohmann::json body) {
  StreamEvent event;
  event.type = std::move(type);
  event.time = time;
  event.event = events::parseRunEvent(event.type, body);
  event.body = std::move(body);
  return event;
}

void EventStreamReader::malformed(std::string sample) {
  ++malformed_;
  if (samples_.size() < 10) samples_.push_back(std::move(sample));
}

}  // namespace streetgan
