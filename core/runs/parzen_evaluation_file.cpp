#include "core/runs/parzen_evaluation_file.h"

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
#include <utility>

namespace streetgan {

namespace {

using json = nlohmann::json;

const std::string kParzenFilePrefix = "parzen-";
const std::string kParzenFileSuffix = ".json";
// The format nests three levels (the object, "checkpoints", a row); unknown keys may add a few.
constexpr std::size_t kParzenFileMaxDepth = 16;

// Typed reads of the members of JSON objects. The first failure is kept, naming the file, where the
// object is and the key; every read after it gives a default, so an object is read whole and
// checked once at the end.
class FieldReader {
public:
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  static bool has(const json& object, const char* key) { return object.is_object() && object.contains(key); }

  void fail(const std::string& where, const std::string& what) {
    if (error_.empty()) error_ = source_ + ": " + (where.empty() ? std::string() : where + ": ") + what;
  }
  void failKey(const std::string& where, const char* key, const std::string& what) {
    fail(where, "\"" + std::string(key) + "\" " + what);
  }

  double number(const json& object, const std::string& where, const char* key) {
    const json* value = find(object, where, key);
    if (!value) return 0;
    if (value->is_null()) return std::numeric_limits<double>::quiet_NaN();  // how NaN and ±Inf are written
    if (const auto number = jsonNumber(object, key)) return *number;
    failKey(where, key, "must be a number");
    return 0;
  }
  std::int64_t integer(const json& object, const std::string& where, const char* key) {
    if (!find(object, where, key)) return 0;
    if (const auto integer = jsonInteger(object, key)) return *integer;
    failKey(where, key, "must be an integer");
    return 0;
  }
  bool boolean(const json& object, const std::string& where, const char* key) {
    const json* value = find(object, where, key);
    if (value && value->is_boolean()) return value->get<bool>();
    if (value) failKey(where, key, "must be true or false");
    return false;
  }
  std::string text(const json& object, const std::string& where, const char* key) {
    const json* value = find(object, where, key);
    if (value && value->is_string()) return value->get<std::string>();
    if (value) failKey(where, key, "must be a string");
    return {};
  }
  const json& list(const json& object, const std::string& where, const char* key) {
    static const json empty = json::array();
    const json* value = find(object, where, key);
    if (value && value->is_array()) return *value;
    if (value) failKey(where, key, "must be a list");
    return empty;
  }
  const json& member(const json& object, const std::string& where, const char* key) {
    static const json empty = json::object();
    const json* value = find(object, where, key);
    if (value && value->is_object()) return *value;
    if (value) failKey(where, key, "must be an object");
    return empty;
  }

private:
  const json* find(const json& object, const std::string& where, const char* key) {
    if (failed()) return nullptr;
    const auto it = object.find(key);
    if (it == object.end()) {
      failKey(where, key, "is missing");
      return nullptr;
    }
    return &*it;
  }

