#pragma once
// Which of a checkpoint's generators renders: G's exponential moving average
// (ema.half_life_images; generator_average.h) or G itself, the raw generator. Its two names,
// "ema" and "raw", are what `--generator`, results and the studio say. No LibTorch here: the
// studio's widgets include it.
#include "core/util/result.h"

#include <string>

namespace streetgan {

/// Default: the moving average when the checkpoint holds one, else G.
enum class GeneratorChoice { Default, Average, Raw };

/// "ema" or "raw" as a GeneratorChoice; an Error listing both otherwise.
Result<GeneratorChoice> generatorChoiceNamed(const std::string& name);
/// "ema" for the moving average, "raw" for G.
const char* generatorName(bool average);

}  // namespace streetgan
