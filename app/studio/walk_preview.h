#pragma once
// WalkPreview: the walk settings (interpolation, easing, frames per key, fps, loop, grid size) and
// a live, looping preview of the walk through the keyframes. Frames are rendered ahead of the
// play head on a worker thread, a few at a time, and cached (all of them when they fit in 256
// MiB; otherwise a window ahead of the play head), so playback runs at the chosen rate while the
// generator works. Any change of keys or settings starts the cache afresh.
#include "core/latent/latent_explorer.h"
#include "widgets/rendered_images.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QImage>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace streetgan::studio {

class WalkPreview : public QWidget {
  Q_OBJECT
public:
  explicit WalkPreview(QWidget* parent = nullptr);
  ~WalkPreview() override;

  void setExplorer(std::shared_ptr<LatentExplorer> explorer);
  void setKeys(std::vector<Latent> keys, std::vector<std::optional<std::uint64_t>> seeds);
  /// The walk as set: keys and every control.
  WalkPlan plan() const;
  /// Sets the controls from a plan (a loaded walk file); keys come through setKeys.
  void setSettings(const WalkPlan& plan);
  void setPlaying(bool playing);
  bool isPlaying() const { return timer_.isActive(); }
  double framesPerSecond() const;

  int frameCount() const { return static_cast<int>(cache_.size()); }
  int cachedFrames() const { return cached_; }
  /// Frames shown and ticks that found their frame not rendered yet, since playback (re)started.
  int shownFrames() const { return shown_; }
  int missedTicks() const { return missed_; }
  /// Frames shown per second since playback (re)started.
  double shownRate() const;
  QImage currentFrame() const { return current_; }
  QString statusText() const;

signals:
  /// The settings changed (for the export, which uses the same plan).
  void planChanged();

private:
  void restart();
  void tick();
  void renderAhead();
  qint64 frameBytes() const;

  std::shared_ptr<LatentExplorer> explorer_;
  std::vector<Latent> keys_;
  std::vector<std::optional<std::uint64_t>> seeds_;
  QComboBox* mode_ = nullptr;
  QComboBox* easing_ = nullptr;
  QSpinBox* frames_per_key_ = nullptr;
  QDoubleSpinBox* fps_ = nullptr;
  QCheckBox* loop_ = nullptr;
  QSpinBox* rows_ = nullptr;
  QSpinBox* columns_ = nullptr;
  QPushButton* play_ = nullptr;
  QLabel* view_ = nullptr;
  QLabel* status_ = nullptr;
  QTimer timer_;
  QElapsedTimer clock_;
  QVector<QImage> cache_;
  int cached_ = 0, head_ = 0, shown_ = 0, missed_ = 0;
  int rendering_from_ = -1;   // first frame of the job in flight
  quint64 generation_ = 0;    // of the cache; a job of an older one is dropped
  quint64 job_generation_ = 0;
  QImage current_;
  QString error_;
  QFutureWatcher<widgets::RenderedImages> watcher_;
};

}  // namespace streetgan::studio
