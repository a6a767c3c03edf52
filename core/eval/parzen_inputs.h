#pragma once
// The rows ParzenEstimator scores: images flattened channel-first in [-1, 1] (x = pixel/127.5 − 1
// per RGB channel). An image already at the model size is used as is; any other is center-cropped
// (crop_scale · size, black padding) and resized by the training pipeline with every random part
// switched off, so held-out photographs look like what the model was trained to produce. Samples
// come from a generator in batches (eval mode unless asked), the same rows for any batch size.
// Unreadable images are listed, not fatal; an empty result is an Error.
#include "core/config/train_config.h"
#include "core/data/image_cache.h"
#include "core/data/image_dataset.h"
#include "core/model/generator.h"
#include "core/util/result.h"

#include <c10/core/Device.h>
#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct ImageRows {
  torch::Tensor rows;                 ///< (n, channels·size·size) float32
  std::vector<std::string> paths;     ///< the image of each row
  std::vector<SkippedFile> skipped;
};

/// Loads `paths` as rows at `size`, with `crop_scale` for images of another size.
Result<ImageRows> loadImageRows(const std::vector<std::string>& paths, int size, int channels,
                                double crop_scale);

/// A seeded draw of `count` images of an image cache (`streetgan cache build`), all of them when
/// it holds no more, as rows at `size` with `crop_scale`: the same pipeline as loadImageRows on the
/// pixels as decoded for training. A record whose checksum fails is listed as skipped; an Error
/// when the cache has another channel count, holds pixels decoded smaller than the crop needs
/// (a larger DCT reduction), or no record could be read.
Result<ImageRows> loadCachedImageRows(const ImageCache& cache, std::size_t count, std::uint64_t seed, int size,
                                      int channels, double crop_scale);

/// `count` generated images as rows; noise from `seed`, batches of `batch` on `device`.
torch::Tensor generateSampleRows(Generator& generator, int nz, std::int64_t count, std::uint64_t seed,
                                 std::int64_t batch, const c10::Device& device, bool train_mode);

/// `count` paths of `dataset` chosen by a seeded shuffle, starting at `offset` of that shuffle
/// (so a validation and a test split of the same shuffle never overlap).
std::vector<std::string> shuffledPaths(const ImageDataset& dataset, std::uint64_t seed, std::size_t offset,
                                       std::size_t count);

}  // namespace streetgan
