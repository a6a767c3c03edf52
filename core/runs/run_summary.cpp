#include "core/runs/run_summary.h"

#include "core/runs/process_identity.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace streetgan {

namespace {

using json = nlohmann::json;

std::optional<double> numberAt(const json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// An integer as written, or `fallback`: a number that does not fit in int64 (a float of 1e300,
// an unsigned above INT64_MAX) is not cast, which would be undefined.
std::int64_t integerAt(const json& body, const char* key, std::int64_t fallback) {
  const auto it = body.find(key);
  if (it == body.end()) return fallback;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    return value <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(value) : fallback;
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    const double value = it->get<double>();
    // -2^63 ≤ value < 2^63, both exact in a double.
    if (std::isfinite(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0)
      return static_cast<std::int64_t>(value);
  }
  return fallback;
}

std::string stringAt(const json& body, const char* key) {
  const auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Our writer puts "type" second ({"v":1,"type":"step",...}); a step line from another writer that
// orders its keys differently is simply parsed like any other event. A line cut short (a killed
// writer's last words, with a resumed run appending after it) is parsed too, and counted.
bool looksLikeStep(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  return !line.empty() && line.back() == '}' &&
         line.substr(0, 40).find("\"type\":\"step\"") != std::string_view::npos;
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
  const std::string path = summary_.path + "/config.json";
  std::ifstream in(path);
  if (!in) {
    summary_.message = "no config.json";
    return;
  }
  const json config = json::parse(in, nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    summary_.message = path + " is not a JSON object";
    return;
  }
  summary_.preset = stringAt(config, "preset");
  summary_.epochs = integerAt(config, "epochs", summary_.epochs);
}

void RunSummaryBuilder::readEvaluations() {
  namespace fs = std::filesystem;
  std::error_code error;
  summary_.evaluations = 0;
  evaluated_best_.reset();
  for (const auto& entry : fs::directory_iterator(summary_.path + "/evaluations", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("parzen-", 0) != 0 || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const json result = json::parse(in, nullptr, false);
    if (!result.is_object()) continue;
    ++summary_.evaluations;
    auto consider = [this](const json& row) {
      const auto mean = numberAt(row, "mean_ll");
      if (mean && (!evaluated_best_ || *mean > *evaluated_best_)) {
        evaluated_best_ = mean;
        evaluated_best_epoch_ = integerAt(row, "epoch", 0);
      }
    };
    consider(result);
    if (result.contains("checkpoints") && result["checkpoints"].is_array())
      for (const json& row : result["checkpoints"]) consider(row);
  }
}

void RunSummaryBuilder::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      pending_.append(bytes);
      return;
    }
    complete_bytes_ += pending_.size() + newline + 1;
    if (pending_.empty()) {
      consumeLine(bytes.substr(0, newline));
    } else {
      pending_.append(bytes.substr(0, newline));
      consumeLine(pending_);
      pending_.clear();
    }
    bytes.remove_prefix(newline + 1);
  }
}

void RunSummaryBuilder::consumeLine(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (looksLikeStep(line)) {
    last_step_line_.assign(line);
    return;
  }
  const json body = json::parse(line.begin(), line.end(), nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("type") || !body["type"].is_string()) {
    ++summary_.malformed_lines;
    return;
  }
  const std::string type = body["type"].get<std::string>();
  if (const auto time = numberAt(body, "time")) summary_.last_event_time = *time;
  RunSummary& s = summary_;
  if (type == "run_started") {
    if (s.state == RunState::NotStarted) s.started_time = s.last_event_time;
    s.state = RunState::Running;
    finished_ = false;
    finished_status_.clear();
    s.message.clear();
    s.device = stringAt(body, "device");
    s.world_size = integerAt(body, "world_size", 1);
    s.backend = stringAt(body, "backend");
    s.pid = integerAt(body, "pid", 0);
    // Runs logged before the start time was: 0, and only the pid is checked (see process_identity.h).
    s.pid_start_time = static_cast<std::uint64_t>(std::max<std::int64_t>(0, integerAt(body, "pid_start_time", 0)));
    s.epoch = integerAt(body, "epoch", s.epoch);
    s.step = integerAt(body, "step", s.step);
    s.images_seen = integerAt(body, "images_seen", s.images_seen);
    if (body.contains("config") && body["config"].is_object()) {
      s.epochs = integerAt(body["config"], "epochs", s.epochs);
      const std::string preset = stringAt(body["config"], "preset");
      if (!preset.empty()) s.preset = preset;
    }
    // Steps the previous process logged past its last checkpoint are replaced by this one's.
    last_step_line_.clear();
  } else if (type == "step") {
    last_step_line_.assign(line);
  } else if (type == "epoch_end") {
    s.epoch = integerAt(body, "epoch", s.epoch);
    s.epochs = integerAt(body, "epochs", s.epochs);
  } else if (type == "parzen") {
    const auto mean = numberAt(body, "mean_ll");
    if (mean && (!s.best_parzen || *mean > *s.best_parzen)) {
      s.best_parzen = mean;
      s.best_parzen_epoch = integerAt(body, "epoch", 0);
    }
  } else if (type == "error") {
    s.message = stringAt(body, "message");
  } else if (type == "run_finished") {
    finished_ = true;
    finished_status_ = stringAt(body, "status");
    s.epoch = integerAt(body, "epoch", s.epoch);
    const std::string message = stringAt(body, "message");
    if (!message.empty()) s.message = message;
  }
}

RunSummary RunSummaryBuilder::summary(bool process_alive) const {
  RunSummary s = summary_;
  if (!last_step_line_.empty()) {
    const json step = json::parse(last_step_line_, nullptr, false);
    if (step.is_object()) {
      s.step = integerAt(step, "step", s.step);
      s.images_seen = integerAt(step, "images_seen", s.images_seen);
      s.loss_d = numberAt(step, "loss_d");
      s.loss_g = numberAt(step, "loss_g");
      if (const auto time = numberAt(step, "time"); time && *time > s.last_event_time) s.last_event_time = *time;
    } else {
      ++s.malformed_lines;
    }
  }
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

Result<RunSummary> readRunSummary(const std::string& run_dir) {
  RunSummaryBuilder builder(run_dir);
  const std::string events = run_dir + "/events.jsonl";
  const bool has_config = isFile(run_dir + "/config.json");
  const bool has_events = isFile(events);
  if (!has_config && !has_events) return makeError(run_dir + " is not a run folder (no config.json or events.jsonl)");
  if (has_config) builder.readConfig();
  builder.readEvaluations();
  if (has_events) {
    std::ifstream in(events, std::ios::binary);
    if (!in) return makeError("cannot read " + events);
    std::string chunk(1 << 20, '\0');
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      builder.feed(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
    }
  }
  return builder.summary(!builder.finished() &&
                         trainingProcessAlive(builder.pid(), "streetgan", builder.pidStartTime()));
}

bool trainingProcessAlive(std::int64_t pid, std::string_view program_name, std::uint64_t start_time) {
  return checkTrainingProcess(pid, program_name, start_time) == ProcessCheck::Alive;
}

}  // namespace streetgan
