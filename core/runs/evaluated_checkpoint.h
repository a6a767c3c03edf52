#pragma once
// EvaluatedCheckpoint: the checkpoint an evaluation was computed on, as both evaluation files
// (ParzenEvaluationFile's and QualityEvaluationFile's) hold it and write it: "checkpoint" (its
// file name in the run's checkpoints/), "epoch", "step", "images_seen" and "generator" (which of
// its generators was scored; files from before G's moving average have none).
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace streetgan {

/// The key of EvaluatedCheckpoint::generator, written only when it is known.
constexpr const char* kEvaluatedGeneratorKey = "generator";

struct EvaluatedCheckpoint {
  std::string file;              ///< "checkpoint": its file name in the run's checkpoints/
  std::int64_t epoch = 0;        ///< epochs completed
  std::int64_t step = 0;         ///< optimizer steps taken
  std::int64_t images_seen = 0;  ///< real images shown to D
  std::string generator;         ///< "ema" or "raw" (core/train/generator_choice.h); empty: not recorded
};

/// Sets the keys of `checkpoint` in the JSON object `out`.
void writeEvaluatedCheckpoint(nlohmann::json& out, const EvaluatedCheckpoint& checkpoint);

}  // namespace streetgan
