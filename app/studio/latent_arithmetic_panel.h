#pragma once
// LatentArithmeticPanel: the DCGAN paper's vector arithmetic on samples. Samples are picked into
// groups A, B and C (from the seed grid's context menu); Compute shows mean(A) − mean(B) + mean(C)
// in the middle of a 3 × 3 grid of its neighbours (the result plus a little noise), rendered on a
// worker; clicking a tile uses it as a keyframe.
#include "core/latent/latent_explorer.h"
#include "widgets/rendered_images.h"

#include <QFutureWatcher>
#include <QImage>
#include <QVector>
#include <QWidget>

#include <memory>

class QLabel;
class QListWidget;
class QToolButton;

namespace streetgan::studio {

class LatentArithmeticPanel : public QWidget {
  Q_OBJECT
public:
  explicit LatentArithmeticPanel(QWidget* parent = nullptr);
  ~LatentArithmeticPanel() override;

  void setExplorer(std::shared_ptr<LatentExplorer> explorer);
  /// group: 0 = A, 1 = B, 2 = C.
  void addToGroup(int group, quint64 seed, const QImage& image);
  int groupSize(int group) const;
  void clearGroups();
  /// Computes A − B + C and renders it with its neighbours; false (message in statusText()) when
  /// a group is empty or no checkpoint is open.
  bool compute();
  bool isRendering() const;
  int resultCount() const { return static_cast<int>(results_.size()); }
  const Latent& resultLatent(int tile) const { return results_.at(static_cast<std::size_t>(tile)); }
  QImage resultImage(int tile) const { return tile < images_.size() ? images_[tile] : QImage(); }
  /// Uses result tile `tile` (4 is the result itself) as a keyframe.
  void useAsKeyframe(int tile);
  QString statusText() const;

signals:
  void keyframeRequested(const streetgan::Latent& latent, const QImage& image);
  void computed(const QString& error);

private:
  std::shared_ptr<LatentExplorer> explorer_;
  QVector<quint64> groups_[3];
  QListWidget* lists_[3] = {};
  QVector<QToolButton*> tiles_;
  std::vector<Latent> results_;
  QVector<QImage> images_;
  QLabel* status_ = nullptr;
  QFutureWatcher<widgets::RenderedImages>* watcher_ = nullptr;
};

}  // namespace streetgan::studio
