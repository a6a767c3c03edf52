#include "app/serve/site_publisher.h"

#include "core/interop/generator_onnx_export.h"
#include "core/latent/direction_file.h"
#include "core/latent/latent_math.h"
#include "core/latent/latent_walk.h"
#include "core/util/regular_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <system_error>

namespace streetgan::cli {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

constexpr const char* kModelFile = "model.onnx";
constexpr int kSiteFormatVersion = 1;
constexpr double kDirectionRange = 3.0;           // the sliders' −3 to +3, as the Explore tab's
constexpr std::int64_t kMaxAssetBytes = std::int64_t(64) << 20;
constexpr std::size_t kMaxAssets = 64;
// The files without which the page cannot run: a build without npm has no ONNX Runtime Web.
constexpr const char* kRequiredAssets[] = {"index.html", "app.js", "ort/LICENSE"};

Status stopped(const std::atomic<bool>* stop) {
  if (stop != nullptr && stop->load())
    return makeError("stopped before the page was finished; nothing was written", ErrorKind::Machine);
  return {};
}

// A float as the shortest decimal that reads back as the same float32 (%.9g), so the page's
// Float32Array gets the latents `streetgan sample` renders, bit for bit.
json floatArray(const float* values, std::int64_t count) {
  json out = json::array();
  char text[32];
  for (std::int64_t i = 0; i < count; ++i) {
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(values[i]));
    out.push_back(std::strtod(text, nullptr));
  }
  return out;
}

json latentJson(const torch::Tensor& latent) {
  const torch::Tensor flat = latent.to(torch::kFloat32).contiguous().view({-1});
  return floatArray(flat.data_ptr<float>(), flat.numel());
}

// The page's files, relative to `assets`: regular files at most two folders deep.
Result<std::vector<std::string>> assetFiles(const std::string& assets) {
  for (const char* required : kRequiredAssets)
    if (std::error_code error; !fs::is_regular_file(fs::path(assets) / required, error))
      return makeError("the page's files are not installed: " + (fs::path(assets) / required).string() +
                           " is missing (the build copies them, with ONNX Runtime Web from npm: "
                           "packaging/install-deps.sh installs npm)",
                       ErrorKind::Machine);
  auto files = SiteFolder::regularFiles(assets, kMaxAssets, /*skip_hidden=*/false);
  if (!files) return makeError(files.error(), ErrorKind::Machine);
  return files;
}

Status copyAssets(SiteFolder& folder, const std::string& assets, std::vector<std::string>& written, const std::atomic<bool>* stop) {
  auto files = assetFiles(assets);
  if (!files) return makeError(files.error(), files.errorKind());
  for (const std::string& file : *files) {
    if (Status halted = stopped(stop); !halted) return halted;
    if (file == kModelFile || file == SiteFolder::kManifest) continue;  // written from the run
    auto bytes = RegularFile::readAll((fs::path(assets) / file).string(), kMaxAssetBytes);
    if (!bytes) return makeError(bytes.error(), ErrorKind::Machine);
    if (Status copied = folder.writeFile(file, *bytes); !copied) return makeError(copied.error(), ErrorKind::Machine);
    written.push_back(file);
  }
  return {};
}

Result<json> directionsJson(const PublishOptions& options, int nz) {
  std::vector<std::string> names;
  if (options.directions) {
    names = *options.directions;
  } else if (!options.run.empty()) {
    names = DirectionFile::list(options.run);
    if (names.size() > std::size_t(PublishOptions::kMaxDirections)) names.resize(PublishOptions::kMaxDirections);
  }
  json out = json::array();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (Status valid = DirectionFile::checkName(name); !valid) return makeError("--directions: " + valid.error());
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), name) != names.begin() + static_cast<std::ptrdiff_t>(i))
      return makeError("--directions: " + name + " is named twice");
    if (options.run.empty()) return makeError("--directions: the checkpoint is not inside a run folder, which holds the directions");
    auto direction = DirectionFile::read(DirectionFile::pathIn(options.run, name), nz);
    if (!direction) return makeError(direction.error());
    out.push_back({{"name", direction->name},
                   {"kind", DirectionFile::kindName(direction->kind)},
                   {"range", kDirectionRange},
                   {"vector", floatArray(direction->vector.data(), static_cast<std::int64_t>(direction->vector.size()))}});
  }
  return out;
}

// A saved walk's frames, computed here (latent_walk.h: one home of the walk's formula).
Result<json> walkJson(const std::string& path, int nz) {
  if (path.empty()) return json(nullptr);
  auto walk = LatentWalk::load(path);
  if (!walk) return makeError(walk.error());
  if (Status valid = walk->validate(); !valid) return makeError(path + ": " + valid.error());
  if (walk->keyframes.front().latent.numel() != nz)
    return makeError(path + ": its latents have " + std::to_string(walk->keyframes.front().latent.numel()) +
                     " numbers, the generator takes " + std::to_string(nz));
  const std::int64_t frames = walk->frameCount();
  if (frames > PublishOptions::kMaxWalkFrames)
    return makeError(path + ": " + std::to_string(frames) + " frames; a page plays at most " +
                     std::to_string(PublishOptions::kMaxWalkFrames));
  json list = json::array();
  for (std::int64_t i = 0; i < frames; ++i) list.push_back(latentJson(walk->frame(i)));
  return json{{"name", fs::path(path).stem().string()}, {"loop", walk->loop}, {"frames", std::move(list)}};
}

