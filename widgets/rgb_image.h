#pragma once
// Conversions between core's 8-bit images (RgbImage) and QImage for display.
#include "core/data/image_pixels.h"
#include "core/util/result.h"
#include "widgets/rendered_images.h"

#include <vector>

#include <QImage>
#include <QString>

namespace streetgan::widgets {

/// A deep copy of `image` as a QImage (RGB888 or Grayscale8); null for an empty image.
QImage toQImage(const RgbImage& image);
/// A worker's rendered images as QImages, or its error.
RenderedImages toRenderedImages(const Result<std::vector<RgbImage>>& images);
/// The center square of the photograph at `path`, read at full resolution (EXIF orientation
/// applied, no padding, no augmentation); a null image when it cannot be read.
QImage readCenterSquare(const QString& path);

}  // namespace streetgan::widgets
