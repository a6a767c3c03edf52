#pragma once
// ChannelGridView: one block of the generator for one sample, as a grid of its channels: each
// channel a grey tile normalised on its own (its minimum black, its maximum white; an all-equal
// channel is black), in the order given (the panel sorts by mean activation), switched-off
// channels crossed out in red. A click on a tile says which channel (channelClicked).
#include <QImage>
#include <QSet>
#include <QWidget>

#include <vector>

namespace streetgan::studio {

class ChannelGridView : public QWidget {
  Q_OBJECT
public:
  explicit ChannelGridView(QWidget* parent = nullptr);

  /// `activations` is channels·height·width floats; `order` the channels in display order.
  void setChannels(const std::vector<float>& activations, int channels, int height, int width, std::vector<int> order);
  void setAblated(const QSet<int>& channels);
  /// The grid as an image, as drawn.
  QImage gridImage() const;
  int channelAt(const QPoint& point) const;
  /// Where channel `channel`'s tile is drawn (for tests and clicks).
  QRect tileRect(int channel) const;

signals:
  void channelClicked(int channel);

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

private:
  void layoutTiles();

  QImage grid_;                // the tiles at their own pixels, before scaling
  std::vector<int> order_;
  QSet<int> ablated_;
  int channels_ = 0, height_ = 0, width_ = 0, columns_ = 1, tile_ = 8;
};

}  // namespace streetgan::studio
