#pragma once
// EvaluatedCheckpoint: the checkpoint an evaluation was computed on, as both evaluation files
// (ParzenEvaluationFile's and QualityEvaluationFile's) hold it and write it: "checkpoint" (its
// file name in the run's checkpoints/), "epoch", "step" and "images_seen".
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace streetgan {

struct EvaluatedCheckpoint {
  std::string file;              ///< "checkpoint": its file name in the run's checkpoints/
  std::int64_t epoch = 0;        ///< epochs completed
  std::int64_t step = 0;         ///< optimizer steps taken
  std::int64_t images_seen = 0;  ///< real images shown to D
};

/// Sets the four keys of `checkpoint` in the JSON object `out`.
void writeEvaluatedCheckpoint(nlohmann::json& out, const EvaluatedCheckpoint& checkpoint);

}  // namespace streetgan
