#include "widgets/thumbnail_model.h"

#include "widgets/worker_pool.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QImageReader>
#include <QListView>
#include <QMetaObject>

namespace streetgan::widgets {

namespace {
constexpr int kBatchRows = 8;        // thumbnails per worker job
constexpr int kJobsAtOnce = 2;       // jobs in flight
constexpr int kQueueLimit = 256;     // rows waiting; older requests (scrolled past) are dropped

QImage decodeThumbnail(const QString& path, int side) {
  QImageReader reader(path);
  reader.setAutoTransform(true);
  const QSize size = reader.size();
  if (size.isValid()) {
    // Scaled decoding: the JPEG reader then decodes at 1/2, 1/4 or 1/8 of full size.
    reader.setScaledSize(size.scaled(side, side, Qt::KeepAspectRatio));
  }
  QImage image = reader.read();
  if (image.isNull()) return {};
  return image.convertToFormat(QImage::Format_RGB32);
}
}  // namespace

ThumbnailModel::ThumbnailModel(QObject* parent)
    : QAbstractListModel(parent), alive_(std::make_shared<std::atomic<bool>>(true)) {
  cache_.setMaxCost(64 * 1024);  // KiB
  QImage placeholder(side_, side_, QImage::Format_RGB32);
  placeholder.fill(QColor(225, 225, 225));
  placeholder_ = QPixmap::fromImage(placeholder);
}

ThumbnailModel::~ThumbnailModel() { *alive_ = false; }

void ThumbnailModel::setCacheBytes(qint64 bytes) { cache_.setMaxCost(static_cast<int>(std::max<qint64>(1, bytes / 1024))); }

qint64 ThumbnailModel::cachedBytes() const { return static_cast<qint64>(cache_.totalCost()) * 1024; }

void ThumbnailModel::showIn(QListView& view) {
  view.setModel(this);
  view.setViewMode(QListView::IconMode);
  view.setUniformItemSizes(true);
  view.setResizeMode(QListView::Adjust);
  view.setMovement(QListView::Static);
  view.setLayoutMode(QListView::Batched);
  view.setBatchSize(2000);
  view.setIconSize(QSize(side_, side_));
}

void ThumbnailModel::setPaths(QStringList paths) {
  beginResetModel();
  ++generation_;
  paths_ = std::move(paths);
  cache_.clear();
  queue_.clear();
  queued_.clear();
  endResetModel();
}

int ThumbnailModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(paths_.size()); }

QVariant ThumbnailModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= paths_.size()) return {};
  const int row = index.row();
  switch (role) {
    case Qt::DisplayRole: return QFileInfo(paths_[row]).fileName();
    case Qt::ToolTipRole:
    case PathRole: return paths_[row];
    case Qt::DecorationRole:
      if (const QPixmap* pixmap = cache_.object(row)) return *pixmap;
      request(row);
      return placeholder_;
    case Qt::SizeHintRole: return QSize(side_ + 8, side_ + 24);
    default: return {};
  }
}

void ThumbnailModel::request(int row) const {
  if (queued_.contains(row)) return;
  queue_.push_back(row);
  queued_.insert(row);
  while (queue_.size() > kQueueLimit) queued_.remove(queue_.takeFirst());
  startJobs();
}

void ThumbnailModel::startJobs() const {
  while (in_flight_ < kJobsAtOnce && !queue_.isEmpty()) {
    // Newest requests first: they are what the view shows now.
    QVector<int> rows;
    QStringList files;
    while (rows.size() < kBatchRows && !queue_.isEmpty()) {
      const int row = queue_.takeLast();
      rows.push_back(row);
      files.push_back(paths_[row]);
    }
    ++in_flight_;
    auto* self = const_cast<ThumbnailModel*>(this);
    const quint64 generation = generation_;
    const int side = side_;
    const auto alive = alive_;
    studioWorkers()->start([self, alive, generation, rows, files, side] {
      yieldToTheGuiThread();
      QVector<QImage> images;
      for (const QString& file : files) {
        if (!*alive) return;
        images.push_back(decodeThumbnail(file, side));
      }
      // Through the application object, which outlives the model: the GUI thread checks that the
      // model is still there (it is destroyed on that thread) before handing the images over.
      QMetaObject::invokeMethod(
          qApp, [self, alive, generation, rows, images] { if (*alive) self->onDecoded(generation, rows, images); },
          Qt::QueuedConnection);
    });
  }
}

void ThumbnailModel::onDecoded(quint64 generation, const QVector<int>& rows, const QVector<QImage>& images) {
  --in_flight_;
  for (int i = 0; i < rows.size(); ++i) queued_.remove(rows[i]);
  if (generation == generation_) {
    for (int i = 0; i < rows.size(); ++i) {
      QImage image = images[i];
      if (image.isNull()) {  // unreadable: a reddish placeholder, so it is not asked for again
        image = QImage(side_, side_, QImage::Format_RGB32);
        image.fill(QColor(240, 200, 200));
      }
      const int cost = std::max<int>(1, static_cast<int>(image.sizeInBytes() / 1024));
      // Converted once here, so painting never converts an image again.
      cache_.insert(rows[i], new QPixmap(QPixmap::fromImage(std::move(image))), cost);
      ++decoded_;
      const QModelIndex at = index(rows[i]);
      emit dataChanged(at, at, {Qt::DecorationRole});
    }
  }
  startJobs();
}

}  // namespace streetgan::widgets
