#include "app/cli/gallery_renderer.h"

#include "core/data/image_grid.h"
#include "core/latent/latent_walk.h"
#include "core/latent/walk_exporter.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/util/exception_message.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace streetgan::cli {
namespace {

namespace fs = std::filesystem;

GalleryModelInfo infoOf(const std::string& path, const CheckpointGenerator& loaded) {
  GalleryModelInfo info;
  info.checkpoint = fs::absolute(path).lexically_normal().string();
  info.step = loaded.progress.step;
  info.epoch = loaded.progress.epoch;
  info.img_size = loaded.config.img_size;
  info.nz = loaded.config.nz;
  info.preset = loaded.config.preset;
  const fs::path folder = fs::path(info.checkpoint).parent_path();
  info.run = folder.filename() == "checkpoints" ? folder.parent_path().filename().string() : loaded.config.name;
  return info;
}

// Each image of `images` (B, C, H, W) scaled to size×size, nearest neighbour: tiny DCGAN images
// are shown as their pixels, not blurred.
torch::Tensor scaled(const torch::Tensor& images, int size) {
  if (images.size(2) == size && images.size(3) == size) return images;
  namespace F = torch::nn::functional;
  return F::interpolate(images, F::InterpolateFuncOptions().size(std::vector<std::int64_t>{size, size}).mode(torch::kNearest));
}

Result<GalleryResult> renderGrid(Generator& generator, const GalleryJob& job, int nz) {
  // The latents of `streetgan sample --seed S --n N`: the same seed gives the same grid.
  auto rng = at::make_generator<at::CPUGeneratorImpl>(job.seed);
  const torch::Tensor noise = torch::randn({job.count, nz, 1, 1}, rng, torch::kFloat32);
  torch::NoGradGuard no_grad;
  const torch::Tensor images = scaled(generator->forward(noise), job.size);
  auto png = encodePng(makeImageGrid(images));
  if (!png) return makeError(png.error());
  return GalleryResult{std::move(*png), "image/png", {}};
}

// A walk of `frames` frames through the latents of seeds S, S+1, …: a closed loop when the
// frames divide among 4, 3 or 2 keyframes, else an open walk between two.
LatentWalk walkFor(const GalleryJob& job, int nz) {
  int keys = 0;
  for (int k : {4, 3, 2})
    if (job.count % k == 0 && job.count / k >= 1) {
      keys = k;
      break;
    }
  std::vector<std::uint64_t> seeds;
  for (int k = 0; k < std::max(keys, 2); ++k) seeds.push_back(job.seed + static_cast<std::uint64_t>(k));
  LatentWalk walk = LatentWalk::fromSeeds(seeds, nz);
  walk.loop = keys != 0;
  walk.frames_per_key = keys != 0 ? job.count / keys : job.count - 1;
  return walk;
}

Result<std::string> readAndRemove(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::error_code ec;
  fs::remove(path, ec);
  if (!in) return makeError(path + ": cannot read the rendered file back");
  return bytes.str();
}

Result<GalleryResult> renderWalk(Generator& generator, const GalleryJob& job, int nz, const std::string& path) {
  VideoExportOptions video;
  auto format = parseExportFormat(job.format);
  if (!format) return makeError(format.error());
  video.format = *format;
  video.fps = 12;
  video.long_side = job.size;
  video.scale_filter = ScaleFilter::Nearest;
  video.preset = "veryfast";
  WalkRenderOptions render;
  auto exported = WalkExporter::exportWalk(generator, walkFor(job, nz), render, path, video);
  if (!exported) return makeError(exported.error());
  auto bytes = readAndRemove(path);
  if (!bytes) return makeError(bytes.error());
  const char* type = *format == ExportFormat::Gif ? "image/gif" : *format == ExportFormat::Mp4 ? "video/mp4" : "video/webm";
  return GalleryResult{std::move(*bytes), type, {}};
}

}  // namespace

struct GalleryRenderer::Worker {
  Generator generator{nullptr};
  std::uint64_t generation = ~std::uint64_t{0};
  GalleryModelInfo info;
};

GalleryRenderer::GalleryRenderer(Options options) : options_(std::move(options)) {}

GalleryRenderer::~GalleryRenderer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  follow_wake_.notify_all();
  for (auto& thread : threads_) thread.join();
  if (follower_.joinable()) follower_.join();
  for (auto& task : tasks_) task.promise.set_value(makeError("the server is stopping"));
}

