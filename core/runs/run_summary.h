#pragma once
// RunSummary: what a list of runs shows about one run directory (name, preset, device, state,
// progress, last loss, best Parzen, the latest quality figures and the quality alarms), read from
// its config.json, events.jsonl and evaluations/.
//
// RunSummaryBuilder reads the event log incrementally: feed() it the bytes that follow the ones
// it has read (bytesRead()), so a run that is still going is followed without reading its log
// again. Only complete lines count; a last line without its newline waits for the next feed().
// Malformed lines are skipped and counted. Step events are not parsed one by one (a long run logs
// millions): the builder keeps the last one and parses it when asked for the summary.
//
// The state comes from the last process's events: its run_finished status when it wrote one;
// otherwise running while that process (the run_started event's pid, with its start time where
// the event carries one) is alive, and failed once it is gone. Nothing here throws for bad files;
// readRunSummary() reports a folder that is not a run.
#include "core/runs/event_stream_reader.h"
#include "core/util/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace streetgan {

enum class RunState {
  NotStarted,  ///< no run_started event yet
  Running,     ///< its process is alive and has not finished
  Stopped,     ///< run_finished: stopped (a checkpoint was written; it can resume)
  Completed,   ///< run_finished: completed
  Failed,      ///< run_finished: failed, or its process is gone without a run_finished
};

const char* runStateName(RunState state);

struct RunSummary {
  std::string path;             ///< the run directory
  std::string name;             ///< the folder's name
  std::string preset;           ///< config.json "preset" ("" when unknown)
  std::string device;           ///< of the latest process ("cpu", "cuda:0"); rank 0's in a distributed run
  std::int64_t world_size = 1;  ///< ranks of the latest process (run_started "world_size")
  std::int64_t nodes = 1;       ///< hosts those ranks ran on (run_started "nodes")
  std::string backend;          ///< their collective backend ("gloo", "nccl"); empty alone
  RunState state = RunState::NotStarted;
  std::string message;          ///< why it failed, or a problem reading it
  std::int64_t epoch = 0;       ///< completed epochs
  std::int64_t epochs = 0;      ///< epochs the config asks for
  std::int64_t step = 0;
  std::int64_t images_seen = 0;
  std::optional<double> loss_d, loss_g;       ///< of the last step
  std::optional<double> best_parzen;          ///< highest Parzen mean log-likelihood
  std::optional<std::int64_t> best_parzen_epoch;
  int evaluations = 0;          ///< Parzen result files in evaluations/
  /// SWD ×10³ and copy rate: of the newest `metrics` event that has the figure, else of the newest
  /// evaluations/metrics-*.json (the last in checkpoint order that reads); nullopt when neither has it.
  std::optional<double> swd, copy_rate;
  std::int64_t alarms = 0;      ///< quality alarms (`warning` events with an alarm) in events.jsonl
  std::string last_alarm;       ///< the newest alarm's message ("" when none)
  std::int64_t pid = 0;         ///< of the latest process (0 when unknown); as logged, not yet checked
  std::uint64_t pid_start_time = 0;  ///< its start time (run_started "pid_start_time"); 0: not logged
  double started_time = 0;      ///< unix seconds of the first run_started
  double last_event_time = 0;   ///< unix seconds of the newest event
  std::int64_t malformed_lines = 0;
};

class RunSummaryBuilder {
public:
  explicit RunSummaryBuilder(std::string run_dir);

  /// Reads config.json (preset, epochs); a missing or unreadable one is noted in the message.
  void readConfig();
  /// Reads the Parzen results saved in evaluations/parzen-*.json (`streetgan parzen --save`), so
  /// the best Parzen covers them too, and the newest readable evaluations/metrics-*.json
  /// (`streetgan metrics --save`) for the quality figures; unreadable files are skipped.
  void readEvaluations();
  /// The next bytes of events.jsonl.
  void feed(std::string_view bytes);
  /// Bytes of events.jsonl consumed up to the last complete line: where to read on from.
  std::uint64_t bytesRead() const { return reader_.completeBytes(); }

  /// The summary so far; `process_alive` says whether the latest process still runs (see
  /// trainingProcessAlive) and decides between running and failed when it left no run_finished.
  RunSummary summary(bool process_alive) const;
  /// The pid of the latest process (0 when none logged one).
  std::int64_t pid() const { return summary_.pid; }
  /// Its start time as logged (field 22 of /proc/PID/stat; 0 when the run logged none).
  std::uint64_t pidStartTime() const { return summary_.pid_start_time; }
  /// True once the latest process logged its run_finished.
  bool finished() const { return finished_; }

private:
  void consumeLine(std::string_view line);
  void consumeEvent(const StreamEvent& event);

  RunSummary summary_;
  EventStreamReader reader_;
  std::string last_step_line_;
  bool finished_ = false;
  std::string finished_status_;
  std::optional<double> evaluated_best_;
  std::int64_t evaluated_best_epoch_ = 0;
  std::optional<double> saved_swd_, saved_copy_rate_;  ///< of the newest metrics file
};

/// The largest event log read (a run logging every step for weeks writes some hundreds of MB).
inline constexpr std::uint64_t kMaxEventLogBytes = std::uint64_t{1} << 30;

/// Feeds `builder` the events.jsonl at `path` from `offset` on, and moves `offset` past what it
/// read: a regular file only (a FIFO or a device is refused on the open descriptor, without
/// waiting for a writer) of at most kMaxEventLogBytes. The Error names the file and says why.
Status feedEventLog(RunSummaryBuilder& builder, const std::string& path, std::uint64_t& offset);

/// Reads a run directory's summary (config.json, then the whole events.jsonl) and checks whether
/// its process is alive. Fails when the folder holds neither config.json nor events.jsonl.
Result<RunSummary> readRunSummary(const std::string& run_dir);

/// Whether process `pid` is the run's and alive: a valid pid (1 ≤ pid < pid_max), alive, and
/// (where /proc tells) its command line contains `program_name` and, when `start_time` is not 0,
/// it started at that time — so a recycled pid of another process does not count. See
/// checkTrainingProcess() in core/runs/process_identity.h.
bool trainingProcessAlive(std::int64_t pid, std::string_view program_name = "streetgan", std::uint64_t start_time = 0);

}  // namespace streetgan
