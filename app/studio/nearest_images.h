#pragma once
// NearestImages: does the generator copy its training photographs? A page of samples of one
// checkpoint (seeds first_seed, first_seed + 1, …), each with its nearest training images, as
// core/eval/nearest_training_images.h finds them in the run's training set (the search itself, and
// `streetgan nearest`, live there). The samples are rendered as Explore renders them; the
// neighbours' photographs come back for display as their center squares at full resolution.
//
// findNearestImages() is long work: call it on a worker (it is safe on any thread). It checks
// `cancel` between chunks and tells `progress` the training images searched; nothing here
// throws: every failure, an exception included, is the result's status.
#include "app/studio/control/status_text.h"

#include <QImage>
#include <QString>
#include <QVector>

#include <atomic>
#include <cstdint>
#include <functional>

namespace streetgan::studio {

struct NearestImagesRequest {
  QString run_dir;
  QString checkpoint;            ///< a checkpoint file; empty: the run's newest
  std::uint64_t first_seed = 0;  ///< the samples are seeds first_seed … first_seed + count − 1
  int count = 8;                 ///< samples on the page
  int neighbours = 3;            ///< nearest training images per sample
  std::int64_t max_train = 20000;  ///< training images searched at most (a seeded draw when more)
  std::uint64_t draw_seed = 0;   ///< the seed of that draw (shuffledPaths)
  int chunk = 512;               ///< training images read at once
};

struct NearestTrainingImage {
  QString path;           ///< the photograph's full path
  QString relative_path;  ///< its path relative to the data folder
  double distance = 0;    ///< L2 distance to the sample at 32×32, images in [-1, 1]
  QImage image;           ///< its center square at full resolution; null when it cannot be read
};

struct NearestImagesRow {
  std::uint64_t seed = 0;
  QImage sample;                          ///< the generated image, at the model size
  QVector<NearestTrainingImage> nearest;  ///< nearest first
};

struct NearestImagesResult {
  Status status;                   ///< why not ("cancelled" when cancelled); ok: the rows are ready
  QString checkpoint;              ///< the checkpoint's file name
  QString dataroot;                ///< the run's data folder
  int image_size = 0;              ///< the model's image size
  int compare_size = 0;            ///< the side the images are compared at
  std::int64_t train_total = 0;    ///< training images of the run's data set
  std::int64_t train_searched = 0; ///< of them, read and compared
  std::int64_t train_skipped = 0;  ///< of the draw, unreadable
  QVector<NearestImagesRow> rows;  ///< one per sample, in seed order
};

/// The samples of `request` beside their nearest training images. `progress(done, total)`: the
/// training images searched so far, of those to search (called on the calling thread).
NearestImagesResult findNearestImages(const NearestImagesRequest& request, const std::atomic<bool>& cancel,
                                      const std::function<void(std::int64_t done, std::int64_t total)>& progress = {});

}  // namespace streetgan::studio
