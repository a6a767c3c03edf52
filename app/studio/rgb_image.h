#pragma once
// Conversions between core's 8-bit images (RgbImage) and QImage for display.
#include "image_pixels.h"
#include "rendered_images.h"
#include "result.h"

#include <vector>

#include <QImage>

namespace streetgan::studio {

/// A deep copy of `image` as a QImage (RGB888 or Grayscale8); null for an empty image.
QImage toQImage(const RgbImage& image);
/// A worker's rendered images as QImages, or its error.
RenderedImages toRenderedImages(const Result<std::vector<RgbImage>>& images);

}  // namespace streetgan::studio
