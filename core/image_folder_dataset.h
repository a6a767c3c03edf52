#pragma once
// ImageFolderDataset: every image file (jpg, jpeg, png, webp, bmp; any letter case) under a
// folder, found recursively and sorted by path so the index of a file never depends on the order
// the file system lists it. Only lists files: decoding happens in SamplePipeline, so an unreadable
// file is found (and skipped with a warning) when it is loaded.
#include "result.h"

#include <string>
#include <vector>

namespace streetgan {

class ImageFolderDataset {
public:
  /// Lists the images under `root`. Fails when `root` is not a readable folder or holds no image.
  static Result<ImageFolderDataset> open(const std::string& root);

  const std::string& root() const { return root_; }
  size_t size() const { return paths_.size(); }
  const std::string& path(size_t index) const { return paths_[index]; }
  const std::vector<std::string>& paths() const { return paths_; }

  static bool isImageFile(const std::string& path);

private:
  std::string root_;
  std::vector<std::string> paths_;
};

}  // namespace streetgan
