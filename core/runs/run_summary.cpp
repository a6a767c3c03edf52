#include "core/runs/run_summary.h"

#include "core/runs/parzen_evaluation_file.h"
#include "core/runs/quality_evaluation_file.h"
#include "core/runs/event_fields.h"
#include "core/runs/process_identity.h"
#include "core/runs/run_directory.h"
#include "core/util/json_value.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

namespace streetgan {

namespace {

using json = nlohmann::json;

// Our writer's keys come sorted ({"d_g_z1":…,…,"time":…,"type":"step","v":1}), so its step lines
// end in `"type":"step","v":1}`; a writer that puts "type" first is recognised too. Any other step
// line is parsed like every event. A line cut short (a killed writer's last words, with a resumed
// run appending after it) fails both tests, is parsed, and counted.
bool looksLikeStep(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  constexpr std::string_view kSortedEnd = "\"type\":\"step\",\"v\":1}";
  if (line.size() >= kSortedEnd.size() && line.substr(line.size() - kSortedEnd.size()) == kSortedEnd) return true;
  return !line.empty() && line.back() == '}' &&
         line.substr(0, 40).find("\"type\":\"step\"") != std::string_view::npos;
}

/// The figure `name` of `figures` when it is a finite number.
std::optional<double> finiteFigure(const std::map<std::string, double>& figures, const char* name) {
  const auto it = figures.find(name);
  if (it == figures.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

bool isFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

}  // namespace

const char* runStateName(RunState state) {
  switch (state) {
    case RunState::NotStarted: return "not started";
    case RunState::Running: return "running";
    case RunState::Stopped: return "stopped";
    case RunState::Completed: return "completed";
    case RunState::Failed: return "failed";
  }
  return "?";
}

RunSummaryBuilder::RunSummaryBuilder(std::string run_dir) {
  summary_.path = std::move(run_dir);
  while (summary_.path.size() > 1 && summary_.path.back() == '/') summary_.path.pop_back();
  const std::size_t slash = summary_.path.find_last_of('/');
  summary_.name = slash == std::string::npos ? summary_.path : summary_.path.substr(slash + 1);
}

void RunSummaryBuilder::readConfig() {
  const std::string path = RunDirectory(summary_.path).configPath();
  std::ifstream in(path);
  if (!in) {
    summary_.message = "no " + std::filesystem::path(path).filename().string();
    return;
  }
  const json config = json::parse(in, nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    summary_.message = path + " is not a JSON object";
    return;
  }
  summary_.preset = jsonString(config, "preset");
  summary_.epochs = jsonInteger(config, "epochs").value_or(summary_.epochs);
}

void RunSummaryBuilder::readEvaluations() {
  summary_.evaluations = 0;
  evaluated_best_.reset();
  for (const std::string& path : ParzenEvaluationFile::list(summary_.path)) {
    const auto evaluation = ParzenEvaluationFile::read(path);
    if (!evaluation) continue;
    ++summary_.evaluations;
    const auto best = evaluation->best();
    if (best && (!evaluated_best_ || best->mean_ll > *evaluated_best_)) {
      evaluated_best_ = best->mean_ll;
      evaluated_best_epoch_ = best->epoch;
    }
  }
  // The quality figures of the newest metrics file: the last in checkpoint order that reads.
  saved_swd_.reset();
  saved_copy_rate_.reset();
  const std::vector<std::string> metrics_files = QualityEvaluationFile::list(summary_.path);
  for (auto it = metrics_files.rbegin(); it != metrics_files.rend(); ++it) {
    const auto evaluation = QualityEvaluationFile::read(*it);
    if (!evaluation) continue;
    saved_swd_ = finiteFigure(evaluation->metrics, quality_figure::kSwd);
    saved_copy_rate_ = finiteFigure(evaluation->metrics, quality_figure::kCopyRate);
    break;
  }
}

void RunSummaryBuilder::feed(std::string_view bytes) {
  reader_.feedLines(bytes, [this](std::string_view line) { consumeLine(line); });
}

void RunSummaryBuilder::consumeLine(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (looksLikeStep(line)) {
    last_step_line_.assign(line);
    return;
  }
  const auto event = reader_.parse(line);
  if (!event) return;
  // A step line another writer ordered differently: the last one is kept as it came, parsed again
  // only when asked for the summary.
  if (std::holds_alternative<events::Step>(event->event)) last_step_line_.assign(line);
  else consumeEvent(*event);
}

void RunSummaryBuilder::consumeEvent(const StreamEvent& event) {
  using events::EpochEnd, events::Parzen, events::RunFinished, events::RunStarted;
  RunSummary& s = summary_;
  if (const auto time = jsonNumber(event.body, events::field::kTime)) s.last_event_time = *time;
  if (const auto* started = std::get_if<RunStarted>(&event.event)) {
    if (s.state == RunState::NotStarted) s.started_time = s.last_event_time;
    s.state = RunState::Running;
    finished_ = false;
    finished_status_.clear();
    s.message.clear();
    s.device = started->device;
    s.world_size = started->world_size.value_or(1);
    s.nodes = started->nodes.value_or(1);
    s.backend = started->backend;
    s.pid = started->pid.value_or(0);
    // Runs logged before the start time was: 0, and only the pid is checked (see process_identity.h).
    s.pid_start_time = started->pid_start_time;
    s.epoch = started->epoch.value_or(s.epoch);
    s.step = started->step.value_or(s.step);
    s.images_seen = started->images_seen.value_or(s.images_seen);
    if (started->has_config) {
      s.epochs = started->config_epochs.value_or(s.epochs);
      if (!started->preset.empty()) s.preset = started->preset;
    }
    // Steps the previous process logged past its last checkpoint are replaced by this one's.
    last_step_line_.clear();
  } else if (const auto* end = std::get_if<EpochEnd>(&event.event)) {
    s.epoch = end->epoch.value_or(s.epoch);
    s.epochs = end->epochs.value_or(s.epochs);
  } else if (const auto* parzen = std::get_if<Parzen>(&event.event)) {
    if (std::isfinite(parzen->mean_ll) && (!s.best_parzen || parzen->mean_ll > *s.best_parzen)) {
      s.best_parzen = parzen->mean_ll;
      s.best_parzen_epoch = parzen->epoch.value_or(0);
    }
  } else if (const auto* metrics = std::get_if<events::Metrics>(&event.event)) {
    // The event keeps finite figures only.
    for (const auto& [name, value] : metrics->figures) {
      if (name == quality_figure::kSwd) s.swd = value;
      else if (name == quality_figure::kCopyRate) s.copy_rate = value;
    }
  } else if (const auto* warning = std::get_if<events::Warning>(&event.event)) {
    if (warning->alarm) {
      ++s.alarms;
      s.last_alarm = warning->message;
    }
  } else if (const auto* error = std::get_if<events::Error>(&event.event)) {
    s.message = error->message;
  } else if (const auto* finished = std::get_if<RunFinished>(&event.event)) {
    finished_ = true;
    finished_status_ = finished->status;
    s.epoch = finished->epoch.value_or(s.epoch);
    if (!finished->message.empty()) s.message = finished->message;
  }
}

RunSummary RunSummaryBuilder::summary(bool process_alive) const {
  RunSummary s = summary_;
  s.malformed_lines = reader_.malformedLines();
  if (!last_step_line_.empty()) {
    // Parsed here, once, rather than every step as it comes (a long run logs millions).
    const json body = json::parse(last_step_line_, nullptr, false);
    if (body.is_object()) {
      const events::RunEvent parsed = events::parseRunEvent(events::type::kStep, body);
      const auto& step = std::get<events::Step>(parsed);
      s.step = step.step.value_or(s.step);
      s.images_seen = step.images_seen.value_or(s.images_seen);
      s.loss_d = std::isfinite(step.loss_d) ? std::optional<double>(step.loss_d) : std::nullopt;
      s.loss_g = std::isfinite(step.loss_g) ? std::optional<double>(step.loss_g) : std::nullopt;
      if (const auto time = jsonNumber(body, events::field::kTime); time && *time > s.last_event_time) s.last_event_time = *time;
    } else {
      ++s.malformed_lines;
    }
  }
  if (!s.swd) s.swd = saved_swd_;
  if (!s.copy_rate) s.copy_rate = saved_copy_rate_;
  if (evaluated_best_ && (!s.best_parzen || *evaluated_best_ > *s.best_parzen)) {
    s.best_parzen = evaluated_best_;
    s.best_parzen_epoch = evaluated_best_epoch_;
  }
  if (s.state == RunState::NotStarted) return s;
  if (finished_) {
    if (finished_status_ == "completed") {
      s.state = RunState::Completed;
    } else if (finished_status_ == "stopped") {
      s.state = RunState::Stopped;
    } else {
      s.state = RunState::Failed;
      if (s.message.empty()) s.message = "training failed";
    }
  } else if (process_alive) {
    s.state = RunState::Running;
  } else {
    s.state = RunState::Failed;
    if (s.message.empty()) s.message = "the training process ended without finishing the run (killed or crashed)";
  }
  return s;
}

Status feedEventLog(RunSummaryBuilder& builder, const std::string& path, std::uint64_t& offset) {
  auto file = RegularFile::open(path);
  if (!file) return makeError(file.error());
  const auto size = static_cast<std::uint64_t>(file->size());
  if (size > kMaxEventLogBytes)
    return makeError(path + ": " + std::to_string(size >> 20) + " MiB, more than the " + std::to_string(kMaxEventLogBytes >> 20) +
                     " MiB a run's event log is read up to; not read");
  std::string chunk(1 << 20, '\0');
  while (offset < size) {
    const ssize_t n = ::pread(file->descriptor(), chunk.data(), std::min<std::uint64_t>(chunk.size(), size - offset),
                              static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return makeError(path + ": " + std::strerror(errno));
    if (n == 0) break;
    builder.feed(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
    offset += static_cast<std::uint64_t>(n);
  }
  return {};
}

Result<RunSummary> readRunSummary(const std::string& run_dir) {
  RunSummaryBuilder builder(run_dir);
  const RunDirectory run(run_dir);
  const std::string events = run.eventsPath();
  const bool has_config = isFile(run.configPath());
  const bool has_events = isFile(events);
  if (!RunDirectory::isRun(run_dir))
    return makeError(run_dir + " is not a run folder (it has no " + RunDirectory::whatMakesARun() + ")");
  if (has_config) builder.readConfig();
  builder.readEvaluations();
  std::uint64_t offset = 0;
  if (has_events)
    if (Status read = feedEventLog(builder, events, offset); !read) return makeError(read.error());
  return builder.summary(!builder.finished() &&
                         trainingProcessAlive(builder.pid(), "streetgan", builder.pidStartTime()));
}

bool trainingProcessAlive(std::int64_t pid, std::string_view program_name, std::uint64_t start_time) {
  return checkTrainingProcess(pid, program_name, start_time) == ProcessCheck::Alive;
}

}  // namespace streetgan
