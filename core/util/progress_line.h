#pragma once
// ProgressLine: the one machine-readable progress line of every long `streetgan` command given
// `--progress` (parzen, cache build, demo-data, import), written here and parsed here, so that
// whatever follows a command (the studio's jobs) reads every command's progress the same way
// (docs/events.md, "Progress lines of long commands"). A line is a prefix naming the format's
// version, then one JSON object, on stderr:
//
//   progress/1 {"task":"demo-data","done":16,"total":1000}
//   progress/1 {"task":"parzen-run","done":2,"total":10,"detail":"runs/a/checkpoints/step-30.pt"}
//
// formatProgressLine() never throws (beyond an allocation failure): a detail longer than
// kMaxProgressDetailBytes is cut, bytes that are not UTF-8 are replaced, so the line always fits
// kMaxProgressLineBytes. parseProgressLine() reads one line another process wrote: anything that
// is not a whole, valid line of this version (another prefix or version, a line over
// kMaxProgressLineBytes, a NUL byte, malformed JSON, a field missing or out of range) gives
// nothing, never an exception; fields it does not know are ignored, so a later command may add some.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace streetgan {

struct ProgressLine {
  std::string task;        ///< what the command is doing: 1 to 64 of [a-z0-9-] (kProgressTask…)
  std::int64_t done = 0;   ///< units done so far: 0 ≤ done ≤ total
  std::int64_t total = 1;  ///< units in all, at least 1
  std::string detail;      ///< what is being worked on now, for a label; may be empty
};

/// The task of each long command's lines, shared by the command writing them and the job reading
/// them (docs/events.md lists what each counts).
inline constexpr char kProgressTaskParzen[] = "parzen-estimate";  ///< one estimate: percent, of 100
inline constexpr char kProgressTaskParzenRun[] = "parzen-run";    ///< checkpoints of a run scored
inline constexpr char kProgressTaskCacheBuild[] = "cache-build";  ///< images decoded into a cache
inline constexpr char kProgressTaskDemoData[] = "demo-data";      ///< demo images rendered
inline constexpr char kProgressTaskImport[] = "import";           ///< a checkpoint imported: 0 or 1 of 1
inline constexpr char kProgressTaskMetrics[] = "metrics";         ///< quality metrics: stages of the suite done

/// What every line of this version starts with; a reader ignores lines of a version it does not know.
inline constexpr std::string_view kProgressLinePrefix = "progress/1 ";
/// A longer line (its newline not counted) is not a progress line.
inline constexpr std::size_t kMaxProgressLineBytes = 4096;
/// The writer cuts a longer detail (at a character boundary, ending it with "…").
inline constexpr std::size_t kMaxProgressDetailBytes = 512;

/// One line, without its newline; `detail` only when it is not empty. `done` is clamped into
/// [0, total] and `total` to at least 1; the task is written as given (a task outside the rule
/// above makes a line no parser accepts).
std::string formatProgressLine(const ProgressLine& line);

/// Writes formatProgressLine(line) and a newline to `stream`, and flushes it: a reader sees each
/// line as soon as it is written.
void printProgressLine(std::FILE* stream, const ProgressLine& line);

/// The progress line `text` holds (one line; a trailing "\n" or "\r\n" is allowed), or nothing
/// when it is not one.
std::optional<ProgressLine> parseProgressLine(std::string_view text);

}  // namespace streetgan
