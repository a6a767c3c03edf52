#pragma once
// BatchLoader: turns an ImageFolderDataset into training batches. The order of an epoch is a
// shuffle seeded by (seed, epoch) and the augmentation of each image is seeded by (seed, epoch,
// index), so a batch depends only on those numbers: never on thread timing, and the same after a
// resume. Images of a batch decode in parallel on LibTorch's thread pool. A file that cannot be
// decoded is left out of its batch and named in Batch::skipped.
#include "image_folder_dataset.h"
#include "sample_pipeline.h"

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

struct SkippedFile {
  std::string path;
  std::string reason;  ///< one line naming the file and what is wrong with it
};

struct Batch {
  torch::Tensor images;               ///< (n, nc, S, S) float in [-1, 1]; n may be 0
  std::vector<SkippedFile> skipped;   ///< every file of the batch that could not be used
};

class BatchLoader {
public:
  BatchLoader(ImageFolderDataset dataset, SamplePipeline pipeline, int batch_size,
              std::uint64_t seed);

  std::int64_t batchesPerEpoch() const;
  std::int64_t datasetSize() const { return static_cast<std::int64_t>(dataset_.size()); }
  const ImageFolderDataset& dataset() const { return dataset_; }

  /// The dataset indices of `epoch`, in the order they are served.
  std::vector<std::int64_t> epochOrder(std::int64_t epoch) const;
  /// Batch `batch_index` of `epoch` (the last batch of an epoch may be smaller). Not for use
  /// from several threads at once (it caches the epoch order).
  Batch load(std::int64_t epoch, std::int64_t batch_index) const;

private:
  ImageFolderDataset dataset_;
  SamplePipeline pipeline_;
  int batch_size_;
  std::uint64_t seed_;
  // The shuffle of the epoch being served, so it is computed once per epoch, not per batch.
  mutable std::int64_t order_epoch_ = -1;
  mutable std::vector<std::int64_t> order_;
};

}  // namespace streetgan
