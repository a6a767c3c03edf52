#pragma once
// NearestTrainingImages: does the generator copy its training photographs? Given generated images
// (RGB, the model's size) and the run's config, each image's nearest training photographs: exact
// L2 nearest neighbours at 32×32 (area averaging, images in [-1, 1]), the distance of the
// memorisation check (docs/evaluation.md, core/eval/memorisation.h). The training images are the
// run's (its data folder, filter and the training side of its held-out split), prepared as training
// sees them without the random parts (core/eval/parzen_inputs.h), read in chunks of `chunk`; at
// most `max_train` of them, a seeded draw, when the set is larger.
//
// find() is long work: call it on a worker (it is safe on any thread). It checks `cancel` between
// chunks ("cancelled" is then the error) and tells `progress` the training images searched; every
// failure, an exception included, comes back as the Result's plain error. The studio's Evaluate tab
// and `streetgan nearest` show what it finds.
#include "core/config/train_config.h"
#include "core/data/image_pixels.h"
#include "core/util/result.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace streetgan {

struct NearestTrainingImagesOptions {
  int neighbours = 3;                         ///< nearest training images per sample
  std::int64_t max_train = 20000;             ///< training images searched at most (a seeded draw when more)
  std::uint64_t draw_seed = 0;                ///< the seed of that draw (shuffledPaths)
  int chunk = 512;                            ///< training images read at once
  const std::atomic<bool>* cancel = nullptr;  ///< polled between chunks
  /// The training images searched so far, of those to search (called on the calling thread).
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

struct TrainingNeighbour {
  std::string path;     ///< the photograph's full path
  double distance = 0;  ///< L2 distance to the sample at compare_size, images in [-1, 1]
};

struct NearestTrainingImages {
  std::string dataroot;                                 ///< the run's data folder
  int compare_size = 0;                                 ///< the side the images are compared at
  std::int64_t train_total = 0;                         ///< training images of the run's data set
  std::int64_t train_searched = 0;                      ///< of them, read and compared
  std::int64_t train_skipped = 0;                       ///< of the draw, unreadable
  std::vector<std::vector<TrainingNeighbour>> nearest;  ///< per sample, nearest first
};

class NearestTrainingImagesSearch {
public:
  /// The nearest training images of each of `samples` (RGB, all of one size), in the training set
  /// `config` names.
  static Result<NearestTrainingImages> find(const std::vector<RgbImage>& samples, const TrainConfig& config,
                                            const NearestTrainingImagesOptions& options);
};

}  // namespace streetgan
