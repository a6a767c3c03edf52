#include "app/serve/gallery_renderer.h"

#include "core/data/image_grid.h"
#include "core/latent/latent_walk.h"
#include "core/latent/walk_exporter.h"
#include "core/train/network_options.h"
#include "core/runs/run_directory.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"
#include "core/util/exception_message.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

namespace streetgan::cli {
namespace {

namespace fs = std::filesystem;

// `path` made absolute, without throwing (the current folder may be gone).
std::string absolutePath(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return (ec ? fs::path(path) : absolute).lexically_normal().string();
}

GalleryModelInfo infoOf(const std::string& path, const CheckpointGenerator& loaded) {
  GalleryModelInfo info;
  info.checkpoint = absolutePath(path);
  info.step = loaded.progress.step;
  info.epoch = loaded.progress.epoch;
  info.img_size = loaded.config.img_size;
  info.nz = loaded.config.nz;
  info.preset = loaded.config.preset;
  info.generator = loaded.generatorName();
  const auto run = RunDirectory::ofCheckpoint(info.checkpoint);
  info.run = run ? run->name() : loaded.config.name;
  return info;
}

// The scratch folder for walks: a new folder whose name nobody can know in advance (mkdtemp makes
// it, mode 0700, and fails rather than take one that exists), in $TMPDIR or /tmp. Checked to be a
// real folder of this user and no one else's, not a link.
Result<std::string> makeScratchFolder() {
  const char* tmpdir = std::getenv("TMPDIR");
  const bool from_environment = tmpdir != nullptr && *tmpdir != '\0';
  const std::string base = from_environment ? tmpdir : "/tmp";
  const std::string where = from_environment ? base + " (TMPDIR)" : base;
  std::string name = (fs::path(base) / "streetgan-serve-XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr) {
    const int error = errno;
    return makeError("cannot make a scratch folder in " + where + ": " + std::generic_category().message(error));
  }
  struct stat info {};
  if (::lstat(name.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() ||
      (info.st_mode & 077) != 0) {
    ::rmdir(name.c_str());
    return makeError("the scratch folder " + name + " is not a private folder of this user; not using it");
  }
  return name;
}

// A worker's own generator: a copy of the weights and statistics `source` read, in eval mode.
// Made from memory, never from the file, which may be gone by now.
Generator copyOf(const CheckpointGenerator& source) {
  const TrainConfig& config = source.config;
  Generator copy(generatorOptionsFor(config));
  torch::NoGradGuard no_grad;
  auto parameters = copy->named_parameters();
  for (const auto& item : source.generator->named_parameters()) parameters[item.key()].copy_(item.value());
  auto buffers = copy->named_buffers();
  for (const auto& item : source.generator->named_buffers()) buffers[item.key()].copy_(item.value());
  copy->eval();
  return copy;
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

Result<GalleryResult> renderWalk(Generator& generator, const GalleryJob& job, int nz, const std::string& path,
                                 const std::atomic<bool>& cancelled) {
  VideoExportOptions video;
  auto format = parseExportFormat(job.format);
  if (!format) return makeError(format.error());
  video.format = *format;
  video.fps = 12;
  video.long_side = job.size;
  video.scale_filter = ScaleFilter::Nearest;
  video.preset = "veryfast";
  WalkRenderOptions render;
  auto exported = WalkExporter::exportWalk(generator, walkFor(job, nz), render, path, video,
                                           [&cancelled](const WalkExportProgress&) { return !cancelled.load(); });
  if (!exported) return makeError(exported.error());
  auto bytes = readAndRemove(path);
  if (!bytes) return makeError(bytes.error());
  const char* type = *format == ExportFormat::Gif ? "image/gif" : *format == ExportFormat::Mp4 ? "video/mp4" : "video/webm";
  return GalleryResult{std::move(*bytes), type, {}};
}

}  // namespace

struct GalleryRenderer::Worker {
  int index = 0;
  Generator generator{nullptr};
  std::uint64_t generation = ~std::uint64_t{0};
  GalleryModelInfo info;
  std::uint64_t walks = 0;
};

struct GalleryRenderer::Loaded {
  GalleryModelInfo info;
  CheckpointGenerator checkpoint;
};

GalleryRenderer::GalleryRenderer(Options options) : options_(std::move(options)) {}

GalleryRenderer::~GalleryRenderer() {
  stopThreads();
  for (auto& task : tasks_) task.promise.set_value(makeError("the server is stopping"));
  if (!scratch_.empty()) {
    std::error_code ec;
    fs::remove_all(scratch_, ec);  // links inside are removed, never followed
  }
}

void GalleryRenderer::stopThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  follow_wake_.notify_all();
  for (auto& thread : threads_)
    if (thread.joinable()) thread.join();
  threads_.clear();
  if (follower_.joinable()) follower_.join();
}

Result<std::string> GalleryRenderer::newestCheckpoint() const {
  if (options_.run_dir.empty()) return options_.checkpoint;
  const auto checkpoints = RunDirectory(options_.run_dir).checkpoints();
  if (checkpoints.empty()) return makeError(options_.run_dir + ": the run has no checkpoint yet");
  return checkpoints.back();
}

Status GalleryRenderer::open() {
  auto scratch = makeScratchFolder();
  if (!scratch) return makeError(scratch.error());
  scratch_ = *scratch;
  auto path = newestCheckpoint();
  if (!path) return makeError(path.error());
  auto loaded = std::make_shared<Loaded>();
  try {
    auto read = loadCheckpointGenerator(*path, torch::kCPU, options_.generator);
    if (!read) return makeError(read.error());
    loaded->info = infoOf(*path, *read);
    loaded->checkpoint = std::move(*read);
  } catch (...) {
    return makeError(*path + ": cannot read the checkpoint (" + exceptionMessage(std::current_exception()) + ")");
  }
  model_ = loaded->info;
  loaded_ = std::move(loaded);
  generation_ = 1;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  setComputeThreads(static_cast<int>(std::max(1u, cores / static_cast<unsigned>(options_.workers))));
  // std::thread throws std::system_error when the system refuses a thread (a limit on processes
  // or memory): the threads already started are stopped and joined, and it is said plainly.
  std::string refused;
  try {
    for (int i = 0; i < options_.workers; ++i) threads_.emplace_back([this, i] { work(i); });
    if (!options_.run_dir.empty()) follower_ = std::thread([this] { follow(); });
    return {};
  } catch (const std::system_error& e) {
    refused = e.code().message();
  } catch (const std::exception& e) {
    refused = firstLine(e.what());
  }
  const std::size_t started = threads_.size();
  stopThreads();
  return makeError("cannot start the render threads: the system refused one after " + std::to_string(started) + " (" +
                   refused + ")");
}

void GalleryRenderer::cancel() {
  std::deque<Task> queued;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_.store(true);
    queued.swap(tasks_);
  }
  for (auto& task : queued) task.promise.set_value(makeError("the server is stopping"));
}

std::optional<std::future<Result<GalleryResult>>> GalleryRenderer::submit(const GalleryJob& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || cancelled_.load() || static_cast<int>(tasks_.size()) >= options_.queue) return std::nullopt;
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

int GalleryRenderer::activeJobs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return active_;
}