json scenesJson(const PublishOptions& options, const OnnxExportReport& model) {
  json seeds = json::array(), latents = json::array();
  for (int i = 0; i < options.scenes; ++i) {
    const std::uint64_t seed = options.seed + static_cast<std::uint64_t>(i);
    seeds.push_back(seed);
    latents.push_back(latentJson(latentFromSeed(seed, static_cast<int>(model.nz))));
  }
  return {{"format", SiteFolder::kFormat}, {"format_version", kSiteFormatVersion},
          {"title", options.title},        {"run", model.run},
          {"checkpoint", fs::path(options.checkpoint).filename().string()},
          {"step", model.step},            {"images_seen", model.images_seen},
          {"generator", model.generator},  {"nz", model.nz},
          {"img_size", model.img_size},    {"nc", model.nc},
          {"model", kModelFile},           {"fps", options.fps},
          {"frames_per_key", options.frames_per_key},
          {"seeds", std::move(seeds)},     {"latents", std::move(latents)}};
}

}  // namespace

Status checkPublishOptions(const PublishOptions& options) {
  if (options.scenes < 1 || options.scenes > PublishOptions::kMaxScenes)
    return makeError("--scenes " + std::to_string(options.scenes) + " is out of range (1 to " + std::to_string(PublishOptions::kMaxScenes) + ")");
  // The scenes' seeds stay within what --seed and `sample --seeds` take.
  if (options.seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - static_cast<std::uint64_t>(options.scenes - 1))
    return makeError("--seed " + std::to_string(options.seed) + " is too large for " + std::to_string(options.scenes) + " scenes");
  if (options.fps < 1 || options.fps > PublishOptions::kMaxFps)
    return makeError("--fps " + std::to_string(options.fps) + " is out of range (1 to " + std::to_string(PublishOptions::kMaxFps) + ")");
  if (options.frames_per_key < 2 || options.frames_per_key > PublishOptions::kMaxFramesPerKey)
    return makeError("--frames-per-key " + std::to_string(options.frames_per_key) + " is out of range (2 to " +
                     std::to_string(PublishOptions::kMaxFramesPerKey) + ")");
  if (options.title.empty() || options.title.size() > PublishOptions::kMaxTitleLength)
    return makeError("--title: give 1 to " + std::to_string(PublishOptions::kMaxTitleLength) + " bytes");
  for (unsigned char c : options.title)
    if (c < 0x20 || c == 0x7f) return makeError("--title: control characters (a newline, a tab) are not allowed");
  try {
    (void)json(options.title).dump();  // strict: throws on bytes that are not UTF-8
  } catch (const json::exception&) {
    return makeError("--title: not valid UTF-8");
  }
  if (options.directions && options.directions->size() > std::size_t(PublishOptions::kMaxDirections))
    return makeError("--directions: at most " + std::to_string(PublishOptions::kMaxDirections) + " names");
  return {};
}

Result<PublishReport> publishSite(const PublishOptions& options, const std::atomic<bool>* stop) {
  if (Status valid = checkPublishOptions(options); !valid) return makeError(valid.error(), ErrorKind::Input);
  auto folder = SiteFolder::create(options.out);
  if (!folder) return makeError(folder.error(), folder.errorKind());
  PublishReport report;
  report.out = folder->target();
  if (Status copied = copyAssets(*folder, options.assets, report.files, stop); !copied) return makeError(copied.error(), copied.errorKind());

  OnnxExportOptions onnx;
  onnx.generator = options.generator;
  onnx.config_metadata = false;  // the page is public: no data set paths, user or host names
  auto model = exportGeneratorOnnx(options.checkpoint, folder->staging() + "/" + kModelFile, onnx);
  if (!model) return makeError(model.error(), model.errorKind());
  report.files.push_back(kModelFile);
  if (Status halted = stopped(stop); !halted) return makeError(halted.error(), ErrorKind::Machine);

  auto directions = directionsJson(options, static_cast<int>(model->nz));
  if (!directions) return makeError(directions.error(), ErrorKind::Input);
  auto walk = walkJson(options.walk, static_cast<int>(model->nz));
  if (!walk) return makeError(walk.error(), ErrorKind::Input);
  json scenes = scenesJson(options, *model);
  report.directions = static_cast<int>(directions->size());
  report.walk_frames = walk->is_null() ? 0 : static_cast<std::int64_t>((*walk)["frames"].size());
  scenes["directions"] = std::move(*directions);
  scenes["walk"] = std::move(*walk);
  if (Status written = folder->writeFile(SiteFolder::kManifest, scenes.dump() + "\n"); !written)
    return makeError(written.error(), ErrorKind::Machine);
  report.files.push_back(SiteFolder::kManifest);

  if (Status halted = stopped(stop); !halted) return makeError(halted.error(), ErrorKind::Machine);
  if (Status committed = folder->commit(); !committed) return makeError(committed.error(), ErrorKind::Machine);
  report.bytes = folder->bytes() + model->bytes;
  report.step = model->step;
  report.generator = model->generator;
  std::sort(report.files.begin(), report.files.end());
  return report;
}

}  // namespace streetgan::cli
