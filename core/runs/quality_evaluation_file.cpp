#include "core/runs/quality_evaluation_file.h"

#include "core/runs/run_directory.h"
#include "core/util/atomic_file.h"
#include "core/util/json_value.h"
#include "core/util/regular_file.h"
#include "core/util/own_folder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

namespace streetgan {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kQualityFilePrefix = "metrics-";
const std::string kQualityFileSuffix = ".json";
constexpr std::size_t kQualityFileMaxDepth = 16;

bool isMetricsFileName(const std::string& name) {
  return name.size() > kQualityFilePrefix.size() + kQualityFileSuffix.size() && name.compare(0, kQualityFilePrefix.size(), kQualityFilePrefix) == 0 &&
         name.compare(name.size() - kQualityFileSuffix.size(), kQualityFileSuffix.size(), kQualityFileSuffix) == 0;
}

// A number, or null for NaN and ±Inf (JSON has neither).
json finiteOrNull(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

// A map of names to numbers ("metrics", "seconds"), or the error naming the key.
Result<std::map<std::string, double>> numberMap(const json& body, const char* key, const std::string& source) {
  std::map<std::string, double> values;
  if (!body.contains(key)) return values;
  const json& object = body.at(key);
  if (!object.is_object()) return makeError(source + ": \"" + key + "\" must be an object of numbers");
  for (const auto& [name, value] : object.items()) {
    if (value.is_null()) values[name] = std::numeric_limits<double>::quiet_NaN();
    else if (value.is_number()) values[name] = value.get<double>();
    else return makeError(source + ": " + key + ": \"" + name + "\" must be a number");
  }
  return values;
}

}  // namespace

std::string QualityEvaluationFile::path(const std::string& run_dir, const std::string& name) {
  return RunDirectory(run_dir).evaluationsDir() + "/" + kQualityFilePrefix + name + kQualityFileSuffix;
}

std::vector<std::string> QualityEvaluationFile::list(const std::string& run_dir) {
  std::vector<std::string> paths;
  std::error_code error;
  for (fs::directory_iterator it(RunDirectory(run_dir).evaluationsDir(), error), end; !error && it != end;
       it.increment(error)) {
    std::error_code ignored;
    if (isMetricsFileName(it->path().filename().string()) && it->is_regular_file(ignored))
      paths.push_back(it->path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

json QualityEvaluationFile::toJson(const QualityEvaluation& evaluation) {
  json metrics = json::object(), seconds = json::object();
  for (const auto& [name, value] : evaluation.metrics) metrics[name] = finiteOrNull(value);
  for (const auto& [name, value] : evaluation.seconds) seconds[name] = finiteOrNull(value);
  json out = {{"kind", "metrics"},
              {"n_samples", evaluation.n_samples},
              {"n_train", evaluation.n_train},
              {"image_size", evaluation.image_size},
              {"feature_space", evaluation.feature_space},
              {"metrics", metrics},
              {"seconds", seconds},
              {"notes", evaluation.notes}};
  out["alarms"] = json::array();
  for (const auto& alarm : evaluation.alarms) out["alarms"].push_back({{"kind", alarm.kind}, {"message", alarm.message}});
  if (!evaluation.features_sha256.empty()) {
    out["features_sha256"] = evaluation.features_sha256;
    out["features_input_size"] = evaluation.features_input_size;
  }
  if (evaluation.checkpoint) writeEvaluatedCheckpoint(out, *evaluation.checkpoint);
  return out;
}

Result<QualityEvaluation> QualityEvaluationFile::fromJson(const json& body, const std::string& source) {
  if (!body.is_object()) return makeError(source + ": not a JSON object");
  QualityEvaluation evaluation;
  auto integer = [&](const char* key, std::int64_t& into) -> Status {
    if (!body.contains(key)) return {};
    const auto value = jsonInteger(body, key);
    if (!value) return makeError(source + ": \"" + key + "\" must be an integer");
    into = *value;
    return {};
  };
  auto text = [&](const char* key, std::string& into) -> Status {
    if (!body.contains(key)) return {};
    if (!body.at(key).is_string()) return makeError(source + ": \"" + key + "\" must be a string");
    into = body.at(key).get<std::string>();
    return {};
  };
  std::int64_t image_size = 0, input_size = 0, version = kVersion;
  for (Status s : {integer("n_samples", evaluation.n_samples), integer("n_train", evaluation.n_train),
                   integer("image_size", image_size), integer("features_input_size", input_size),
                   integer("v", version), text("feature_space", evaluation.feature_space),
                   text("features_sha256", evaluation.features_sha256)})
    if (!s) return makeError(s.error());
  if (image_size < 0 || image_size > 65536 || input_size < 0 || input_size > 65536)
    return makeError(source + ": an image size is out of range");
  if (version != kVersion)
    return makeError(source + ": format version " + std::to_string(version) + "; this streetgan reads version " +
                     std::to_string(kVersion));
  evaluation.image_size = static_cast<int>(image_size);
  evaluation.features_input_size = static_cast<int>(input_size);
  evaluation.version = static_cast<int>(version);
  if (const auto time = jsonNumber(body, "time")) evaluation.time = *time;
  if (body.contains("checkpoint")) {
    QualityEvaluation::Checkpoint checkpoint;
    for (Status s : {text("checkpoint", checkpoint.file), integer("epoch", checkpoint.epoch),
                     integer("step", checkpoint.step), integer("images_seen", checkpoint.images_seen),
                     text(kEvaluatedGeneratorKey, checkpoint.generator)})
      if (!s) return makeError(s.error());
    evaluation.checkpoint = checkpoint;
  }
  auto metrics = numberMap(body, "metrics", source);
  if (!metrics) return makeError(metrics.error());
  evaluation.metrics = std::move(*metrics);
  auto seconds = numberMap(body, "seconds", source);
  if (!seconds) return makeError(seconds.error());
  evaluation.seconds = std::move(*seconds);
  if (body.contains("notes")) {
    const json& notes = body.at("notes");
    if (!notes.is_array()) return makeError(source + ": \"notes\" must be a list of strings");
    for (const json& note : notes) {
      if (!note.is_string()) return makeError(source + ": \"notes\" must be a list of strings");
      evaluation.notes.push_back(note.get<std::string>());
    }
  }
  if (body.contains("alarms")) {
    const json& alarms = body.at("alarms");
    const auto text = [](const json& alarm, const char* key) {
      return alarm.is_object() && alarm.contains(key) && alarm.at(key).is_string();
    };
    if (!alarms.is_array()) return makeError(source + ": \"alarms\" must be a list");
    for (const json& alarm : alarms) {
      if (!text(alarm, "kind") || !text(alarm, "message"))
        return makeError(source + ": each of \"alarms\" must be an object with a \"kind\" and a \"message\" string");
      evaluation.alarms.push_back({alarm.at("kind").get<std::string>(), alarm.at("message").get<std::string>()});
    }
  }
  return evaluation;
}

Result<QualityEvaluation> QualityEvaluationFile::read(const std::string& path) {
  auto text = RegularFile::readAll(path, kMaxBytes);  // its errors begin with the path
  if (!text) return makeError(text.error());
  if (jsonNestingDepth(*text) > kQualityFileMaxDepth)
    return makeError(path + ": nested deeper than " + std::to_string(kQualityFileMaxDepth) + " levels, which no metrics file is");
  json parsed;
  try {
    parsed = json::parse(*text);
  } catch (const json::exception& e) {
    return makeError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return fromJson(parsed, path);
}

Status QualityEvaluationFile::write(const std::string& run_dir, const std::string& name, QualityEvaluation evaluation) {
  evaluation.version = kVersion;
  evaluation.time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (Status folder = makeOwnFolder(RunDirectory(run_dir).evaluationsDir()); !folder) return folder;
  json out = toJson(evaluation);
  out["v"] = evaluation.version;
  out["time"] = evaluation.time;
  return writeFileAtomically(path(run_dir, name), out.dump(2, ' ', false, json::error_handler_t::replace) + "\n",
                             FolderLinks::Refuse);
}

}  // namespace streetgan