void GalleryRenderer::work(int index) {
  Worker worker;
  worker.index = index;
  try {
    while (true) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (stopping_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        ++active_;
      }
      // serve() answers the task whatever happens; the count drops when it returns or throws.
      struct Done {
        GalleryRenderer* self;
        ~Done() {
          std::lock_guard<std::mutex> lock(self->mutex_);
          --self->active_;
        }
      } done{this};
      serve(worker, task);
    }
  } catch (...) {
    // serve() answers every failure of a job; this is the thread's last line of defence.
    std::fprintf(stderr, "streetgan serve: render thread %d stopped: %s\n", index,
                 exceptionMessage(std::current_exception()).c_str());
  }
}

void GalleryRenderer::serve(Worker& worker, Task& task) {
  Result<GalleryResult> result = makeError("");
  try {
    std::shared_ptr<const Loaded> wanted;
    std::uint64_t generation = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      wanted = loaded_;
      generation = generation_;
    }
    if (worker.generation != generation) {
      try {
        worker.generator = copyOf(wanted->checkpoint);
        worker.info = wanted->info;
      } catch (...) {
        if (!worker.generator) throw;
        // Keep serving the model this worker has, rather than fail every request.
        std::fprintf(stderr, "streetgan serve: render thread %d stays on %s: cannot copy %s (%s)\n", worker.index,
                     worker.info.checkpoint.c_str(), wanted->info.checkpoint.c_str(),
                     exceptionMessage(std::current_exception()).c_str());
      }
      worker.generation = generation;
    }
    const std::string path = (fs::path(scratch_) / ("walk-" + std::to_string(worker.index) + "-" +
                                                     std::to_string(++worker.walks) + "." + task.job.format))
                                 .string();
    result = task.job.kind == GalleryJob::Kind::Grid ? renderGrid(worker.generator, task.job, worker.info.nz)
                                                     : renderWalk(worker.generator, task.job, worker.info.nz, path, cancelled_);
    if (result) result->model = worker.info;
  } catch (...) {
    result = makeError(exceptionMessage(std::current_exception()));
  }
  task.promise.set_value(std::move(result));
}

void GalleryRenderer::follow() {
  std::string reported;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      follow_wake_.wait_for(lock, std::chrono::seconds(options_.follow_seconds), [this] { return stopping_; });
      if (stopping_) return;
    }
    try {
      followOnce(reported);
    } catch (...) {
      const std::string message = exceptionMessage(std::current_exception());
      if (message != reported)
        std::fprintf(stderr, "streetgan serve: following %s: %s\n", options_.run_dir.c_str(), message.c_str());
      reported = message;
    }
  }
}

void GalleryRenderer::followOnce(std::string& reported) {
  auto path = newestCheckpoint();
  if (!path) return;
  const std::string current = model().checkpoint;
  // Only a newer checkpoint (the names sort by step) is taken: when the one in use is removed,
  // the older ones left are no reason to go back, and the model in memory stays.
  if (fs::path(*path).filename().string() <= fs::path(current).filename().string()) return;
  std::string failure;
  try {
    auto read = loadCheckpointGenerator(*path, torch::kCPU, options_.generator);
    if (read) {
      auto loaded = std::make_shared<Loaded>();
      loaded->info = infoOf(*path, *read);
      loaded->checkpoint = std::move(*read);
      std::fprintf(stderr, "streetgan serve: now serving %s (step %lld)\n", loaded->info.checkpoint.c_str(),
                   static_cast<long long>(loaded->info.step));
      std::lock_guard<std::mutex> lock(mutex_);
      model_ = loaded->info;
      loaded_ = std::move(loaded);
      ++generation_;
      reported.clear();
      return;
    }
    failure = read.error();
  } catch (...) {
    // LibTorch throws more than c10::Error (std::out_of_range for a bad version record).
    failure = *path + ": cannot read the checkpoint (" + exceptionMessage(std::current_exception()) + ")";
  }
  if (failure != reported) std::fprintf(stderr, "streetgan serve: %s; still serving %s\n", failure.c_str(), current.c_str());
  reported = failure;
}

}  // namespace streetgan::cli
