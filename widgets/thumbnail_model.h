#pragma once
// ThumbnailModel: a list model of image files (any number: 100,000 is fine) whose thumbnails are
// decoded lazily, only when a view asks for them, on worker threads with reduced decoding (the
// JPEG reader decodes at 1/2, 1/4 or 1/8 scale when that is enough). Until its thumbnail is ready
// a row shows a placeholder. Decoded thumbnails stay in a cache of bounded size (the least
// recently used go first); requests for rows scrolled past are dropped, newest first wins.
#include <QAbstractListModel>
#include <QCache>
#include <QImage>
#include <QPixmap>
#include <QSet>
#include <QStringList>
#include <QVector>

#include <atomic>
#include <memory>

class QListView;

namespace streetgan::widgets {

class ThumbnailModel : public QAbstractListModel {
  Q_OBJECT
public:
  /// The full path of a row (Qt::UserRole).
  static constexpr int PathRole = Qt::UserRole;

  explicit ThumbnailModel(QObject* parent = nullptr);
  ~ThumbnailModel() override;

  void setPaths(QStringList paths);
  /// Shows this model in `view` as the Dataset tab's grid: icons of thumbnailSize(), uniform,
  /// static, laid out in batches of 2,000 (100,000 items are not laid out at once).
  void showIn(QListView& view);
  const QStringList& paths() const { return paths_; }
  /// Thumbnail side in pixels (default 96).
  int thumbnailSize() const { return side_; }
  /// Bytes of decoded thumbnails kept (default 64 MiB).
  void setCacheBytes(qint64 bytes);
  qint64 cachedBytes() const;
  int cachedCount() const { return cache_.count(); }
  int decodedCount() const { return decoded_; }
  int pendingCount() const { return static_cast<int>(queue_.size()) + in_flight_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

private:
  struct Batch;
  void request(int row) const;
  void startJobs() const;
  void onDecoded(quint64 generation, const QVector<int>& rows, const QVector<QImage>& images);

  QStringList paths_;
  int side_ = 96;
  mutable QCache<int, QPixmap> cache_;  // cost: bytes / 1024
  mutable QVector<int> queue_;          // rows waiting, newest last
  mutable QSet<int> queued_;
  mutable int in_flight_ = 0;
  int decoded_ = 0;
  quint64 generation_ = 0;              // of paths_; results of an older list are dropped
  QPixmap placeholder_;
  std::shared_ptr<std::atomic<bool>> alive_;  // false once the model is gone
};

}  // namespace streetgan::widgets