Result<std::string> GalleryRenderer::newestCheckpoint() const {
  if (options_.run_dir.empty()) return options_.checkpoint;
  const auto checkpoints = RunDirectory(options_.run_dir).checkpoints();
  if (checkpoints.empty()) return makeError(options_.run_dir + ": the run has no checkpoint yet");
  return checkpoints.back();
}

Status GalleryRenderer::open() {
  auto path = newestCheckpoint();
  if (!path) return makeError(path.error());
  try {
    auto loaded = loadCheckpointGenerator(*path, torch::kCPU);
    if (!loaded) return makeError(loaded.error());
    model_ = infoOf(*path, *loaded);
  } catch (const c10::Error& e) {
    return makeError(*path + ": " + firstLine(e.what_without_backtrace()));
  }
  generation_ = 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  setComputeThreads(static_cast<int>(std::max(1u, cores / static_cast<unsigned>(options_.workers))));
  for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this, i] { work(i); });
  if (!options_.run_dir.empty()) follower_ = std::thread([this] { follow(); });
  return {};
}

std::optional<std::future<Result<GalleryResult>>> GalleryRenderer::submit(const GalleryJob& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || static_cast<int>(tasks_.size()) >= options_.queue) return std::nullopt;
  tasks_.push_back(Task{job, {}});
  auto future = tasks_.back().promise.get_future();
  wake_.notify_one();
  return future;
}

GalleryModelInfo GalleryRenderer::model() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return model_;
}

int GalleryRenderer::pendingJobs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(tasks_.size());
}

void GalleryRenderer::work(int index) {
  Worker worker;
  const fs::path scratch = fs::temp_directory_path() / ("streetgan-serve-" + std::to_string(::getpid()) + "-" + std::to_string(index));
  std::error_code ec;
  fs::create_directories(scratch, ec);
  std::uint64_t counter = 0;
  while (true) {
    Task task;
    GalleryModelInfo wanted;
    std::uint64_t generation = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (stopping_) break;
      task = std::move(tasks_.front());
      tasks_.pop_front();
      wanted = model_;
      generation = generation_;
    }
    Result<GalleryResult> result = makeError("");
    try {
      if (worker.generation != generation) {
        auto loaded = loadCheckpointGenerator(wanted.checkpoint, torch::kCPU);
        if (!loaded) throw std::runtime_error(loaded.error());
        worker.generator = loaded->generator;
        worker.generator->eval();
        worker.generation = generation;
        worker.info = wanted;
      }
      const std::string path = (scratch / ("walk-" + std::to_string(++counter) + "." + task.job.format)).string();
      result = task.job.kind == GalleryJob::Kind::Grid ? renderGrid(worker.generator, task.job, worker.info.nz)
                                                       : renderWalk(worker.generator, task.job, worker.info.nz, path);
      if (result) result->model = worker.info;
    } catch (...) {
      result = makeError(exceptionMessage(std::current_exception()));
    }
    task.promise.set_value(std::move(result));
  }
  fs::remove_all(scratch, ec);
}

void GalleryRenderer::follow() {
  std::string reported;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      follow_wake_.wait_for(lock, std::chrono::seconds(options_.follow_seconds), [this] { return stopping_; });
      if (stopping_) return;
    }
    auto path = newestCheckpoint();
    if (!path || fs::absolute(*path).lexically_normal().string() == model().checkpoint) continue;
    try {
      auto loaded = loadCheckpointGenerator(*path, torch::kCPU);
      if (!loaded) {
        if (reported != loaded.error()) std::fprintf(stderr, "streetgan serve: %s; still serving %s\n", loaded.error().c_str(), model().checkpoint.c_str());
        reported = loaded.error();
        continue;
      }
      GalleryModelInfo info = infoOf(*path, *loaded);
      std::fprintf(stderr, "streetgan serve: now serving %s (step %lld)\n", info.checkpoint.c_str(), static_cast<long long>(info.step));
      std::lock_guard<std::mutex> lock(mutex_);
      model_ = std::move(info);
      ++generation_;
    } catch (const c10::Error& e) {
      std::fprintf(stderr, "streetgan serve: %s: %s\n", path->c_str(), firstLine(e.what_without_backtrace()).c_str());
    }
  }
}

}  // namespace streetgan::cli
