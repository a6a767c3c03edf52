#include "core/latent/latent_walk.h"

#include "core/util/atomic_file.h"
#include "core/util/json_value.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace streetgan {

using json = nlohmann::json;

LatentWalk LatentWalk::fromSeeds(const std::vector<std::uint64_t>& seeds, int nz) {
  LatentWalk walk;
  for (std::uint64_t seed : seeds) walk.keyframes.push_back({latentFromSeed(seed, nz), seed});
  return walk;
}

Status LatentWalk::validate() const {
  if (keyframes.size() < 2) return makeError("a walk needs at least 2 keyframes, it has " + std::to_string(keyframes.size()));
  if (frames_per_key < 1) return makeError("frames per keyframe must be at least 1");
  for (std::size_t i = 0; i < keyframes.size(); ++i) {
    const auto& z = keyframes[i].latent;
    if (!z.defined() || z.dim() != 1 || z.sizes() != keyframes.front().latent.sizes())
      return makeError("keyframe " + std::to_string(i + 1) + " is not a latent of the walk's size");
  }
  return {};
}

std::int64_t LatentWalk::frameCount() const {
  const auto k = static_cast<std::int64_t>(keyframes.size());
  if (k < 2) return k;
  return loop ? k * frames_per_key : (k - 1) * frames_per_key + 1;
}

torch::Tensor LatentWalk::frame(std::int64_t index) const {
  const auto k = static_cast<std::int64_t>(keyframes.size());
  const std::int64_t segment = std::min(index / frames_per_key, loop ? k - 1 : k - 2);
  const std::int64_t offset = index - segment * frames_per_key;
  const auto& from = keyframes[static_cast<std::size_t>(segment)].latent;
  const auto& to = keyframes[static_cast<std::size_t>((segment + 1) % k)].latent;
  const double t = ease(easing, static_cast<double>(offset) / frames_per_key);
  return mode == Interpolation::Slerp ? slerp(from, to, t) : lerp(from, to, t);
}

torch::Tensor LatentWalk::frames(std::int64_t begin, std::int64_t count) const {
  std::vector<torch::Tensor> out;
  for (std::int64_t i = begin; i < begin + count; ++i) out.push_back(frame(i));
  return torch::stack(out).unsqueeze(2).unsqueeze(3);
}

json LatentWalk::toJson() const {
  json keys = json::array();
  for (const auto& key : keyframes) {
    const torch::Tensor z = key.latent.to(torch::kFloat32).contiguous();
    json values = json::array();
    // float → double is exact, and the JSON writer prints doubles so they read back exactly.
    for (std::int64_t i = 0; i < z.size(0); ++i) values.push_back(static_cast<double>(z[i].item<float>()));
    json entry = {{"latent", values}};
    if (key.seed) entry["seed"] = *key.seed;
    keys.push_back(entry);
  }
  return {{"version", 1},
          {"nz", keyframes.empty() ? 0 : keyframes.front().latent.size(0)},
          {"frames_per_key", frames_per_key},
          {"mode", interpolationName(mode)},
          {"easing", easingName(easing)},
          {"loop", loop},
          {"keyframes", keys}};
}

Result<LatentWalk> LatentWalk::fromJson(const json& in, const std::string& source) {
  auto bad = [&](const std::string& what) { return makeError(source + ": " + what); };
  if (!in.is_object()) return bad("a walk must be a JSON object");
  if (!in.contains("version") || !in["version"].is_number_integer() || in["version"].get<long long>() != 1)
    return bad("\"version\" must be 1");
  // json::value() throws when the key holds another type: each is checked before it is read.
  for (const char* key : {"mode", "easing"})
    if (in.contains(key) && !in[key].is_string()) return bad(std::string("\"") + key + "\" must be a string");
  LatentWalk walk;
  if (!in.contains("frames_per_key") || !in["frames_per_key"].is_number_integer() || in["frames_per_key"].get<long long>() < 1 ||
      in["frames_per_key"].get<long long>() > 100000)
    return bad("\"frames_per_key\" must be an integer from 1 to 100000");
  walk.frames_per_key = in["frames_per_key"].get<int>();
  auto mode = parseInterpolation(in.value("mode", std::string("slerp")));
  if (!mode) return bad("\"mode\": " + mode.error());
  walk.mode = *mode;
  auto easing = parseEasing(in.value("easing", std::string("ease-in-out")));
  if (!easing) return bad("\"easing\": " + easing.error());
  walk.easing = *easing;
  if (in.contains("loop") && !in["loop"].is_boolean()) return bad("\"loop\" must be true or false");
  walk.loop = in.value("loop", false);
  if (!in.contains("keyframes") || !in["keyframes"].is_array()) return bad("\"keyframes\" must be a list");
  for (std::size_t i = 0; i < in["keyframes"].size(); ++i) {
    const json& key = in["keyframes"][i];
    const std::string where = "keyframe " + std::to_string(i + 1);
    if (!key.is_object() || !key.contains("latent") || !key["latent"].is_array() || key["latent"].empty())
      return bad(where + ": \"latent\" must be a list of numbers");
    std::vector<float> values;
    for (const auto& v : key["latent"]) {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || std::abs(v.get<double>()) > std::numeric_limits<float>::max())
        return bad(where + ": \"latent\" holds a value that is not a finite number within a float's range");
      values.push_back(static_cast<float>(v.get<double>()));
    }
    WalkKeyframe frame{torch::tensor(values, torch::kFloat32), std::nullopt};
    if (key.contains("seed")) {
      if (!key["seed"].is_number_unsigned()) return bad(where + ": \"seed\" must be a non-negative integer");
      frame.seed = key["seed"].get<std::uint64_t>();
    }
    walk.keyframes.push_back(std::move(frame));
  }
  if (Status valid = walk.validate(); !valid) return bad(valid.error());
  // "nz" is written for people; when given, it must say what the latents hold.
  if (in.contains("nz") && !walk.keyframes.empty()) {
    const std::int64_t nz = walk.keyframes.front().latent.size(0);
    if (!in["nz"].is_number_integer() || in["nz"].get<long long>() != nz)
      return bad("\"nz\" must be the length of every latent (" + std::to_string(nz) + "), not " +
                 (in["nz"].is_number_integer() ? std::to_string(in["nz"].get<long long>()) : std::string(in["nz"].type_name())));
  }
  return walk;
}

