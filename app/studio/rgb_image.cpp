#include "rgb_image.h"

namespace streetgan::studio {

QImage toQImage(const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0 || image.pixels.empty()) return {};
  const QImage::Format format = image.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888;
  // The pixels are borrowed by the wrapper, then copied into an image that owns its own.
  return QImage(image.pixels.data(), image.width, image.height, image.width * image.channels, format).copy();
}

}  // namespace streetgan::studio
