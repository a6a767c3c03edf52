#include "core/train/generator_export.h"

#include "core/train/checkpoint.h"
#include "core/util/atomic_file.h"
#include "core/util/torch_save_file.h"

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>

namespace streetgan {

namespace fs = std::filesystem;

std::string exportSidecarPath(const std::string& state_path) {
  return fs::path(state_path).replace_extension(".json").string();
}

Result<GeneratorExportReport> exportGenerator(const std::string& checkpoint, const std::string& out) {
  auto loaded = loadCheckpointGenerator(checkpoint, torch::kCPU);
  if (!loaded) return makeError(loaded.error());
  GeneratorExportReport report;
  report.state_path = out;
  report.sidecar_path = exportSidecarPath(out);
  report.step = loaded->progress.step;
  if (fs::path(out).extension() == ".json")
    return makeError(out + ": the state dict needs a name other than .json (its sidecar is the .json)");
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
  // The run is the folder whose checkpoints/ holds the file; a checkpoint kept elsewhere gives
  // its config's name.
  const fs::path folder = fs::absolute(checkpoint).lexically_normal().parent_path();
  const std::string run = folder.filename() == "checkpoints" && !folder.parent_path().filename().empty()
                              ? folder.parent_path().filename().string()
                              : config.name;
  nlohmann::json sidecar = {{"format", "streetgan-generator"},
                            {"format_version", 1},
                            {"state_dict", fs::path(out).filename().string()},
                            {"nz", config.nz},
                            {"ngf", config.ngf},
                            {"nc", config.nc},
                            {"img_size", config.img_size},
                            {"preset", config.preset},
                            {"run", run},
                            {"step", loaded->progress.step},
                            {"epoch", loaded->progress.epoch},
                            {"images_seen", loaded->progress.images_seen},
                            {"checkpoint", fs::absolute(checkpoint).lexically_normal().string()},
                            {"output_range", {-1, 1}},
                            {"latent_shape", {"n", config.nz, 1, 1}}};
  if (Status written = writeFileAtomically(out, *bytes); !written) return makeError(written.error());
  if (Status written = writeFileAtomically(report.sidecar_path, sidecar.dump(2) + "\n"); !written)
    return makeError(written.error());
  return report;
}

}  // namespace streetgan
