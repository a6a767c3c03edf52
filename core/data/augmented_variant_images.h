#pragma once
// Augmented variants of one image as 8-bit pixels: augmentedVariants() (the training pipeline,
// per-variant seeds) behind a header without LibTorch types, for the studio's dataset browser.
// An unreadable image or bad settings come back as an Error naming the file or value.
#include "core/config/train_config.h"
#include "core/data/image_pixels.h"
#include "core/util/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

Result<std::vector<RgbImage>> augmentedVariantImages(const AugmentConfig& augment, int img_size, int channels,
                                                     bool reduced_decode, const std::string& path, int count,
                                                     std::uint64_t seed);

}  // namespace streetgan
