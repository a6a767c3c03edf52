#pragma once
// Conversions between core's 8-bit images (RgbImage) and QImage for display.
#include "latent_explorer.h"

#include <QImage>

namespace streetgan::studio {

/// A deep copy of `image` as a QImage (RGB888 or Grayscale8); null for an empty image.
QImage toQImage(const RgbImage& image);

}  // namespace streetgan::studio
