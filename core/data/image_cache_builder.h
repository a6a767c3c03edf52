#pragma once
// ImageCacheBuilder: writes an ImageCache file from a data set, decoding every image as the
// pipeline would (same channels, same DCT reduction) on worker threads, in dataset order. The
// file is written under a temporary name and renamed into place only when complete (header
// signature written last), so an interrupted or cancelled build leaves nothing that looks like a
// cache. Images that cannot be decoded are left out and listed; failures are an Error naming the
// file.
#include "core/data/image_dataset.h"
#include "core/data/sample_pipeline.h"
#include "core/util/result.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace streetgan {

struct CacheBuildOptions {
  int workers = 0;                                  ///< decoding threads; 0 = one per core
  std::function<void(std::int64_t done, std::int64_t total)> progress;  ///< after each chunk
  const std::atomic<bool>* cancel = nullptr;        ///< polled between chunks
};

struct CacheBuildSummary {
  std::int64_t records = 0;
  std::uint64_t bytes = 0;
  std::vector<SkippedFile> skipped;
};

class ImageCacheBuilder {
public:
  static Result<CacheBuildSummary> build(const ImageDataset& dataset, const SamplePipeline& pipeline,
                                         const std::string& out_path, const CacheBuildOptions& options = {});
};

/// Threads to use for `requested` workers (0 = one per core).
int resolveWorkerCount(int requested);

}  // namespace streetgan
