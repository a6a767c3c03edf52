#include "image_folder_dataset.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace streetgan {

namespace fs = std::filesystem;

bool ImageFolderDataset::isImageFile(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".webp" || ext == ".bmp";
}

Result<ImageFolderDataset> ImageFolderDataset::open(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return makeError(root + ": the data folder does not exist or is not a folder");
  ImageFolderDataset dataset;
  dataset.root_ = root;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return makeError(root + ": cannot read the data folder (" + ec.message() + ")");
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return makeError(root + ": cannot read the data folder (" + ec.message() + ")");
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && isImageFile(it->path().string()))
      dataset.paths_.push_back(it->path().string());
  }
  if (dataset.paths_.empty())
    return makeError(root + ": no images found (looked for .jpg, .jpeg, .png, .webp, .bmp in every subfolder)");
  std::sort(dataset.paths_.begin(), dataset.paths_.end());
  return dataset;
}

}  // namespace streetgan
