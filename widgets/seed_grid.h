#pragma once
// SeedGrid: a page of samples from consecutive seeds (the seed under each), rendered on a worker
// thread. Page through seeds, go to a typed seed, or resample a random page. Clicking a sample
// asks for it as a keyframe; its context menu also adds it to a group of the latent arithmetic or
// marks it as having or lacking a property (the Directions panel). A latent offset (the
// directions' sliders) moves every sample of the page together.
#include "core/latent/latent_explorer.h"
#include "widgets/rendered_images.h"

#include <QFutureWatcher>
#include <QImage>
#include <QVector>
#include <QWidget>

#include <memory>

class QGridLayout;
class QLabel;
class QSpinBox;
class QToolButton;

namespace streetgan::widgets {

class SeedGrid : public QWidget {
  Q_OBJECT
public:
  explicit SeedGrid(QWidget* parent = nullptr);
  ~SeedGrid() override;

  /// Renders the current page with `explorer` (null: empty tiles).
  void setExplorer(std::shared_ptr<LatentExplorer> explorer);
  void setFirstSeed(quint64 seed);
  quint64 firstSeed() const { return first_seed_; }
  int tileCount() const { return static_cast<int>(tiles_.size()); }
  quint64 seedAt(int tile) const { return first_seed_ + static_cast<quint64>(tile); }
  QImage imageAt(int tile) const { return tile >= 0 && tile < images_.size() ? images_[tile] : QImage(); }
  /// True from a render's start until its page is shown: a render whose thread has ended but
  /// whose result the GUI thread has not taken yet still counts, and so does one asked for again.
  bool isRendering() const { return rendering_; }
  /// Clicks tile `tile` (as a user would).
  void clickTile(int tile);
  /// Added to every seed's latent before rendering; empty for none. Re-renders the page.
  void setLatentOffset(const Latent& offset);
  const Latent& latentOffset() const { return offset_; }
  /// The latent a seed's tile shows: the seed's latent plus the offset (empty without a model).
  Latent latentOf(quint64 seed) const;
  /// Marks tile `tile` as having (`has`) or lacking the property (as the context menu does).
  void markTile(int tile, bool has);
  /// The context menu's "Look Inside the Generator" for `tile` (insideRequested).
  void lookInside(int tile) { emit insideRequested(seedAt(tile)); }

signals:
  void keyframeRequested(quint64 seed, const QImage& image);
  /// group: 0 = A, 1 = B, 2 = C.
  void groupRequested(quint64 seed, int group, const QImage& image);
  /// A sample marked as having (`has`) or lacking the property being labelled, with its latent.
  void markRequested(const streetgan::Latent& latent, bool has, const QImage& image);
  /// "Look Inside the Generator" on a sample.
  void insideRequested(quint64 seed);
  /// The page was rendered (or failed: `error` set).
  void rendered(const QString& error);

private:
  void render();
  void showContextMenu(int tile, const QPoint& at);

  std::shared_ptr<LatentExplorer> explorer_;
  quint64 first_seed_ = 0;
  Latent offset_;
  QVector<QToolButton*> tiles_;
  QVector<QImage> images_;
  QSpinBox* seed_box_ = nullptr;
  QLabel* status_ = nullptr;
  QFutureWatcher<RenderedImages> watcher_;
  bool again_ = false;
  bool rendering_ = false;  // see isRendering()
};

}  // namespace streetgan::widgets
