#include "core/train/generator_choice.h"

namespace streetgan {

Result<GeneratorChoice> generatorChoiceNamed(const std::string& name) {
  if (name == generatorName(true)) return GeneratorChoice::Average;
  if (name == generatorName(false)) return GeneratorChoice::Raw;
  return makeError("\"" + name + "\" is not a generator; allowed: ema (G's moving average) or raw (G itself)");
}

const char* generatorName(bool average) { return average ? "ema" : "raw"; }

}  // namespace streetgan
