#include "core/latent/latent_explorer.h"

#include "core/data/image_grid.h"
#include "core/latent/batch_statistics_scope.h"
#include "core/latent/folded_generator.h"
#include "core/latent/latent_projector.h"
#include "core/data/sample_pipeline.h"
#include "core/latent/latent_walk.h"
#include "core/latent/semantic_directions.h"
#include "core/latent/walk_exporter.h"
#include "core/train/checkpoint.h"
#include "core/train/compute_device.h"

#include <torch/torch.h>

#include <mutex>

namespace streetgan {

struct LatentExplorer::State {
  std::string path;
  CheckpointGenerator loaded;
  c10::Device device = c10::kCPU;
  bool batch_statistics = false;  // guarded by mutex
  mutable std::mutex mutex;       // one generator call at a time
  std::optional<FoldedGenerator> folded;  // made at the first eval-mode render (under mutex)

  // G on latents (B, nz, 1, 1), under the mutex: in eval mode through the BatchNorm-folded copy
  // (the same function, faster at these batches), else G itself with the batch's statistics.
  torch::Tensor generate(const torch::Tensor& latents) {
    if (!batch_statistics) {
      if (!folded) folded.emplace(*loaded.generator);
      if (folded->usable()) return folded->forward(latents);
    }
    return loaded.generator->forward(latents);
  }
};

namespace {

torch::Tensor toTensor(const Latent& latent) {
  return torch::from_blob(const_cast<float*>(latent.data()), {static_cast<std::int64_t>(latent.size())}, torch::kFloat32).clone();
}

Latent toLatent(const torch::Tensor& tensor) {
  const torch::Tensor flat = tensor.to(torch::kCPU, torch::kFloat32).contiguous().view(-1);
  return Latent(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
}

Result<LatentWalk> toWalk(const WalkPlan& plan) {
  LatentWalk walk;
  for (std::size_t i = 0; i < plan.keys.size(); ++i) {
    WalkKeyframe key;
    key.latent = toTensor(plan.keys[i]);
    if (i < plan.seeds.size()) key.seed = plan.seeds[i];
    walk.keyframes.push_back(std::move(key));
  }
  walk.frames_per_key = plan.frames_per_key;
  walk.loop = plan.loop;
  auto mode = parseInterpolation(plan.mode);
  if (!mode) return makeError(mode.error());
  auto easing = parseEasing(plan.easing);
  if (!easing) return makeError(easing.error());
  walk.mode = *mode;
  walk.easing = *easing;
  return walk;
}

}  // namespace

LatentExplorer::LatentExplorer() : state_(std::make_unique<State>()) {}
LatentExplorer::~LatentExplorer() = default;

Result<std::shared_ptr<LatentExplorer>> LatentExplorer::open(const std::string& checkpoint, const std::string& device,
                                                             GeneratorChoice generator) {
  auto resolved = resolveDevice(device);
  if (!resolved) return makeError(resolved.error());
  auto loaded = loadCheckpointGenerator(checkpoint, *resolved, generator);
  if (!loaded) return makeError(loaded.error());
  std::shared_ptr<LatentExplorer> explorer(new LatentExplorer());
  explorer->state_->path = checkpoint;
  explorer->state_->device = *resolved;
  explorer->state_->loaded = std::move(*loaded);
  explorer->state_->loaded.generator->eval();
  return explorer;
}

const std::string& LatentExplorer::checkpointPath() const { return state_->path; }
const char* LatentExplorer::generatorName() const { return state_->loaded.generatorName(); }
bool LatentExplorer::rendersAverage() const { return state_->loaded.average; }
int LatentExplorer::nz() const { return static_cast<int>(state_->loaded.config.nz); }
int LatentExplorer::imageSize() const { return static_cast<int>(state_->loaded.config.img_size); }
int LatentExplorer::channels() const { return static_cast<int>(state_->loaded.config.nc); }
std::int64_t LatentExplorer::step() const { return state_->loaded.progress.step; }
std::int64_t LatentExplorer::epoch() const { return state_->loaded.progress.epoch; }

Latent LatentExplorer::latentOfSeed(std::uint64_t seed) const { return toLatent(latentFromSeed(seed, nz())); }

Latent LatentExplorer::neighbour(const Latent& center, double spread, std::uint64_t seed) const {
  const torch::Tensor noise = latentFromSeed(seed, static_cast<int>(center.size()));
  return toLatent(toTensor(center) + spread * noise);
}

Result<Latent> LatentExplorer::arithmetic(const std::vector<Latent>& a, const std::vector<Latent>& b,
                                          const std::vector<Latent>& c) const {
  auto tensors = [](const std::vector<Latent>& group) {
    std::vector<torch::Tensor> out;
    for (const Latent& latent : group) out.push_back(toTensor(latent));
    return out;
  };
  auto result = latentArithmetic(tensors(a), tensors(b), tensors(c));
  if (!result) return makeError(result.error());
  return toLatent(*result);
}

Result<std::vector<RgbImage>> LatentExplorer::render(const std::vector<Latent>& latents) const {
  std::vector<RgbImage> images;
  if (latents.empty()) return images;
  std::vector<torch::Tensor> rows;
  for (const Latent& latent : latents) {
    if (static_cast<int>(latent.size()) != nz())
      return makeError("a latent has " + std::to_string(latent.size()) + " values but this generator takes " + std::to_string(nz()));
    rows.push_back(toTensor(latent).view({1, -1, 1, 1}));
  }
  std::lock_guard lock(state_->mutex);
  try {
    torch::NoGradGuard no_grad;
    BatchStatisticsScope scope(*state_->loaded.generator, state_->batch_statistics);
    const torch::Tensor out = state_->generate(torch::cat(rows).to(state_->device)).to(torch::kCPU);
    for (std::int64_t i = 0; i < out.size(0); ++i) images.push_back(toRgbImage(makeImageGrid(out.narrow(0, i, 1), 1, 0)));
  } catch (const c10::Error& e) {
    return makeError(std::string("sampling failed: ") + e.what_without_backtrace());
  }
  return images;
}

void LatentExplorer::setBatchStatistics(bool on) {
  std::lock_guard lock(state_->mutex);
  state_->batch_statistics = on;
}

bool LatentExplorer::batchStatistics() const {
  std::lock_guard lock(state_->mutex);
  return state_->batch_statistics;
}

Status LatentExplorer::validate(const WalkPlan& plan) const {
  if (plan.rows < 1 || plan.columns < 1 || plan.rows * plan.columns > 64)
    return makeError("the walk grid must be 1×1 to 64 tiles, not " + std::to_string(plan.rows) + "×" + std::to_string(plan.columns));
  auto walk = toWalk(plan);
  if (!walk) return makeError(walk.error());
  if (Status valid = walk->validate(); !valid) return valid;
  if (walk->keyframes.front().latent.size(0) != nz())
    return makeError("the keyframes have " + std::to_string(walk->keyframes.front().latent.size(0)) +
                     " values but this generator takes " + std::to_string(nz()));
  return {};
}

Result<std::int64_t> LatentExplorer::frameCount(const WalkPlan& plan) const {
  if (Status valid = validate(plan); !valid) return makeError(valid.error());
  auto walk = toWalk(plan);
  return walk->frameCount();
}

Result<std::vector<RgbImage>> LatentExplorer::renderFrames(const WalkPlan& plan, std::int64_t begin, std::int64_t count) const {
  if (Status valid = validate(plan); !valid) return makeError(valid.error());
  auto walk = toWalk(plan);
  const bool grid = plan.rows * plan.columns > 1;
  GridWalk tiles;
  if (grid) tiles = GridWalk::fromSeedBase(plan.rows, plan.columns, static_cast<int>(plan.keys.size()), plan.grid_seed, nz(), *walk);
  const std::int64_t total = walk->frameCount();
  if (begin < 0 || count < 0 || begin + count > total)
    return makeError("frames " + std::to_string(begin) + "–" + std::to_string(begin + count) + " are outside the walk's " +
                     std::to_string(total));
  std::vector<RgbImage> frames;
  if (count == 0) return frames;
  std::lock_guard lock(state_->mutex);
  try {
    torch::NoGradGuard no_grad;
    Generator& g = state_->loaded.generator;
    BatchStatisticsScope scope(*g, state_->batch_statistics);
    if (!grid) {
      const torch::Tensor out = state_->generate(walk->frames(begin, count).to(state_->device)).to(torch::kCPU);
      for (std::int64_t i = 0; i < count; ++i) frames.push_back(toRgbImage(makeImageGrid(out.narrow(0, i, 1), 1, 0)));
    } else {
      std::vector<torch::Tensor> latents;
      for (std::int64_t i = begin; i < begin + count; ++i) latents.push_back(tiles.frame(i));
      const torch::Tensor out = state_->generate(torch::cat(latents).to(state_->device)).to(torch::kCPU);
      const std::int64_t n = plan.rows * plan.columns;
      for (std::int64_t i = 0; i < count; ++i) frames.push_back(toRgbImage(makeImageGrid(out.narrow(0, i * n, n), plan.columns, 2)));
    }
  } catch (const c10::Error& e) {
    return makeError(std::string("rendering the walk failed: ") + e.what_without_backtrace());
  }
  return frames;
}

Status LatentExplorer::exportWalk(const WalkPlan& plan, const std::string& path, const VideoExportOptions& options,
                                  const std::function<bool(const ExplorerExportProgress&)>& progress) const {
  if (Status valid = validate(plan); !valid) return valid;
  auto walk = toWalk(plan);
  WalkRenderOptions render;
  render.device = state_->device;
  auto callback = [&progress](const WalkExportProgress& p) {
    return !progress || progress(ExplorerExportProgress{p.rendered, p.encoded, p.total});
  };
  std::lock_guard lock(state_->mutex);
  render.batch_statistics = state_->batch_statistics;
  BatchStatisticsScope scope(*state_->loaded.generator, state_->batch_statistics);
  Result<WalkExportSummary> done =
      plan.rows * plan.columns > 1
          ? WalkExporter::exportWalk(state_->loaded.generator,
                                     GridWalk::fromSeedBase(plan.rows, plan.columns, static_cast<int>(plan.keys.size()),
                                                            plan.grid_seed, nz(), *walk),
                                     render, path, options, callback)
          : WalkExporter::exportWalk(state_->loaded.generator, *walk, render, path, options, callback);
  if (!done) return makeError(done.error());
  return {};
}

namespace {

Result<torch::Tensor> photoTensor(const std::string& path, const TrainConfig& config) {
  AugmentConfig framing;
  framing.shift = 0;
  framing.noise_std = 0;
  framing.flip = false;
  framing.rotate_deg = 0;
  framing.scale_jitter = 0;
  framing.crop_scale = config.augment.crop_scale;
  const SamplePipeline pipeline(framing, static_cast<int>(config.img_size), static_cast<int>(config.nc));
  torch::Tensor out = torch::empty({config.nc, config.img_size, config.img_size}, torch::kFloat32);
  if (Status s = pipeline.load(path, 0, out.data_ptr<float>()); !s) return makeError(s.error());
  return out;
}

}  // namespace

Result<RgbImage> LatentExplorer::photoAtModelSize(const std::string& path) const {
  auto photo = photoTensor(path, state_->loaded.config);
  if (!photo) return makeError(photo.error());
  return toRgbImage(makeImageGrid(photo->unsqueeze(0), 1, 0));
}

Result<PhotoProjection> LatentExplorer::projectPhoto(const std::string& path, const ProjectionSettings& settings,
                                                     const std::function<bool(const ProjectionUpdate&)>& progress,
                                                     const std::function<bool()>& should_stop) const {
  auto photo = photoTensor(path, state_->loaded.config);
  if (!photo) return makeError(photo.error());
  std::lock_guard lock(state_->mutex);
  LatentProjectorOptions options;
  options.steps = settings.steps;
  options.restarts = settings.restarts;
  options.seed = settings.seed;
  options.learning_rate = settings.learning_rate;
  options.ms_ssim_weight = settings.ms_ssim_weight;
  options.prior_weight = settings.prior_weight;
  options.batch_statistics = state_->batch_statistics;
  options.should_stop = should_stop;
  if (progress)
    options.progress = [&progress](const LatentProjectorProgress& p) {
      ProjectionUpdate update{p.step, p.steps, p.best_loss, toRgbImage(makeImageGrid(p.best_image.unsqueeze(0), 1, 0))};
      return progress(update);
    };
  auto projection = LatentProjector::project(*state_->loaded.generator, *photo, options);
  if (!projection) return makeError(projection.error() == "projection: cancelled" ? projection.error() : path + ": " + projection.error());
  PhotoProjection out;
  out.latent = toLatent(projection->latent);
  out.photo = toRgbImage(makeImageGrid(photo->unsqueeze(0), 1, 0));
  out.reconstruction = toRgbImage(makeImageGrid(projection->image.unsqueeze(0), 1, 0));
  out.loss = projection->loss;
  out.pixel_rmse = projection->pixel_rmse;
  out.ms_ssim = projection->ms_ssim;
  out.restart = projection->restart;
  out.steps = projection->steps;
  out.batch_statistics = options.batch_statistics;
  return out;
}

bool LatentExplorer::hasDiscriminator() const { return static_cast<bool>(state_->loaded.discriminator); }

Result<GeneratorInside> LatentExplorer::inside(const Latent& latent, const std::vector<Latent>& page,
                                               const std::vector<ChannelAblation>& ablated) const {
  std::vector<const Latent*> all{&latent};  // the sample first, then its page
  for (const Latent& p : page) all.push_back(&p);
  std::vector<torch::Tensor> rows;
  for (const Latent* z : all) {
    if (static_cast<int>(z->size()) != nz())
      return makeError("a latent has " + std::to_string(z->size()) + " values but this generator takes " + std::to_string(nz()));
    rows.push_back(toTensor(*z).view({1, -1, 1, 1}));
  }
  std::lock_guard lock(state_->mutex);
  GeneratorImpl& g = *state_->loaded.generator;
  const int blocks = g.blockCount();
  for (const ChannelAblation& a : ablated) {
    if (a.block < 0 || a.block >= blocks - 1)
      return makeError("block " + std::to_string(a.block) + " is not a hidden block (0 to " + std::to_string(blocks - 2) + ")");
    const std::int64_t width = state_->loaded.config.ngf * (std::int64_t(1) << (blocks - 2 - a.block));
    if (a.channel < 0 || a.channel >= width)
      return makeError("block " + std::to_string(a.block) + " has " + std::to_string(width) + " channels, not channel " +
                       std::to_string(a.channel));
  }
  try {
    torch::NoGradGuard no_grad;
    BatchStatisticsScope scope(g, state_->batch_statistics);
    GeneratorInside out;
    out.batch_statistics = state_->batch_statistics;
    out.layers.resize(static_cast<std::size_t>(blocks));
    std::vector<std::shared_ptr<torch::nn::Module>> norms;  // each block's BatchNorm, in order
    for (const auto& child : g.children())
      for (const auto& layer : child->children())
        if (layer->as<torch::nn::BatchNorm2d>()) norms.push_back(layer);
    auto toVector = [](const torch::Tensor& t) {
      const torch::Tensor c = t.to(torch::kCPU, torch::kFloat64).contiguous();
      return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    };
    const auto visit = [&](int block, GeneratorImpl::BlockStage stage, torch::Tensor& x) {
      GeneratorLayerView& view = out.layers[static_cast<std::size_t>(block)];
      view.block = block;
      if (stage == GeneratorImpl::BlockStage::Convolved) {
        if (block + 1 < blocks) {
          auto* norm = norms[static_cast<std::size_t>(block)]->as<torch::nn::BatchNorm2d>();
          view.running_mean = toVector(norm->running_mean);
          view.running_var = toVector(norm->running_var);
          view.batch_mean = toVector(x.mean({0, 2, 3}));
          view.batch_var = toVector(x.var({0, 2, 3}, /*unbiased=*/false));
        }
        return;
      }
      for (const ChannelAblation& a : ablated)
        if (a.block == block) x[0][a.channel].zero_();
      const torch::Tensor sample = x[0].to(torch::kCPU, torch::kFloat32).contiguous();
      view.channels = static_cast<int>(sample.size(0));
      view.height = static_cast<int>(sample.size(1));
      view.width = static_cast<int>(sample.size(2));
      view.activations.assign(sample.data_ptr<float>(), sample.data_ptr<float>() + sample.numel());
      const torch::Tensor means = sample.mean({1, 2}).contiguous();
      view.channel_means.assign(means.data_ptr<float>(), means.data_ptr<float>() + means.numel());
    };
    const torch::Tensor images = g.forward(torch::cat(rows).to(state_->device), visit);
    const torch::Tensor image = images.narrow(0, 0, 1);
    out.image = toRgbImage(makeImageGrid(image.to(torch::kCPU), 1, 0));
    if (state_->loaded.discriminator) {
      state_->loaded.discriminator->eval();
      out.discriminator_score = torch::sigmoid(state_->loaded.discriminator->forward(image.contiguous()))[0].item<double>();
    }
    return out;
  } catch (const c10::Error& e) {
    return makeError(std::string("looking inside the generator failed: ") + e.what_without_backtrace());
  }
}

Status LatentExplorer::saveWalk(const WalkPlan& plan, const std::string& path) {
  auto walk = toWalk(plan);
  if (!walk) return makeError(walk.error());
  return walk->save(path);
}

Result<WalkPlan> LatentExplorer::loadWalk(const std::string& path) {
  auto walk = LatentWalk::load(path);
  if (!walk) return makeError(walk.error());
  WalkPlan plan;
  for (const WalkKeyframe& key : walk->keyframes) {
    plan.keys.push_back(toLatent(key.latent));
    plan.seeds.push_back(key.seed);
  }
  plan.frames_per_key = walk->frames_per_key;
  plan.mode = interpolationName(walk->mode);
  plan.easing = easingName(walk->easing);
  plan.loop = walk->loop;
  return plan;
}

namespace {

torch::Tensor rowsOfBatch(const std::vector<Latent>& latents, int nz) {
  torch::Tensor out = torch::empty({static_cast<std::int64_t>(latents.size()), nz}, torch::kFloat64);
  double* data = out.data_ptr<double>();
  for (const Latent& latent : latents)
    for (float v : latent) *data++ = static_cast<double>(v);
  return out;
}

}  // namespace

Result<std::vector<LatentDirection>> LatentExplorer::findDirections(const std::string& method, int top,
                                                                    std::int64_t samples, std::uint64_t seed,
                                                                    const std::function<bool(double)>& progress) const {
  if (method != "sefa" && method != "pca")
    return makeError("directions: the method must be sefa or pca, got \"" + method + "\"");
  Result<std::vector<FoundDirection>> found = makeError("");
  {
    std::lock_guard lock(state_->mutex);
    GeneratorImpl& g = *state_->loaded.generator;
    try {
      if (method == "sefa") {
        found = SemanticDirections::closedForm(SemanticDirections::firstWeight(g), top);
      } else {
        PrincipalDirectionsOptions options;
        options.samples = samples;
        options.seed = seed;
        options.progress = progress;
        found = SemanticDirections::principal(g, top, options);
      }
    } catch (const c10::Error& e) {
      return makeError(std::string("directions: ") + e.what_without_backtrace());
    }
  }
  if (!found) return makeError(found.error());
  std::vector<LatentDirection> out;
  for (std::size_t i = 0; i < found->size(); ++i) {
    LatentDirection d;
    d.kind = method == "sefa" ? LatentDirection::Kind::ClosedForm : LatentDirection::Kind::PrincipalComponent;
    d.checkpoint = state_->path;
    d.step = state_->loaded.progress.step;
    d.vector = toLatent((*found)[i].vector);
    d.rank = static_cast<int>(i + 1);
    d.strength = (*found)[i].strength;
    out.push_back(std::move(d));
  }
  return out;
}

Result<LatentDirection> LatentExplorer::labelledDirection(const std::vector<Latent>& has,
                                                          const std::vector<Latent>& lacks) const {
  const int size = nz();
  for (const auto* marks : {&has, &lacks})
    for (const Latent& latent : *marks)
      if (static_cast<int>(latent.size()) != size)
        return makeError("directions: a marked latent has " + std::to_string(latent.size()) + " values, the model's " +
                         std::to_string(size));
  try {
    auto found = SemanticDirections::labelled(rowsOfBatch(has, size), rowsOfBatch(lacks, size));
    if (!found) return makeError(found.error());
    LatentDirection d;
    d.kind = LatentDirection::Kind::Labelled;
    d.checkpoint = state_->path;
    d.step = state_->loaded.progress.step;
    d.vector = toLatent(found->vector);
    d.strength = found->accuracy;
    d.held_out = found->held_out;
    d.has = has;
    d.lacks = lacks;
    return d;
  } catch (const c10::Error& e) {
    return makeError(std::string("directions: ") + e.what_without_backtrace());
  }
}

Result<Latent> LatentExplorer::conditional(const Latent& direction, const std::vector<Latent>& others) {
  try {
    std::vector<torch::Tensor> rows;
    for (const Latent& other : others) rows.push_back(toTensor(other));
    auto kept = SemanticDirections::conditional(toTensor(direction), rows);
    if (!kept) return makeError(kept.error());
    return toLatent(*kept);
  } catch (const c10::Error& e) {
    return makeError(std::string("directions: ") + e.what_without_backtrace());
  }
}

}  // namespace streetgan
