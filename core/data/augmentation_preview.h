#pragma once
// Augmented variants of one image, exactly as training sees them (the same SamplePipeline, with
// per-variant seeds), for `streetgan data preview` and the studio's dataset browser. The image is
// decoded once. An unreadable image is an Error naming the file.
#include "core/data/sample_pipeline.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <string>

namespace streetgan {

/// `count` variants of `path` as an (count, nc, S, S) tensor in [-1, 1]; variant i uses the
/// sample seed of (seed, epoch 0, index i).
Result<torch::Tensor> augmentedVariants(const SamplePipeline& pipeline, const std::string& path,
                                        int count, std::uint64_t seed);

}  // namespace streetgan
