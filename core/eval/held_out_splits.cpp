#include "core/eval/held_out_splits.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace streetgan {

namespace {

struct SplitPaths {
  std::vector<std::string> valid, test;
};

// "Parzen " before the split names, or nothing.
std::string leadOf(const HeldOutSplitsRequest& request) {
  return request.purpose.empty() ? std::string() : request.purpose + " ";
}

Result<std::vector<std::string>> imagesIn(const std::string& folder, const std::string& name) {
  auto dataset = ImageDataset::open(folder);
  if (!dataset) return makeError(name + ": " + dataset.error());
  std::vector<std::string> paths;
  for (const auto& entry : dataset->entries()) paths.push_back(entry.path);
  return paths;
}

Result<SplitPaths> folderPaths(const HeldOutSplitsRequest& request) {
  auto valid = imagesIn(request.valid_folder, request.valid_folder_name);
  if (!valid) return makeError(valid.error());
  auto test = imagesIn(request.test_folder, request.test_folder_name);
  if (!test) return makeError(test.error());
  return SplitPaths{std::move(*valid), std::move(*test)};
}

// Validation and test come from one seeded shuffle of the held-out images and never overlap.
Result<SplitPaths> drawnPaths(const HeldOutSplitsRequest& request) {
  if (!request.filter.hasHoldout())
    return makeError(request.dataroot + ": no held-out split (the data filters name no held-out "
                     "cities and no held-out fraction)");
  auto held = ImageDataset::open(request.dataroot, request.filter, DatasetPart::Holdout);
  if (!held)
    return makeError((request.purpose.empty() ? std::string() : request.purpose + " held-out split: ") + held.error());
  if (held->size() < 2)
    return makeError(request.dataroot + ": the held-out split has " + std::to_string(held->size()) + " image(s); " +
                     (request.purpose.empty() ? std::string("it") : request.purpose + " evaluation") +
                     " needs at least 2 (validation and test)");
  const std::size_t valid_count = std::min(request.n_valid, held->size() / 2);
  return SplitPaths{shuffledPaths(*held, request.seed, 0, valid_count),
                    shuffledPaths(*held, request.seed, valid_count, request.n_test)};
}

Result<ImageRows> rowsOfSplit(const std::vector<std::string>& paths, const HeldOutSplitsRequest& request,
                         const std::string& split) {
  auto rows = loadImageRows(paths, request.img_size, request.channels, request.crop_scale);
  if (!rows) return makeError(split + ": " + rows.error());
  if (request.on_skipped)
    for (const auto& skipped : rows->skipped) request.on_skipped(skipped);
  return rows;
}

}  // namespace

HeldOutSplitsRequest HeldOutSplitsRequest::forModel(const TrainConfig& model) {
  HeldOutSplitsRequest request;
  request.dataroot = model.dataroot;
  request.filter = model.data.filter;
  request.seed = static_cast<std::uint64_t>(model.seed);
  request.n_valid = static_cast<std::size_t>(model.parzen.n_valid);
  request.n_test = static_cast<std::size_t>(model.parzen.n_test);
  request.img_size = model.img_size;
  request.channels = model.nc;
  request.crop_scale = model.augment.crop_scale;
  return request;
}

Result<HeldOutSplits> HeldOutSplits::load(const HeldOutSplitsRequest& request) {
  auto paths = request.from_folders ? folderPaths(request) : drawnPaths(request);
  if (!paths) return makeError(paths.error());
  const std::string lead = leadOf(request);
  auto valid = rowsOfSplit(paths->valid, request, lead + "validation split");
  if (!valid) return makeError(valid.error());
  auto test = rowsOfSplit(paths->test, request, lead + "test split");
  if (!test) return makeError(test.error());
  return HeldOutSplits{std::move(*valid), std::move(*test)};
}

}  // namespace streetgan
