#include "app/studio/channel_grid_view.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace streetgan::studio {

ChannelGridView::ChannelGridView(QWidget* parent) : QWidget(parent) {
  setMinimumSize(200, 200);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setToolTip("Each channel of the block for this sample, brightest where it is most active, sorted by mean "
             "activation. Click a channel to switch it off (set to zero) and see what the sample loses.");
}

void ChannelGridView::setChannels(const std::vector<float>& activations, int channels, int height, int width,
                                  std::vector<int> order) {
  channels_ = channels;
  height_ = height;
  width_ = width;
  order_ = std::move(order);
  columns_ = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(channels)))));
  const int rows = (channels + columns_ - 1) / columns_;
  grid_ = QImage(columns_ * (width + 1), rows * (height + 1), QImage::Format_Grayscale8);
  grid_.fill(64);
  const std::size_t plane = static_cast<std::size_t>(height) * width;
  for (int i = 0; i < channels && i < static_cast<int>(order_.size()); ++i) {
    const int c = order_[static_cast<std::size_t>(i)];
    const float* values = activations.data() + static_cast<std::size_t>(c) * plane;
    const auto [lo, hi] = std::minmax_element(values, values + plane);
    const float range = *hi - *lo;
    const int x0 = (i % columns_) * (width + 1), y0 = (i / columns_) * (height + 1);
    for (int y = 0; y < height; ++y) {
      uchar* line = grid_.scanLine(y0 + y) + x0;
      for (int x = 0; x < width; ++x)
        line[x] = range > 0 ? static_cast<uchar>(std::lround(255.0f * (values[y * width + x] - *lo) / range)) : 0;
    }
  }
  layoutTiles();
  update();
}

void ChannelGridView::setAblated(const QSet<int>& channels) {
  ablated_ = channels;
  update();
}

void ChannelGridView::layoutTiles() {
  if (channels_ == 0) return;
  const int rows = (channels_ + columns_ - 1) / columns_;
  const int side = std::max(1, std::min(width() / columns_, height() / std::max(1, rows)));
  tile_ = std::max(2, side);
}

void ChannelGridView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  layoutTiles();
}

QRect ChannelGridView::tileRect(int channel) const {
  const auto it = std::find(order_.begin(), order_.end(), channel);
  if (it == order_.end()) return {};
  const int i = static_cast<int>(it - order_.begin());
  return QRect((i % columns_) * tile_, (i / columns_) * tile_, tile_ - 1, tile_ - 1);
}

int ChannelGridView::channelAt(const QPoint& point) const {
  if (tile_ <= 0 || point.x() < 0 || point.y() < 0) return -1;
  const int column = point.x() / tile_, row = point.y() / tile_;
  if (column >= columns_) return -1;
  const int i = row * columns_ + column;
  return i < static_cast<int>(order_.size()) ? order_[static_cast<std::size_t>(i)] : -1;
}

QImage ChannelGridView::gridImage() const {
  QImage out(size(), QImage::Format_RGB32);
  out.fill(Qt::black);
  QPainter painter(&out);
  const_cast<ChannelGridView*>(this)->render(&painter);
  return out;
}

void ChannelGridView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(32, 32, 32));
  if (grid_.isNull()) return;
  for (int i = 0; i < static_cast<int>(order_.size()); ++i) {
    const QRect source((i % columns_) * (width_ + 1), (i / columns_) * (height_ + 1), width_, height_);
    const QRect target((i % columns_) * tile_, (i / columns_) * tile_, tile_ - 1, tile_ - 1);
    painter.drawImage(target, grid_, source);
    if (ablated_.contains(order_[static_cast<std::size_t>(i)])) {
      painter.setPen(QPen(QColor(220, 40, 40), 2));
      painter.drawRect(target.adjusted(1, 1, -1, -1));
      painter.drawLine(target.topLeft(), target.bottomRight());
    }
  }
}

void ChannelGridView::mousePressEvent(QMouseEvent* event) {
  const int channel = channelAt(event->position().toPoint());
  if (channel >= 0) emit channelClicked(channel);
}

}  // namespace streetgan::studio
