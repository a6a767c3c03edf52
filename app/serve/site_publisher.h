#pragma once
// publishSite(): `streetgan publish`, a static web page that generates street scenes in the
// visitor's browser (docs/publish.md). The folder holds the page's own files (index.html, app.js,
// style.css), ONNX Runtime Web with its licence (ort/), the generator as model.onnx (dynamic batch,
// exportGeneratorOnnx) and scenes.json: the run's facts, the first scenes' latents, the chosen
// directions and a saved walk's frames. Written through SiteFolder: all of it or nothing, never
// over a folder that is not an earlier publish.
#include "app/serve/site_folder.h"
#include "core/train/generator_choice.h"
#include "core/util/result.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace streetgan::cli {

struct PublishOptions {
  std::string checkpoint;  ///< the checkpoint file whose generator the page runs
  std::string run;         ///< the run folder its directions are read from; empty: none
  std::string out;         ///< the folder to write
  std::string assets;      ///< the page's files to copy (the build's share/streetgan/site)
  std::string title = "This street does not exist";
  /// Direction names (<run>/directions/NAME.json); nothing: every saved one, at most kMaxDirections.
  std::optional<std::vector<std::string>> directions;
  std::string walk;        ///< a walk file (`streetgan walk --save-walk`); empty: none
  GeneratorChoice generator = GeneratorChoice::Default;
  int scenes = 16;         ///< scenes in the first grid, 1..kMaxScenes: the latents of seeds seed..seed+scenes−1
  std::uint64_t seed = 0;
  int fps = 30;            ///< the walks' frame rate, 1..kMaxFps
  int frames_per_key = 30; ///< frames from one clicked scene to the next, 2..kMaxFramesPerKey

  static constexpr int kMaxScenes = 64;
  static constexpr int kMaxDirections = 32;
  static constexpr int kMaxFps = 120;
  static constexpr int kMaxFramesPerKey = 300;
  static constexpr std::int64_t kMaxWalkFrames = 3000;
  static constexpr std::size_t kMaxTitleLength = 200;
};

struct PublishReport {
  std::string out;
  std::vector<std::string> files;  ///< relative to out, as written
  std::int64_t bytes = 0;
  std::int64_t step = 0;
  std::string generator;           ///< "ema" or "raw"
  int directions = 0;
  std::int64_t walk_frames = 0;
};

/// The options' values checked (ranges, the title's characters): an Error naming the value.
Status checkPublishOptions(const PublishOptions& options);
/// Writes the page. `stop` (a signal handler's flag) is looked at between files: set, the staging
/// folder is removed and an Error says so.
Result<PublishReport> publishSite(const PublishOptions& options, const std::atomic<bool>* stop = nullptr);

}  // namespace streetgan::cli
