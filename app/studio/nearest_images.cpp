#include "app/studio/nearest_images.h"

#include "app/studio/control/run_checkpoints.h"
#include "core/config/train_config.h"
#include "core/eval/nearest_training_images.h"
#include "core/latent/latent_explorer.h"
#include "core/util/exception_message.h"
#include "widgets/rgb_image.h"

#include <QDir>
#include <QFileInfo>

#include <exception>
#include <string>
#include <vector>

namespace streetgan::studio {
namespace {

using Progress = std::function<void(std::int64_t, std::int64_t)>;

// The checkpoint and the config of the request's run, or why not.
Status openRun(const NearestImagesRequest& request, QString& checkpoint, TrainConfig& config) {
  if (request.run_dir.isEmpty()) return failure("Choose a run first.", ErrorKind::Input);
  if (request.count < 1 || request.neighbours < 1 || request.max_train < 1 || request.chunk < 1)
    return failure("Ask for at least one sample, one neighbour and one training image.", ErrorKind::Input);
  checkpoint = request.checkpoint.isEmpty() ? latestCheckpoint(request.run_dir) : request.checkpoint;
  if (checkpoint.isEmpty())
    return failure("No checkpoint in " + runCheckpointsDir(request.run_dir) + ".", ErrorKind::Input);
  auto read = applyConfigFile(TrainConfig(), runConfigPath(request.run_dir).toStdString());
  if (!read) return makeError(read.error(), read.errorKind());
  config = *read;
  return {};
}

// The request's samples, rendered by the checkpoint's generator (eval mode, as Explore shows them).
Result<std::vector<RgbImage>> renderSamples(const NearestImagesRequest& request, const QString& checkpoint,
                                            NearestImagesResult& result) {
  auto explorer = LatentExplorer::open(checkpoint.toStdString(), "cpu");
  if (!explorer) return makeError(explorer.error());
  result.image_size = (*explorer)->imageSize();
  if ((*explorer)->channels() != 3)
    return makeError(QString("The nearest training images need an RGB model; this one makes %1 channels.")
                         .arg((*explorer)->channels())
                         .toStdString());
  std::vector<Latent> latents;
  for (int i = 0; i < request.count; ++i)
    latents.push_back((*explorer)->latentOfSeed(request.first_seed + static_cast<std::uint64_t>(i)));
  return (*explorer)->render(latents);
}

// The rows for display, the photographs read here rather than on the GUI thread.
Status fillRows(const NearestImagesRequest& request, const std::vector<RgbImage>& samples,
                const NearestTrainingImages& found, const std::atomic<bool>& cancel, NearestImagesResult& result) {
  const QDir root(result.dataroot);
  for (std::size_t i = 0; i < found.nearest.size(); ++i) {
    if (cancel.load()) return failure("cancelled", ErrorKind::Input);
    NearestImagesRow row;
    row.seed = request.first_seed + static_cast<std::uint64_t>(i);
    row.sample = widgets::toQImage(samples[i]);
    for (const TrainingNeighbour& neighbour : found.nearest[i]) {
      NearestTrainingImage image;
      image.path = QString::fromStdString(neighbour.path);
      image.relative_path = root.relativeFilePath(image.path);
      image.distance = neighbour.distance;
      image.image = widgets::readCenterSquare(image.path);
      row.nearest.push_back(image);
    }
    result.rows.push_back(row);
  }
  return {};
}

Status findInto(const NearestImagesRequest& request, const std::atomic<bool>& cancel, const Progress& progress,
                NearestImagesResult& result) {
  QString checkpoint;
  TrainConfig config;
  if (Status opened = openRun(request, checkpoint, config); !opened) return opened;
  result.checkpoint = QFileInfo(checkpoint).fileName();
  result.dataroot = QString::fromStdString(config.dataroot);
  if (cancel.load()) return failure("cancelled", ErrorKind::Input);
  auto samples = renderSamples(request, checkpoint, result);
  if (!samples) return makeError(samples.error(), samples.errorKind());
  NearestTrainingImagesOptions options;
  options.neighbours = request.neighbours;
  options.max_train = request.max_train;
  options.draw_seed = request.draw_seed;
  options.chunk = request.chunk;
  options.cancel = &cancel;
  options.progress = progress;
  auto found = NearestTrainingImagesSearch::find(*samples, config, options);
  if (!found) return makeError(found.error(), found.errorKind());
  result.compare_size = found->compare_size;
  result.train_total = found->train_total;
  result.train_searched = found->train_searched;
  result.train_skipped = found->train_skipped;
  return fillRows(request, *samples, *found, cancel, result);
}

}  // namespace

NearestImagesResult findNearestImages(const NearestImagesRequest& request, const std::atomic<bool>& cancel,
                                      const Progress& progress) {
  NearestImagesResult result;
  try {
    result.status = findInto(request, cancel, progress, result);
  } catch (...) {
    result.status = makeError(exceptionMessage(std::current_exception()), ErrorKind::Machine);
  }
  if (!result.status) result.rows.clear();
  return result;
}

}  // namespace streetgan::studio
