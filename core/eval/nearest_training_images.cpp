#include "core/eval/nearest_training_images.h"

#include "core/data/image_dataset.h"
#include "core/eval/memorisation.h"
#include "core/eval/nearest_neighbour_search.h"
#include "core/eval/parzen_inputs.h"
#include "core/util/exception_message.h"

#include <torch/torch.h>

#include <algorithm>
#include <exception>

namespace streetgan {
namespace {

bool cancelled(const NearestTrainingImagesOptions& options) { return options.cancel && options.cancel->load(); }

// 8-bit interleaved RGB images of `size` px as (n, 3, size, size) float32 in [-1, 1], the
// pixel/127.5 − 1 of the training rows.
torch::Tensor imagesAsTensor(const std::vector<RgbImage>& images, int size) {
  const std::int64_t plane = static_cast<std::int64_t>(size) * size;
  torch::Tensor out = torch::empty({static_cast<std::int64_t>(images.size()), 3, size, size}, torch::kFloat32);
  float* data = out.data_ptr<float>();
  for (std::size_t i = 0; i < images.size(); ++i) {
    const std::uint8_t* pixels = images[i].pixels.data();
    float* image = data + static_cast<std::int64_t>(i) * 3 * plane;
    for (std::int64_t p = 0; p < plane; ++p)
      for (int c = 0; c < 3; ++c) image[c * plane + p] = static_cast<float>(pixels[p * 3 + c]) / 127.5f - 1.0f;
  }
  return out;
}

// Keeps the `k` nearest, nearest first (equal distances in path order).
void keepNearest(std::vector<TrainingNeighbour>& candidates, int k) {
  std::sort(candidates.begin(), candidates.end(), [](const TrainingNeighbour& a, const TrainingNeighbour& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.path < b.path;
  });
  if (candidates.size() > static_cast<std::size_t>(k)) candidates.resize(static_cast<std::size_t>(k));
}

Status checkSamples(const std::vector<RgbImage>& samples, const NearestTrainingImagesOptions& options) {
  if (samples.empty() || options.neighbours < 1 || options.max_train < 1 || options.chunk < 1)
    return makeError("at least one sample, one neighbour and one training image are needed");
  const int size = samples.front().width;
  for (const RgbImage& sample : samples)
    if (sample.width != size || sample.height != size || sample.channels != 3 ||
        sample.pixels.size() != static_cast<std::size_t>(size) * static_cast<std::size_t>(size) * 3)
      return makeError("the generator made a " + std::to_string(sample.width) + "×" + std::to_string(sample.height) +
                       " image, not " + std::to_string(size) + "×" + std::to_string(size) + " RGB");
  return {};
}

// One chunk of training images searched: each sample's candidates gain the chunk's nearest.
struct ChunkSearch {
  const torch::Tensor& sample_rows;
  int size, neighbours, compare_size;
  double crop_scale;
  NearestTrainingImages& found;
  std::string& first_problem;

  Status operator()(const std::vector<std::string>& part) {
    auto rows = loadImageRows(part, size, 3, crop_scale);
    if (!rows) {  // not one of the chunk's images could be read
      found.train_skipped += static_cast<std::int64_t>(part.size());
      if (first_problem.empty()) first_problem = rows.error();
      return {};
    }
    found.train_skipped += static_cast<std::int64_t>(rows->skipped.size());
    if (first_problem.empty() && !rows->skipped.empty()) first_problem = rows->skipped.front().reason;
    const std::int64_t n = rows->rows.size(0);
    const torch::Tensor reference =
        NearestNeighbourSearch::downsampledRows(rows->rows.view({n, 3, size, size}), compare_size);
    auto nearest =
        NearestNeighbourSearch::search(sample_rows, reference, static_cast<int>(std::min<std::int64_t>(neighbours, n)));
    if (!nearest) return makeError(nearest.error());
    const auto distances = nearest->distances.accessor<double, 2>();
    const auto indices = nearest->indices.accessor<std::int64_t, 2>();
    for (std::size_t i = 0; i < found.nearest.size(); ++i) {
      const auto row = static_cast<std::int64_t>(i);
      for (std::int64_t j = 0; j < nearest->distances.size(1); ++j)
        found.nearest[i].push_back({rows->paths[static_cast<std::size_t>(indices[row][j])], distances[row][j]});
      keepNearest(found.nearest[i], neighbours);
    }
    found.train_searched += n;
    return {};
  }
};

Result<NearestTrainingImages> findHere(const std::vector<RgbImage>& samples, const TrainConfig& config,
                                       const NearestTrainingImagesOptions& options) {
  if (Status checked = checkSamples(samples, options); !checked) return makeError(checked.error());
  auto dataset = ImageDataset::open(config.dataroot, config.data.filter, DatasetPart::Train);
  if (!dataset) return makeError(dataset.error());
  NearestTrainingImages found;
  found.dataroot = config.dataroot;
  found.train_total = static_cast<std::int64_t>(dataset->size());
  found.compare_size = MemorisationOptions{}.size;  // compared as the memorisation check compares them
  found.nearest.resize(samples.size());
  const int size = samples.front().width;
  const torch::Tensor sample_rows =
      NearestNeighbourSearch::downsampledRows(imagesAsTensor(samples, size), found.compare_size);
  const std::vector<std::string> paths =
      shuffledPaths(*dataset, options.draw_seed, 0, static_cast<std::size_t>(options.max_train));
  const auto total = static_cast<std::int64_t>(paths.size());
  std::string first_problem;
  ChunkSearch search{sample_rows, size,         options.neighbours, found.compare_size, config.augment.crop_scale,
                     found,       first_problem};
  if (options.progress) options.progress(0, total);
  const auto chunk = static_cast<std::size_t>(options.chunk);
  for (std::size_t begin = 0; begin < paths.size(); begin += chunk) {
    if (cancelled(options)) return makeError("cancelled");
    const std::size_t end = std::min(paths.size(), begin + chunk);
    if (Status searched = search(
            {paths.begin() + static_cast<std::ptrdiff_t>(begin), paths.begin() + static_cast<std::ptrdiff_t>(end)});
        !searched)
      return makeError(searched.error());
    if (options.progress) options.progress(static_cast<std::int64_t>(end), total);
  }
  // One chunk that could not be read at all says so itself, naming its first file.
  if (found.train_searched == 0)
    return makeError(paths.size() <= chunk
                         ? first_problem
                         : "not one of the " + std::to_string(total) +
                               " training images could be read (the first problem: " + first_problem + ")");
  return found;
}

}  // namespace

Result<NearestTrainingImages> NearestTrainingImagesSearch::find(const std::vector<RgbImage>& samples,
                                                                const TrainConfig& config,
                                                                const NearestTrainingImagesOptions& options) {
  try {
    return findHere(samples, config, options);
  } catch (...) {
    return makeError(exceptionMessage(std::current_exception()));
  }
}

}  // namespace streetgan
