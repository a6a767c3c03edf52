#pragma once
// KeyframeStrip: the keyframes of the walk being built, left to right, each a thumbnail with its
// seed (or "latent" for one from arithmetic or a file). Reorder by dragging, remove the selected
// (Delete key too), clear. The strip holds the latents; changed() follows every edit.
#include "core/latent/latent_explorer.h"

#include <QImage>
#include <QWidget>

#include <optional>

class QListWidget;

namespace streetgan::widgets {

class KeyframeStrip : public QWidget {
  Q_OBJECT
public:
  explicit KeyframeStrip(QWidget* parent = nullptr);

  void addKeyframe(const Latent& latent, std::optional<quint64> seed, const QImage& image);
  int count() const;
  /// Moves keyframe `from` to position `to` (as a drag does).
  void move(int from, int to);
  void remove(int index);
  void clear();
  QListWidget& list() { return *list_; }
  /// The keyframes in order.
  std::vector<Latent> latents() const;
  std::vector<std::optional<std::uint64_t>> seeds() const;
  /// "seed 3", "latent": the label of each keyframe, in order.
  QStringList labels() const;

signals:
  void changed();

private:
  QListWidget* list_ = nullptr;
};

}  // namespace streetgan::widgets
