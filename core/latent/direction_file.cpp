#include "core/latent/direction_file.h"

#include "core/formats/npy_array.h"

#include "core/runs/run_directory.h"
#include "core/util/atomic_file.h"
#include "core/util/json_value.h"
#include "core/util/regular_file.h"
#include "core/util/own_folder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace streetgan {
namespace {

using json = nlohmann::json;
constexpr int kVersion = 1;
constexpr std::size_t kDirectionFileMaxDepth = 4;  // {"labelled": {"has": [[…]]}}

// A parser's message for one line: at most 160 bytes, printable ASCII (nlohmann quotes what it
// last read, which a hostile file makes megabytes of control characters or invalid UTF-8).
std::string shortened(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 160)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return text.size() > 160 ? out + " …" : out;
}

std::string keyError(const std::string& path, const std::string& key, const std::string& what) {
  return path + ": \"" + key + "\" " + what;
}

json latentsJson(const std::vector<std::vector<float>>& latents) {
  json out = json::array();
  for (const auto& latent : latents) out.push_back(latent);
  return out;
}

// A finite float from a JSON number (a double beyond a float's range is refused, not made Inf).
std::optional<float> finiteFloat(const json& value) {
  const std::optional<double> number = jsonNumberValue(value);
  if (!number || !std::isfinite(*number) || std::fabs(*number) > 3.0e38) return std::nullopt;
  return static_cast<float>(*number);
}

Result<std::vector<float>> vectorOf(const json& value, const std::string& path, const std::string& key,
                                    std::optional<std::size_t> length) {
  if (!value.is_array() || value.empty() || value.size() > static_cast<std::size_t>(DirectionFile::kMaxNz))
    return makeError(keyError(path, key, "must be a list of 1 to " + std::to_string(DirectionFile::kMaxNz) + " numbers"));
  if (length && value.size() != *length)
    return makeError(keyError(path, key, "has " + std::to_string(value.size()) + " values, expected " +
                                             std::to_string(*length)));
  std::vector<float> out;
  out.reserve(value.size());
  for (const json& element : value) {
    const std::optional<float> number = finiteFloat(element);
    if (!number) return makeError(keyError(path, key, "must hold finite numbers only"));
    out.push_back(*number);
  }
  return out;
}

Result<std::vector<std::vector<float>>> latentsOf(const json& value, const std::string& path, const std::string& key,
                                                  std::size_t nz) {
  if (!value.is_array() || value.size() > static_cast<std::size_t>(DirectionFile::kMaxLatents))
    return makeError(keyError(path, key, "must be a list of at most " + std::to_string(DirectionFile::kMaxLatents) +
                                             " latents"));
  std::vector<std::vector<float>> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto latent = vectorOf(value[i], path, key + "[" + std::to_string(i) + "]", nz);
    if (!latent) return makeError(latent.error());
    out.push_back(std::move(*latent));
  }
  return out;
}

std::optional<LatentDirection::Kind> kindOf(const std::string& name) {
  for (auto kind : {LatentDirection::Kind::ClosedForm, LatentDirection::Kind::PrincipalComponent,
                    LatentDirection::Kind::Labelled})
    if (name == DirectionFile::kindName(kind)) return kind;
  return std::nullopt;
}

}  // namespace

const char* DirectionFile::kindName(LatentDirection::Kind kind) {
  switch (kind) {
    case LatentDirection::Kind::ClosedForm: return "closed-form";
    case LatentDirection::Kind::PrincipalComponent: return "principal-component";
    case LatentDirection::Kind::Labelled: return "labelled";
  }
  return "closed-form";
}

const char* DirectionFile::strengthName(LatentDirection::Kind kind) {
  switch (kind) {
    case LatentDirection::Kind::ClosedForm: return "eigenvalue";
    case LatentDirection::Kind::PrincipalComponent: return "variance_share";
    case LatentDirection::Kind::Labelled: return "accuracy";
  }
  return "eigenvalue";
}

Status DirectionFile::checkName(const std::string& name) {
  if (name.empty() || name.size() > 64)
    return makeError("a direction's name must have 1 to 64 characters, got " + std::to_string(name.size()));
  if (name.front() == '.') return makeError("a direction's name must not start with '.': \"" + name + "\"");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      return makeError("a direction's name may hold letters, digits, '.', '_' and '-' only: \"" + name + "\"");
  return {};
}

