// LibTorch's headers (through core/eval) come before every Qt header of this file: Qt's `slots`
// keyword macro would otherwise break ATen's IValue, which has a member of that name.
#include "core/eval/memorisation.h"
#include "core/eval/nearest_neighbour_search.h"
#include "core/eval/parzen_inputs.h"

#include "app/studio/nearest_images.h"

#include "app/studio/control/run_checkpoints.h"
#include "core/config/train_config.h"
#include "core/data/image_dataset.h"
#include "core/latent/latent_explorer.h"
#include "core/util/exception_message.h"
#include "widgets/rgb_image.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

namespace streetgan::studio {
namespace {

using Progress = std::function<void(std::int64_t, std::int64_t)>;

struct Candidate {
  double distance = 0;
  std::string path;
};


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

// Keeps the `k` nearest of `candidates`, nearest first (equal distances in path order).
void keepNearest(std::vector<Candidate>& candidates, int k) {
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.path < b.path;
  });
  if (candidates.size() > static_cast<std::size_t>(k)) candidates.resize(static_cast<std::size_t>(k));
}

void findInto(const NearestImagesRequest& request, const std::atomic<bool>& cancel, const Progress& progress,
              NearestImagesResult& result) {
  if (request.run_dir.isEmpty()) {
    result.error = "Choose a run first.";
    return;
  }
  if (request.count < 1 || request.neighbours < 1 || request.max_train < 1 || request.chunk < 1) {
    result.error = "Ask for at least one sample, one neighbour and one training image.";
    return;
  }
  const QString checkpoint = request.checkpoint.isEmpty() ? latestCheckpoint(request.run_dir) : request.checkpoint;
  if (checkpoint.isEmpty()) {
    result.error = "No checkpoint in " + runCheckpointsDir(request.run_dir) + ".";
    return;
  }
  result.checkpoint = QFileInfo(checkpoint).fileName();
  auto config = applyConfigFile(TrainConfig(), runConfigPath(request.run_dir).toStdString());
  if (!config) {
    result.error = QString::fromStdString(config.error());
    return;
  }
  auto dataset = ImageDataset::open(config->dataroot, config->data.filter, DatasetPart::Train);
  if (!dataset) {
    result.error = QString::fromStdString(dataset.error());
    return;
  }
  result.dataroot = QString::fromStdString(config->dataroot);
  result.train_total = static_cast<std::int64_t>(dataset->size());
  if (cancel.load()) {
    result.error = "cancelled";
    return;
  }

  auto explorer = LatentExplorer::open(checkpoint.toStdString(), "cpu");
  if (!explorer) {
    result.error = QString::fromStdString(explorer.error());
    return;
  }
  const int size = (*explorer)->imageSize();
  result.image_size = size;
  if ((*explorer)->channels() != 3) {
    result.error = QString("The nearest training images need an RGB model; this one makes %1 channels.").arg((*explorer)->channels());
    return;
  }
  std::vector<Latent> latents;
  for (int i = 0; i < request.count; ++i) latents.push_back((*explorer)->latentOfSeed(request.first_seed + static_cast<std::uint64_t>(i)));
  auto samples = (*explorer)->render(latents);
  if (!samples) {
    result.error = QString::fromStdString(samples.error());
    return;
  }
  for (const RgbImage& sample : *samples)
    if (sample.width != size || sample.height != size || sample.channels != 3 ||
        sample.pixels.size() != static_cast<std::size_t>(size) * static_cast<std::size_t>(size) * 3) {
      result.error = QString("The generator made a %1×%2 image, not %3×%3 RGB.").arg(sample.width).arg(sample.height).arg(size);
      return;
    }
  // Compared as the memorisation check compares them.
  const MemorisationOptions memorisation{};
  result.compare_size = memorisation.size;
  const torch::Tensor sample_rows = NearestNeighbourSearch::downsampledRows(imagesAsTensor(*samples, size), memorisation.size);

  const std::vector<std::string> paths =
      shuffledPaths(*dataset, request.draw_seed, 0, static_cast<std::size_t>(request.max_train));
  const std::int64_t total = static_cast<std::int64_t>(paths.size());
  const std::size_t chunk = static_cast<std::size_t>(request.chunk);
  std::vector<std::vector<Candidate>> nearest(static_cast<std::size_t>(request.count));
  std::string first_problem;
  if (progress) progress(0, total);
  for (std::size_t begin = 0; begin < paths.size(); begin += chunk) {
    if (cancel.load()) {
      result.error = "cancelled";
      return;
    }
    const std::size_t end = std::min(paths.size(), begin + chunk);
    const std::vector<std::string> part(paths.begin() + static_cast<std::ptrdiff_t>(begin),
                                        paths.begin() + static_cast<std::ptrdiff_t>(end));
    auto rows = loadImageRows(part, size, 3, config->augment.crop_scale);
    if (!rows) {  // not one of the chunk's images could be read
      result.train_skipped += static_cast<std::int64_t>(part.size());
      if (first_problem.empty()) first_problem = rows.error();
    } else {
      result.train_skipped += static_cast<std::int64_t>(rows->skipped.size());
      if (first_problem.empty() && !rows->skipped.empty()) first_problem = rows->skipped.front().reason;
      const std::int64_t n = rows->rows.size(0);
      const torch::Tensor reference =
          NearestNeighbourSearch::downsampledRows(rows->rows.view({n, 3, size, size}), memorisation.size);
      auto found = NearestNeighbourSearch::search(sample_rows, reference,
                                                  static_cast<int>(std::min<std::int64_t>(request.neighbours, n)));
      if (!found) {
        result.error = QString::fromStdString(found.error());
        return;
      }
      const auto distances = found->distances.accessor<double, 2>();
      const auto indices = found->indices.accessor<std::int64_t, 2>();
      for (std::size_t i = 0; i < nearest.size(); ++i) {
        const auto row = static_cast<std::int64_t>(i);
        for (std::int64_t j = 0; j < found->distances.size(1); ++j)
          nearest[i].push_back({distances[row][j], rows->paths[static_cast<std::size_t>(indices[row][j])]});
        keepNearest(nearest[i], request.neighbours);
      }
      result.train_searched += n;
    }
    if (progress) progress(static_cast<std::int64_t>(end), total);
  }
  if (result.train_searched == 0) {
    result.error = QString("Not one of the %1 training images could be read (the first: %2).")
                       .arg(static_cast<qlonglong>(total))
                       .arg(QString::fromStdString(first_problem));
    return;
  }

  // The photographs for display, read here rather than on the GUI thread.
  const QDir root(result.dataroot);
  for (std::size_t i = 0; i < nearest.size(); ++i) {
    if (cancel.load()) {
      result.error = "cancelled";
      return;
    }
    NearestImagesRow row;
    row.seed = request.first_seed + static_cast<std::uint64_t>(i);
    row.sample = widgets::toQImage((*samples)[i]);
    for (const Candidate& candidate : nearest[i]) {
      NearestTrainingImage image;
      image.path = QString::fromStdString(candidate.path);
      image.relative_path = root.relativeFilePath(image.path);
      image.distance = candidate.distance;
      image.image = widgets::readCenterSquare(image.path);
      row.nearest.push_back(image);
    }
    result.rows.push_back(row);
  }
}

}  // namespace

NearestImagesResult findNearestImages(const NearestImagesRequest& request, const std::atomic<bool>& cancel,
                                      const Progress& progress) {
  NearestImagesResult result;
  try {
    findInto(request, cancel, progress, result);
  } catch (...) {
    result.error = QString::fromStdString(exceptionMessage(std::current_exception()));
  }
  if (!result.error.isEmpty()) result.rows.clear();
  return result;
}

}  // namespace streetgan::studio
