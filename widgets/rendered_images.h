#pragma once
// What a worker that renders images hands back to the GUI thread.
#include "core/util/result.h"

#include <QImage>
#include <QVector>

namespace streetgan::widgets {

/// Images rendered by a worker, or why they could not be.
using RenderedImages = Result<QVector<QImage>>;

}  // namespace streetgan::widgets