std::string DirectionFile::pathIn(const std::string& run, const std::string& name) {
  return RunDirectory(run).directionsDir() + "/" + name + ".json";
}

Status DirectionFile::write(const std::string& path, const LatentDirection& d) {
  if (d.vector.empty() || d.vector.size() > static_cast<std::size_t>(kMaxNz))
    return makeError("cannot write " + path + ": the direction has " + std::to_string(d.vector.size()) + " values");
  json body = {{"v", kVersion},
               {"time", std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()},
               {"name", d.name},
               {"kind", kindName(d.kind)},
               {"checkpoint", d.checkpoint},
               {"step", d.step},
               {"nz", d.vector.size()},
               {"vector", d.vector},
               {strengthName(d.kind), d.strength}};
  if (d.kind == LatentDirection::Kind::Labelled) {
    body["held_out"] = d.held_out;
    body["labelled"] = {{"has", latentsJson(d.has)}, {"lacks", latentsJson(d.lacks)}};
  } else {
    body["rank"] = d.rank;
  }
  std::string text;
  try {
    text = body.dump(2) + "\n";
  } catch (const json::exception& e) {  // a checkpoint path that is not UTF-8
    return makeError("cannot write " + path + ": " + e.what());
  }
  std::error_code error;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (Status linked = refuseLinkedFolder(folder.string()); !folder.empty() && !linked) return linked;
  if (!folder.empty()) std::filesystem::create_directory(folder, error);  // not the folders above it
  if (error) return makeError("cannot create " + folder.string() + ": " + error.message());
  return writeFileAtomically(path, text, FolderLinks::Refuse);  // always a run's directions/
}

Result<LatentDirection> DirectionFile::read(const std::string& path, std::optional<int> nz) {
  auto text = RegularFile::readAll(path, kMaxBytes);  // its errors begin with the path
  if (!text) return makeError(text.error());
  if (jsonNestingDepth(*text) > kDirectionFileMaxDepth)
    return makeError(path + ": nested deeper than " + std::to_string(kDirectionFileMaxDepth) + " levels, which no direction file is");
  json body;
  try {
    body = json::parse(*text);
  } catch (const json::exception& e) {
    return makeError(path + ": not valid JSON (" + shortened(e.what()) + ")");
  }
  if (!body.is_object()) return makeError(path + ": not a direction file (a JSON object)");
  const std::optional<std::int64_t> version = jsonInteger(body, "v");
  if (!version || *version != kVersion)
    return makeError(keyError(path, "v", "must be " + std::to_string(kVersion) + " (a direction file of this version)"));
  LatentDirection d;
  const auto kind = kindOf(jsonString(body, "kind"));
  if (!kind) return makeError(keyError(path, "kind", "must be \"closed-form\", \"principal-component\" or \"labelled\""));
  d.kind = *kind;
  d.name = jsonString(body, "name");
  d.checkpoint = jsonString(body, "checkpoint");
  d.step = jsonInteger(body, "step").value_or(0);
  if (!body.contains("vector")) return makeError(keyError(path, "vector", "is missing"));
  auto vector = vectorOf(body["vector"], path, "vector", std::nullopt);
  if (!vector) return makeError(vector.error());
  if (const std::optional<std::int64_t> declared = jsonInteger(body, "nz");
      body.contains("nz") && (!declared || *declared != static_cast<std::int64_t>(vector->size())))
    return makeError(keyError(path, "nz", "must be the vector's length, " + std::to_string(vector->size())));
  if (nz && static_cast<int>(vector->size()) != *nz)
    return makeError(path + ": the direction has " + std::to_string(vector->size()) + " values, the generator's latent " +
                     std::to_string(*nz));
  double norm = 0;
  for (float v : *vector) norm += static_cast<double>(v) * v;
  norm = std::sqrt(norm);
  if (!(norm > 0)) return makeError(keyError(path, "vector", "is zero"));
  for (float& v : *vector) v = static_cast<float>(v / norm);  // unit length, whatever wrote it
  d.vector = std::move(*vector);
  const std::optional<double> strength = jsonNumber(body, strengthName(d.kind));
  if (!strength || !std::isfinite(*strength))
    return makeError(keyError(path, strengthName(d.kind), "must be a number"));
  if (*strength < 0 || (d.kind != LatentDirection::Kind::ClosedForm && *strength > 1))
    return makeError(keyError(path, strengthName(d.kind),
                              d.kind == LatentDirection::Kind::ClosedForm ? "must be at least 0" : "must be between 0 and 1"));
  d.strength = *strength;
  if (d.kind == LatentDirection::Kind::Labelled) {
    d.held_out = std::max<std::int64_t>(0, jsonInteger(body, "held_out").value_or(0));
    if (body.contains("labelled")) {
      const json& labelled = body["labelled"];
      if (!labelled.is_object()) return makeError(keyError(path, "labelled", "must be an object"));
      for (const char* key : {"has", "lacks"}) {
        if (!labelled.contains(key)) continue;
        auto latents = latentsOf(labelled[key], path, std::string("labelled.") + key, d.vector.size());
        if (!latents) return makeError(latents.error());
        (std::strcmp(key, "has") == 0 ? d.has : d.lacks) = std::move(*latents);
      }
    }
  } else {
    d.rank = static_cast<int>(std::clamp<std::int64_t>(jsonInteger(body, "rank").value_or(0), 0, kMaxNz));
  }
  return d;
}

