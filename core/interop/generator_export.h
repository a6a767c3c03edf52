#pragma once
// Exports a run's generator for PyTorch users: a plain state dict, loadable with torch.load and
// load_state_dict into the reference nn.Sequential layout (`main.0.weight`, `main.1.weight`,
// `main.1.bias`, `main.1.running_mean`, …, the names docs/interop.md lists), in torch.save's
// zip format (torchSaveStateDict, which loads with torch.load's weights_only=True too); and beside
// it a sidecar JSON with what a loader
// needs to build the net (nz, ngf, nc, img_size) and where it came from (preset, run — the folder
// whose checkpoints/ holds the file —, step, and which generator: "ema" or "raw").
// Both files are written atomically. Failures come back as one line naming the file.
#include "core/train/generator_choice.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>

namespace streetgan {

struct GeneratorExportReport {
  std::string state_path;    ///< the state dict (.pt)
  std::string sidecar_path;  ///< the JSON beside it (same name, .json)
  std::int64_t tensors = 0;  ///< entries in the state dict
  std::int64_t step = 0;
  std::string generator;     ///< "ema" or "raw": which of the checkpoint's generators was written
};

/// The sidecar's path for a state dict at `state_path`: its extension replaced by ".json".
std::string exportSidecarPath(const std::string& state_path);

/// Writes the generator of the StreetGAN checkpoint `checkpoint` (its moving average by default,
/// generator_choice.h) to `out` and its sidecar.
Result<GeneratorExportReport> exportGenerator(const std::string& checkpoint, const std::string& out,
                                              GeneratorChoice choice = GeneratorChoice::Default);

}  // namespace streetgan
