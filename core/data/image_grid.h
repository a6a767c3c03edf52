#pragma once
// Image grids: a batch of generated images (B, C, H, W) in [-1, 1] tiled into one picture with a
// 2-pixel border, as torchvision's make_grid does, and written as PNG atomically.
#include "core/data/image_pixels.h"
#include "core/util/atomic_file.h"
#include "core/util/result.h"

#include <torch/types.h>

#include <string>

namespace streetgan {

/// Tiles `images` into rows of `columns` (0 = ceil(sqrt(B))). Returns (3 or 1, H', W') uint8 CHW.
torch::Tensor makeImageGrid(const torch::Tensor& images, int columns = 0, int padding = 2);

/// Encodes `images` as a PNG grid at `path` (written atomically; `folder` as writeFileAtomically's).
Status writeImageGrid(const torch::Tensor& images, const std::string& path, int columns = 0,
                      FolderLinks folder = FolderLinks::Follow);

/// One uint8 CHW image as interleaved 8-bit pixels.
RgbImage toRgbImage(const torch::Tensor& chw_uint8);

/// Encodes one uint8 CHW image as PNG bytes.
Result<std::string> encodePng(const torch::Tensor& chw_uint8);

}  // namespace streetgan
