#include "core/data/augmented_variant_images.h"

#include "core/data/augmentation_preview.h"
#include "core/data/image_grid.h"

#include <torch/torch.h>

namespace streetgan {

Result<std::vector<RgbImage>> augmentedVariantImages(const AugmentConfig& augment, int img_size, int channels,
                                                     bool reduced_decode, const std::string& path, int count,
                                                     std::uint64_t seed) {
  if (count < 1) return makeError("the number of variants must be at least 1");
  try {
    const SamplePipeline pipeline(augment, img_size, channels, reduced_decode);
    auto variants = augmentedVariants(pipeline, path, count, seed);
    if (!variants) return makeError(variants.error());
    std::vector<RgbImage> images;
    for (std::int64_t i = 0; i < variants->size(0); ++i) images.push_back(toRgbImage(makeImageGrid(variants->narrow(0, i, 1), 1, 0)));
    return images;
  } catch (const c10::Error& e) {
    return makeError(path + ": " + e.what_without_backtrace());
  }
}

}  // namespace streetgan
