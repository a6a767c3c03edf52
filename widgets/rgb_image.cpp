#include "widgets/rgb_image.h"

#include <QImageReader>
#include <QRect>

#include <algorithm>

namespace streetgan::widgets {

QImage toQImage(const RgbImage& image) {
  if (image.width <= 0 || image.height <= 0 || image.pixels.empty()) return {};
  const QImage::Format format = image.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB888;
  // The pixels are borrowed by the wrapper, then copied into an image that owns its own.
  return QImage(image.pixels.data(), image.width, image.height, image.width * image.channels, format).copy();
}

RenderedImages toRenderedImages(const Result<std::vector<RgbImage>>& images) {
  if (!images) return makeError(images.error(), images.errorKind());
  QVector<QImage> result;
  for (const RgbImage& image : *images) result.push_back(toQImage(image));
  return result;
}

QImage readCenterSquare(const QString& path) {
  QImageReader reader(path);
  reader.setAutoTransform(true);
  const QSize size = reader.size();
  if (size.isValid()) {
    const int side = std::min(size.width(), size.height());
    reader.setClipRect(QRect((size.width() - side) / 2, (size.height() - side) / 2, side, side));
  }
  return reader.read();
}

}  // namespace streetgan::widgets
