#include "core/data/crop_fit.h"

#include "core/data/image_header.h"
#include "core/util/regular_file.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace streetgan {
namespace {

// Headers sit in the first bytes; a JPEG's size marker follows its EXIF block, at most 64 KiB.
constexpr std::size_t kHeaderBytes = 128 * 1024;

std::int64_t shorterSide(const std::string& path) {
  auto file = RegularFile::open(path);
  if (!file) return -1;
  std::vector<std::uint8_t> bytes(kHeaderBytes);
  const ssize_t n = ::pread(file->descriptor(), bytes.data(), bytes.size(), 0);
  if (n <= 0) return -1;
  auto header = parseImageHeader(bytes.data(), static_cast<std::size_t>(n));
  if (!header || header->width <= 0 || header->height <= 0) return -1;
  return std::min(header->width, header->height);
}

}  // namespace

CropFit measureCropFit(const ImageDataset& dataset, double crop_scale, int img_size, std::size_t sample) {
  CropFit fit;
  fit.crop_side = std::llround(crop_scale * img_size);
  const std::size_t total = dataset.size();
  const std::size_t looked = std::min(total, sample);
  std::vector<std::int64_t> sides;
  for (std::size_t i = 0; i < looked; ++i) {
    const std::int64_t side = shorterSide(dataset.entries()[i * total / looked].path);
    if (side < 0) {
      ++fit.unreadable;
      continue;
    }
    sides.push_back(side);
    if (side < fit.crop_side) ++fit.smaller;
  }
  fit.looked_at = static_cast<std::int64_t>(sides.size());
  if (!sides.empty()) {
    std::nth_element(sides.begin(), sides.begin() + sides.size() / 2, sides.end());
    fit.median_side = sides[sides.size() / 2];
  }
  return fit;
}

std::string cropFitWarning(const CropFit& fit, double crop_scale, int img_size) {
  if (fit.looked_at == 0 || fit.smaller * 2 <= fit.looked_at) return {};
  std::ostringstream out;
  const double fits = static_cast<double>(fit.median_side) / img_size;
  out << fit.smaller << " of " << fit.looked_at << " images looked at are smaller than the training crop of "
      << fit.crop_side << "x" << fit.crop_side << " pixels (augment.crop_scale " << crop_scale << " x img_size "
      << img_size << "; their shorter side is " << fit.median_side << " pixels at the median): each is padded "
      << "with black around a smaller subject. Set augment.crop_scale to at most "
      << std::floor(fits * 100) / 100 << " for these images";
  if (fit.unreadable > 0)
    out << " (not counted: " << fit.unreadable << " more " << (fit.unreadable == 1 ? "image" : "images")
        << " with no size in the first " << kHeaderBytes / 1024 << " KiB)";
  return out.str();
}

}  // namespace streetgan