  std::string source_, error_;
};

// The items of list `key` that are objects, each handed to `read` with where it is ("curve[2]").
template <class Read>
void forEachObject(FieldReader& in, const json& body, const char* key, Read read) {
  const json& items = in.list(body, "", key);
  for (std::size_t i = 0; i < items.size() && !in.failed(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!items[i].is_object()) in.fail("", where + " must be an object");
    else read(items[i], where);
  }
}

ParzenEvaluation::Checkpoint readCheckpoint(FieldReader& in, const json& object, const std::string& where) {
  ParzenEvaluation::Checkpoint checkpoint;
  checkpoint.file = in.text(object, where, "checkpoint");
  checkpoint.epoch = in.integer(object, where, "epoch");
  checkpoint.step = in.integer(object, where, "step");
  checkpoint.images_seen = in.integer(object, where, "images_seen");
  if (object.contains(kEvaluatedGeneratorKey)) checkpoint.generator = in.text(object, where, kEvaluatedGeneratorKey);
  return checkpoint;
}

void readCheckpointKind(FieldReader& in, const json& body, ParzenEvaluation& out) {
  out.mean_ll = in.number(body, "", "mean_ll");
  out.stderr_ll = in.number(body, "", "stderr");
  out.n_test = in.integer(body, "", "n_test");
  out.n_valid = in.integer(body, "", "n_valid");
  out.n_samples = in.integer(body, "", "n_samples");
  out.dimensions = in.integer(body, "", "dimensions");
  const json& seconds = in.member(body, "", "seconds");
  out.samples_seconds = in.number(seconds, "seconds", "samples");
  out.estimator_seconds = in.number(seconds, "seconds", "estimator");
  if (FieldReader::has(body, "checkpoint")) out.checkpoint = readCheckpoint(in, body, "");
}

void readRunKind(FieldReader& in, const json& body, ParzenEvaluation& out) {
  out.sigma_given = in.boolean(body, "", "sigma_given");
  forEachObject(in, body, "checkpoints", [&](const json& row, const std::string& where) {
    ParzenEvaluation::CheckpointScore score;
    score.checkpoint = readCheckpoint(in, row, where);
    score.mean_ll = in.number(row, where, "mean_ll");
    score.stderr_ll = in.number(row, where, "stderr");
    score.n_test = in.integer(row, where, "n_test");
    out.checkpoints.push_back(std::move(score));
  });
}

// `stamped`: a file, which must say its version and time.
Result<ParzenEvaluation> parse(const json& body, const std::string& source, bool stamped) {
  if (!body.is_object()) return makeError(source + ": not a JSON object");
  FieldReader in(source);
  ParzenEvaluation out;
  // The version first: a later format is refused for what it is, not for a key it moved.
  if (stamped || FieldReader::has(body, "v")) {
    const std::int64_t version = in.integer(body, "", "v");
    if (!in.failed() && version != ParzenEvaluationFile::kVersion)
      in.failKey("", "v", "is " + std::to_string(version) + "; this program reads version " +
                              std::to_string(ParzenEvaluationFile::kVersion) + " of the format");
  }
  if (stamped || FieldReader::has(body, "time")) out.time = in.number(body, "", "time");
  const std::string kind = in.text(body, "", "kind");
  if (!in.failed() && kind != "checkpoint" && kind != "run") in.failKey("", "kind", "must be \"checkpoint\" or \"run\"");
  out.kind = kind == "run" ? ParzenEvaluation::Kind::Run : ParzenEvaluation::Kind::Checkpoint;
  out.sigma = in.number(body, "", "sigma");
  forEachObject(in, body, "curve", [&](const json& point, const std::string& where) {
    ParzenEvaluation::SigmaPoint sigma_point;
    sigma_point.sigma = in.number(point, where, "sigma");
    sigma_point.mean_ll = in.number(point, where, "mean_ll");
    out.curve.push_back(sigma_point);
  });
  if (out.kind == ParzenEvaluation::Kind::Run) readRunKind(in, body, out);
  else readCheckpointKind(in, body, out);
  if (in.failed()) return makeError(in.error());
  return out;
}

bool isParzenFileName(const std::string& name) {
  return name.size() >= kParzenFilePrefix.size() + kParzenFileSuffix.size() && name.compare(0, kParzenFilePrefix.size(), kParzenFilePrefix) == 0 &&
         name.compare(name.size() - kParzenFileSuffix.size(), kParzenFileSuffix.size(), kParzenFileSuffix) == 0;
}

}  // namespace

std::optional<ParzenEvaluation::Best> ParzenEvaluation::best() const {
  std::optional<Best> found;
  auto consider = [&found](double mean, std::int64_t epoch) {
    if (std::isfinite(mean) && (!found || mean > found->mean_ll)) found = Best{mean, epoch};
  };
  if (kind == Kind::Checkpoint) consider(mean_ll, checkpoint ? checkpoint->epoch : 0);
  for (const auto& row : checkpoints) consider(row.mean_ll, row.checkpoint.epoch);
  return found;
}

std::string ParzenEvaluationFile::path(const std::string& run_dir, const std::string& name) {
  return RunDirectory(run_dir).evaluationsDir() + "/" + kParzenFilePrefix + name + kParzenFileSuffix;
}

std::vector<std::string> ParzenEvaluationFile::list(const std::string& run_dir) {
  namespace fs = std::filesystem;
  struct Found {
    std::string path, name;
    std::int64_t modified_ms = 0;
  };
  std::vector<Found> found;
  std::error_code error;
  for (fs::directory_iterator it(RunDirectory(run_dir).evaluationsDir(), error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;
    if (!isParzenFileName(name) || !it->is_regular_file(ignored)) continue;
    const auto modified = fs::last_write_time(it->path(), ignored);
    if (ignored) continue;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(modified.time_since_epoch()).count();
    found.push_back({it->path().string(), name, static_cast<std::int64_t>(ms)});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.modified_ms != b.modified_ms ? a.modified_ms > b.modified_ms : a.name < b.name;
  });
  std::vector<std::string> paths;
  for (auto& file : found) paths.push_back(std::move(file.path));
  return paths;
}

Result<ParzenEvaluation> ParzenEvaluationFile::read(const std::string& path) {
  auto text = RegularFile::readAll(path, kMaxBytes);  // its errors begin with the path
  if (!text) return makeError(text.error());
  if (jsonNestingDepth(*text) > kParzenFileMaxDepth)
    return makeError(path + ": nested deeper than " + std::to_string(kParzenFileMaxDepth) +
                     " levels, which no Parzen evaluation file is");
  json parsed;
  try {
    parsed = json::parse(*text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past a double's range
    return makeError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return parse(parsed, path, true);
}

Result<ParzenEvaluation> ParzenEvaluationFile::fromJson(const json& body, const std::string& source) {
  return parse(body, source, false);
}

Status ParzenEvaluationFile::write(const std::string& run_dir, const std::string& name, ParzenEvaluation evaluation) {
  evaluation.version = kVersion;
  evaluation.time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (Status folder = makeOwnFolder(RunDirectory(run_dir).evaluationsDir()); !folder) return folder;
  const std::string file = path(run_dir, name);
  std::string text;
  try {
    text = fileText(evaluation);
  } catch (const json::exception& e) {  // a checkpoint name that is not UTF-8
    return makeError("cannot write " + file + ": " + e.what());
  }
  return writeFileAtomically(file, text, FolderLinks::Refuse);
}

json ParzenEvaluationFile::toJson(const ParzenEvaluation& evaluation) {
  json curve = json::array();
  for (const auto& point : evaluation.curve) curve.push_back({{"sigma", point.sigma}, {"mean_ll", point.mean_ll}});
  if (evaluation.kind == ParzenEvaluation::Kind::Run) {
    json rows = json::array();
    for (const auto& row : evaluation.checkpoints) {
      json scored = {{"mean_ll", row.mean_ll}, {"stderr", row.stderr_ll}, {"n_test", row.n_test}};
      writeEvaluatedCheckpoint(scored, row.checkpoint);
      rows.push_back(std::move(scored));
    }
    return {{"kind", "run"}, {"sigma", evaluation.sigma}, {"sigma_given", evaluation.sigma_given},
            {"curve", curve}, {"checkpoints", rows}};
  }
  json out = {{"kind", "checkpoint"}, {"sigma", evaluation.sigma}, {"mean_ll", evaluation.mean_ll},
              {"stderr", evaluation.stderr_ll}, {"n_test", evaluation.n_test}, {"n_valid", evaluation.n_valid},
              {"n_samples", evaluation.n_samples}, {"dimensions", evaluation.dimensions}, {"curve", curve},
              {"seconds", {{"samples", evaluation.samples_seconds}, {"estimator", evaluation.estimator_seconds}}}};
  if (evaluation.checkpoint) writeEvaluatedCheckpoint(out, *evaluation.checkpoint);
  return out;
}

std::string ParzenEvaluationFile::fileText(const ParzenEvaluation& evaluation) {
  json out = toJson(evaluation);
  out["v"] = evaluation.version;
  out["time"] = evaluation.time;
  // A checkpoint name that is not UTF-8 is replaced (U+FFFD), never a type_error after the work.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace streetgan
