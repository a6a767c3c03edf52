#include "core/interop/generator_export.h"

#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/util/atomic_file.h"
#include "core/util/regular_file.h"
#include "core/formats/torch_save_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>

namespace streetgan {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSidecarFormat = "streetgan-generator";

bool sameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

// The outputs may replace files of an earlier export, never the checkpoint read or a .json the
// sidecar would replace that is not an earlier sidecar (a run's config.json, a user's notes).
Status outputsAreSafe(const std::string& checkpoint, const std::string& out, const std::string& sidecar) {
  if (fs::path(out).extension() == ".json")
    return makeError(out + ": the state dict needs a name other than .json (its sidecar is the .json)");
  for (const std::string& path : {out, sidecar})
    if (sameFile(path, checkpoint))
      return makeError(path + ": this is the checkpoint being exported; choose another --out");
  std::error_code error;
  if (!fs::exists(fs::symlink_status(sidecar, error))) return {};
  auto text = RegularFile::readAll(sidecar, 1 << 20);
  const auto json = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  const bool earlier = json.is_object() && json.contains("format") && json["format"].is_string() &&
                       json["format"].get<std::string>() == kSidecarFormat;
  if (!earlier)
    return makeError(sidecar + ": exists and is not the sidecar of an earlier export, so the export would replace it; "
                     "it is kept (choose another --out)");
  return {};
}

}  // namespace

std::string exportSidecarPath(const std::string& state_path) {
  return fs::path(state_path).replace_extension(".json").string();
}

Result<GeneratorExportReport> exportGenerator(const std::string& checkpoint, const std::string& out,
                                              GeneratorChoice choice) {
  auto loaded = loadCheckpointGenerator(checkpoint, torch::kCPU, choice);
  if (!loaded) return makeError(loaded.error());
  GeneratorExportReport report;
  report.state_path = out;
  report.sidecar_path = exportSidecarPath(out);
  report.step = loaded->progress.step;
  report.generator = loaded->generatorName();
  if (Status safe = outputsAreSafe(checkpoint, out, report.sidecar_path); !safe) return makeError(safe.error());
  // PyTorch's state_dict() order: each layer's parameters, then its buffers.
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (const auto& layer : loaded->generator->named_modules("", false)) {
    for (const auto& item : layer.value()->named_parameters(false)) state.emplace_back(layer.key() + "." + item.key(), item.value());
    for (const auto& item : layer.value()->named_buffers(false)) state.emplace_back(layer.key() + "." + item.key(), item.value());
  }
  report.tensors = static_cast<std::int64_t>(state.size());
  auto bytes = torchSaveStateDict(state);
  if (!bytes) return makeError(out + ": cannot write the state dict (" + bytes.error() + ")");
  const TrainConfig& config = loaded->config;
  // A checkpoint kept outside a run gives its config's name.
  const auto run_folder = RunDirectory::ofCheckpoint(checkpoint);
  const std::string run = run_folder ? run_folder->name() : config.name;
  nlohmann::json sidecar = {{"format", kSidecarFormat},
                            {"format_version", 1},
                            {"state_dict", fs::path(out).filename().string()},
                            {"nz", config.nz},
                            {"ngf", config.ngf},
                            {"nc", config.nc},
                            {"img_size", config.img_size},
                            {"preset", config.preset},
                            {"run", run},
                            {"step", loaded->progress.step},
                            {"generator", report.generator},
                            {"epoch", loaded->progress.epoch},
                            {"images_seen", loaded->progress.images_seen},
                            {"checkpoint", fs::absolute(checkpoint).lexically_normal().string()},
                            {"output_range", {-1, 1}},
                            {"latent_shape", {"n", config.nz, 1, 1}}};
  // Both files or neither.
  if (Status written = writeFilesAtomically({{out, *bytes}, {report.sidecar_path, sidecar.dump(2) + "\n"}}); !written)
    return makeError(written.error());
  return report;
}

}  // namespace streetgan