Status LatentWalk::save(const std::string& path) const {
  return writeFileAtomically(path, toJson().dump(1) + "\n");
}

namespace {

// The most values (numbers, strings, arrays, objects, keys) a walk file may make, jsonValueBound's
// count: a latent of nz numbers counts twice nz.
constexpr std::size_t kMaxWalkValues = std::size_t{1} << 22;

}  // namespace

Result<LatentWalk> LatentWalk::load(const std::string& path) {
  // A walk of 100,000 keyframes of nz 4096 is under 8 GB of text; real ones are kilobytes. Only a
  // regular file is read, so that /dev/zero or a FIFO named as a walk is refused, not read forever.
  constexpr std::int64_t kMaxWalkBytes = 256 << 20;
  auto file = RegularFile::open(path);
  if (!file) return makeError(path + ": not a walk file (" + RegularFile::reasonOf(path, file.error()) + ")");
  if (file->size() > kMaxWalkBytes)
    return makeError(path + ": the walk file is larger than " + std::to_string(kMaxWalkBytes >> 20) + " MiB");
  auto text = file->readRest(kMaxWalkBytes);  // fails only for a file that grows past the bound
  if (!text) return makeError(text.error());
  if (const std::size_t nul = text->find('\0'); nul != std::string::npos)
    return makeError(path + ": not a walk file (a NUL byte at offset " + std::to_string(nul) + ")");
  // A walk nests 3 levels ({"keyframes": [{"latent": [...]}]}, and "projection" of `streetgan
  // project`); deeper text is refused before it is parsed into a tree many times its size.
  if (jsonNestingDepth(*text) > 4) return makeError(path + ": nested deeper than 4 levels, which no walk file is");
  // Counted before it is parsed: a parsed value costs some 20 times its text (a 229 MiB file
  // took 4.4 GB before a check of it failed).
  if (jsonValueBound(*text) > kMaxWalkValues)
    return makeError(path + ": holds more than " + std::to_string(kMaxWalkValues) +
                     " values, more than a walk of 1,000 keyframes of nz 2048; it is not read");
  json parsed;
  try {
    parsed = json::parse(*text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past a double's range
    return makeError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return fromJson(parsed, path);
}

GridWalk GridWalk::fromSeedBase(int rows, int columns, int keys, std::uint64_t base, int nz,
                                const LatentWalk& settings) {
  GridWalk grid;
  grid.rows = rows, grid.columns = columns;
  for (int tile = 0; tile < rows * columns; ++tile) {
    std::vector<std::uint64_t> seeds;
    for (int k = 0; k < keys; ++k) seeds.push_back(base + static_cast<std::uint64_t>(tile) * keys + k);
    LatentWalk walk = LatentWalk::fromSeeds(seeds, nz);
    walk.frames_per_key = settings.frames_per_key, walk.mode = settings.mode;
    walk.easing = settings.easing, walk.loop = settings.loop;
    grid.tiles.push_back(std::move(walk));
  }
  return grid;
}

Status GridWalk::validate() const {
  if (rows < 1 || columns < 1 || tiles.size() != static_cast<std::size_t>(rows * columns))
    return makeError("a grid walk needs rows × columns walks");
  for (const auto& tile : tiles) {
    if (Status valid = tile.validate(); !valid) return valid;
    if (tile.frameCount() != frameCount()) return makeError("every walk of a grid must have the same number of frames");
  }
  return {};
}

torch::Tensor GridWalk::frame(std::int64_t index) const {
  std::vector<torch::Tensor> out;
  for (const auto& tile : tiles) out.push_back(tile.frame(index));
  return torch::stack(out).unsqueeze(2).unsqueeze(3);
}

}  // namespace streetgan
