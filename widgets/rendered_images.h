#pragma once
// What a worker that renders images hands back to the GUI thread.
#include <QImage>
#include <QString>
#include <QVector>

namespace streetgan::widgets {

/// Images rendered by a worker, or why they could not be.
struct RenderedImages {
  QVector<QImage> images;
  QString error;
};

}  // namespace streetgan::widgets
