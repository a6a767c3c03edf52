#pragma once
// CropFit: how a data set's images fit the training crop, a square of augment.crop_scale ×
// img_size pixels cut from each image's centre and padded with black where the image is smaller.
// The presets' crop_scale 4 assumes 640×480 photographs; on a folder of 64-px images it pads each
// with black and shrinks the subject to a quarter of the frame. Measured on an evenly spaced
// sample of the images' headers (no decoding); said as a warning, naming the key to change, when
// most of them are smaller than the crop.
#include "core/data/image_dataset.h"

#include <cstdint>
#include <string>

namespace streetgan {

struct CropFit {
  std::int64_t looked_at = 0;    ///< images whose size could be read
  std::int64_t unreadable = 0;   ///< images sampled with no size in their first 128 KiB (or no header)
  std::int64_t smaller = 0;      ///< of those, with a side shorter than the crop
  std::int64_t median_side = 0;  ///< the median of their shorter sides, in pixels
  std::int64_t crop_side = 0;    ///< crop_scale × img_size, rounded
};

/// Reads the sizes of up to `sample` of `dataset`'s images, evenly spaced.
CropFit measureCropFit(const ImageDataset& dataset, double crop_scale, int img_size, std::size_t sample = 64);

/// The warning when most images looked at are smaller than the crop; empty otherwise.
std::string cropFitWarning(const CropFit& fit, double crop_scale, int img_size);

}  // namespace streetgan
