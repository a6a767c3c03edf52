#pragma once
// EventStreamReader: the reader side of the event protocol (docs/events.md). Turns the bytes of an
// event stream — a training process's stdout, or events.jsonl followed from a byte offset — into
// parsed events, one per complete line, whatever chunks the bytes arrive in. A line that is not a
// JSON object with a string "type" is skipped and counted, never fatal; so is a line nested deeper
// than kMaxEventDepth, and a line longer than `max_line_bytes` (its bytes are dropped as they
// arrive, so memory stays bounded). Each event is parsed once, into its typed RunEvent
// (core/runs/run_event.h), its whole object kept beside it so fields this version does not know
// survive. It is the one line splitter of event streams: a reader that wants to skip most lines
// unparsed (RunSummary skips all steps but the last) takes the lines from feedLines() and parses
// the ones it wants with parse(). Not thread-safe; one reader per stream.
#include "core/runs/run_event.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace streetgan {

struct StreamEvent {
  std::string type;
  double time = 0;       ///< unix seconds ("time"), 0 when absent
  nlohmann::json body;   ///< the whole object, unknown fields included
  events::RunEvent event;  ///< the typed event; std::monostate for a type this version does not know
};

/// An event of `type` made from its object `body` (which need not hold "type" and "time"), typed as
/// the reader types the events it reads: for events made in memory (a test's, a replayed log's).
StreamEvent makeStreamEvent(std::string type, double time, nlohmann::json body);

class EventStreamReader {
public:
  explicit EventStreamReader(std::size_t max_line_bytes = 16u << 20) : max_line_bytes_(max_line_bytes) {}

  /// The deepest nesting of arrays and objects an event may have; a deeper line is malformed.
  static constexpr std::size_t kMaxEventDepth = 64;

  /// Parses every line completed by `bytes`; a partial last line waits for the next call.
  std::vector<StreamEvent> feed(std::string_view bytes);
  /// The stream ended: parses a last line that had no newline (a killed writer's last words).
  std::vector<StreamEvent> finish();

  using LineSink = std::function<void(std::string_view line)>;
  /// Splits without parsing: calls `on_line` with every line completed by `bytes` (its newline
  /// removed); a line over the limit is counted as malformed and never passed on.
  void feedLines(std::string_view bytes, const LineSink& on_line);
  /// The stream ended: passes a last line that had no newline.
  void finishLines(const LineSink& on_line);
  /// Parses one line into an event: nullopt for a blank line and, counted, for a malformed one.
  std::optional<StreamEvent> parse(std::string_view line);

  std::int64_t malformedLines() const { return malformed_; }
  std::int64_t eventsRead() const { return events_; }
  /// Bytes of the stream up to the end of the last complete line: where to follow on from.
  std::uint64_t completeBytes() const { return complete_bytes_; }
  /// The first malformed lines (up to 10, shortened to 200 bytes), for a diagnostic.
  const std::vector<std::string>& malformedSamples() const { return samples_; }

private:
  void malformed(std::string sample);

  std::size_t max_line_bytes_;
  std::string pending_;
  std::uint64_t line_bytes_ = 0;  // bytes of the current line so far, dropped ones included
  bool overlong_ = false;  // dropping the rest of a line that grew past the limit
  std::int64_t malformed_ = 0;
  std::int64_t events_ = 0;
  std::uint64_t complete_bytes_ = 0;
  std::vector<std::string> samples_;
};

}  // namespace streetgan