std::vector<std::string> DirectionFile::list(const std::string& run) {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(RunDirectory(run).directionsDir(), error), end; !error && it != end;
       it.increment(error)) {
    const std::filesystem::path file = it->path();
    if (file.extension() != ".json") continue;
    const std::string name = file.stem().string();
    std::error_code status_error;
    if (checkName(name) && std::filesystem::is_regular_file(it->symlink_status(status_error))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status DirectionFile::rename(const std::string& run, const std::string& from, const std::string& to) {
  if (Status s = checkName(to); !s) return s;
  if (Status s = checkName(from); !s) return s;
  auto direction = read(pathIn(run, from));
  if (!direction) return makeError(direction.error());
  const std::string target = pathIn(run, to);
  std::error_code error;
  if (std::filesystem::exists(target, error)) return makeError(target + " already exists: choose another name");
  direction->name = to;
  if (Status s = write(target, *direction); !s) return s;
  if (!std::filesystem::remove(pathIn(run, from), error) || error)
    return makeError("cannot remove " + pathIn(run, from) + ": " + (error ? error.message() : "it is gone"));
  const std::string folder = RunDirectory(run).directionsDir();
  const std::string npy = folder + "/" + from + ".npy", new_npy = folder + "/" + to + ".npy";
  if (std::filesystem::is_regular_file(std::filesystem::symlink_status(npy, error)) &&
      !std::filesystem::exists(new_npy, error))
    std::filesystem::rename(npy, new_npy, error);  // the NumPy copy follows; its loss is no failure
  return {};
}

Status DirectionFile::remove(const std::string& run, const std::string& name) {
  if (Status s = checkName(name); !s) return s;
  std::error_code error;
  const std::string path = pathIn(run, name);
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, error)))
    return makeError("cannot delete " + path + ": " +
                     (std::filesystem::exists(std::filesystem::symlink_status(path, error)) ? "not a direction file"
                                                                                           : "no such direction"));
  if (!std::filesystem::remove(path, error))
    return makeError("cannot delete " + path + ": " + (error ? error.message() : "no such direction"));
  const std::string npy = RunDirectory(run).directionsDir() + "/" + name + ".npy";
  if (std::filesystem::is_regular_file(std::filesystem::symlink_status(npy, error))) std::filesystem::remove(npy, error);
  return {};
}

Status DirectionFile::writeNpy(const std::string& path, const std::vector<float>& vector) {
  if (path.empty()) return makeError("give a file to write the .npy to");
  if (Status writable = checkReplaceableFile(path); !writable) return makeError("cannot write " + writable.error());
  const std::string bytes = NpyArray::toBytes({static_cast<std::int64_t>(vector.size())}, vector.data(), vector.size());
  return writeFileAtomically(path, bytes);
}

}  // namespace streetgan
