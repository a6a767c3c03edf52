#include "core/runs/evaluated_checkpoint.h"

#include <nlohmann/json.hpp>

namespace streetgan {

void writeEvaluatedCheckpoint(nlohmann::json& out, const EvaluatedCheckpoint& checkpoint) {
  out["checkpoint"] = checkpoint.file;
  out["epoch"] = checkpoint.epoch;
  out["step"] = checkpoint.step;
  out["images_seen"] = checkpoint.images_seen;
  if (!checkpoint.generator.empty()) out[kEvaluatedGeneratorKey] = checkpoint.generator;
}

}  // namespace streetgan
