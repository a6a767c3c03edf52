#include "core/latent/latent_projector.h"

#include "core/eval/ms_ssim.h"
#include "core/latent/batch_statistics_scope.h"
#include "core/latent/folded_generator.h"
#include "core/latent/latent_math.h"
#include "core/model/generator.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace streetgan {
namespace {

constexpr double kPi = 3.14159265358979323846;

// While alive: G's parameters take no gradient (a projection optimises z alone), and G is in
// eval mode unless batch statistics were asked for; both put back afterwards.
class FrozenGenerator {
public:
  FrozenGenerator(GeneratorImpl& g, bool batch_statistics) : g_(g), was_training_(g.is_training()) {
    for (auto& p : g_.parameters()) {
      saved_.emplace_back(p, p.requires_grad());
      p.requires_grad_(false);
    }
    if (!batch_statistics) g_.eval();
  }
  ~FrozenGenerator() {
    for (auto& [p, requires] : saved_) p.requires_grad_(requires);
    g_.train(was_training_);
  }
  FrozenGenerator(const FrozenGenerator&) = delete;
  FrozenGenerator& operator=(const FrozenGenerator&) = delete;

private:
  GeneratorImpl& g_;
  bool was_training_;
  std::vector<std::pair<torch::Tensor, bool>> saved_;
};

// Up over the first 5% of the steps, down (half a cosine) over the last 25%.
double learningRate(double peak, int step, int steps) {
  const double t = static_cast<double>(step) / steps;
  const double down = std::min(1.0, (1.0 - t) / 0.25);
  return peak * (0.5 - 0.5 * std::cos(kPi * down)) * std::min(1.0, t / 0.05 + 1.0 / steps);
}

// Each start's image: one batch, or with batch statistics each start its own batch of one.
torch::Tensor render(GeneratorImpl& g, const torch::Tensor& z, bool batch_statistics) {
  const torch::Tensor latents = z.view({z.size(0), z.size(1), 1, 1});
  if (!batch_statistics) return g.forward(latents);
  std::vector<torch::Tensor> images;
  for (std::int64_t r = 0; r < latents.size(0); ++r) images.push_back(g.forward(latents.narrow(0, r, 1)));
  return torch::cat(images);
}

Status checkProjectorOptions(const LatentProjectorOptions& o) {
  auto finiteAtLeast0 = [](double v) { return std::isfinite(v) && v >= 0; };
  if (o.steps < 1 || o.steps > 100000) return makeError("projection: the steps must be from 1 to 100000, got " + std::to_string(o.steps));
  if (o.restarts < 1 || o.restarts > 256) return makeError("projection: the restarts must be from 1 to 256, got " + std::to_string(o.restarts));
  if (!(std::isfinite(o.learning_rate) && o.learning_rate > 0 && o.learning_rate <= 10))
    return makeError("projection: the learning rate must be above 0 and at most 10");
  if (!finiteAtLeast0(o.ms_ssim_weight) || !finiteAtLeast0(o.prior_weight))
    return makeError("projection: the loss weights must be finite and not negative");
  if (o.report_every < 1) return makeError("projection: report_every must be at least 1");
  return {};
}

}  // namespace

torch::Tensor LatentProjector::objective(const torch::Tensor& latents, const torch::Tensor& images, const torch::Tensor& target,
                                         const LatentProjectorOptions& options) {
  torch::Tensor loss = (images - target).square().flatten(1).mean(1);
  if (options.ms_ssim_weight > 0)
    loss = loss + options.ms_ssim_weight * (1.0 - MsSsim::differentiable(images, MsSsim::prepareTarget(target)));
  if (options.prior_weight > 0) {
    const double root_nz = std::sqrt(static_cast<double>(latents.size(1)));
    loss = loss + options.prior_weight * (latents.flatten(1).norm(2, 1) / root_nz - 1.0).square();
  }
  return loss;
}

Result<LatentProjection> LatentProjector::project(GeneratorImpl& g, const torch::Tensor& target_in,
                                                  const LatentProjectorOptions& options) {
  if (Status s = checkProjectorOptions(options); !s) return makeError(s.error());
  const GeneratorOptions& go = g.options();
  const std::string expected = std::to_string(go.nc) + "x" + std::to_string(go.img_size) + "x" + std::to_string(go.img_size);
  if (!target_in.defined() || !(target_in.dim() == 3 || (target_in.dim() == 4 && target_in.size(0) == 1)))
    return makeError("projection: the photograph must be one image (C, H, W)");
  const torch::Tensor target_cpu = (target_in.dim() == 3 ? target_in.unsqueeze(0) : target_in).to(torch::kCPU, torch::kFloat32);
  if (target_cpu.size(1) != go.nc || target_cpu.size(2) != go.img_size || target_cpu.size(3) != go.img_size)
    return makeError("projection: the photograph is " + std::to_string(target_cpu.size(1)) + "x" + std::to_string(target_cpu.size(2)) +
                     "x" + std::to_string(target_cpu.size(3)) + " but the generator makes " + expected + " images");
  if (!torch::isfinite(target_cpu).all().item<bool>() || target_cpu.abs().max().item<double>() > 1.0 + 1e-6)
    return makeError("projection: the photograph's pixels must be finite and within [-1, 1]");
  if (go.img_size < MsSsim::minimumSize(1)) return makeError("projection: the generator's images are below MS-SSIM's 11 px");

  try {
    const torch::Device device = g.parameters().front().device();
    const torch::Tensor target = target_cpu.to(device);
    FrozenGenerator frozen(g, options.batch_statistics);
    BatchStatisticsScope statistics(g, options.batch_statistics);

    std::vector<torch::Tensor> starts;
    for (int r = 0; r < options.restarts; ++r) starts.push_back(latentFromSeed(options.seed + static_cast<std::uint64_t>(r), go.nz).view({-1}));
    torch::Tensor z = torch::stack(starts).to(device).requires_grad_(true);
    torch::optim::Adam adam({z}, torch::optim::AdamOptions(options.learning_rate));

    const FoldedGenerator folded = options.batch_statistics ? FoldedGenerator::none() : FoldedGenerator(g);
    for (int step = 0; step < options.steps; ++step) {
      if (options.should_stop && options.should_stop()) return makeError("projection: cancelled");
      static_cast<torch::optim::AdamOptions&>(adam.param_groups().front().options()).lr(learningRate(options.learning_rate, step, options.steps));
      adam.zero_grad();
      const torch::Tensor images = folded.usable() ? folded.forward(z) : render(g, z, options.batch_statistics);
      const torch::Tensor losses = objective(z, images, target, options);
      losses.sum().backward();
      adam.step();
      const bool report = (step + 1) % options.report_every == 0 || step + 1 == options.steps;
      if (options.progress && report) {
        const torch::Tensor detached = losses.detach();
        const std::int64_t best = detached.argmin().item<std::int64_t>();
        LatentProjectorProgress progress{step + 1, options.steps, detached[best].item<double>(),
                                         images[best].detach().to(torch::kCPU, torch::kFloat32).contiguous()};
        if (!options.progress(progress)) return makeError("projection: cancelled");
      }
    }

    torch::NoGradGuard no_grad;
    const torch::Tensor final_z = z.detach();
    const torch::Tensor images = render(g, final_z, options.batch_statistics);
    const torch::Tensor losses = objective(final_z, images, target, options);
    const std::int64_t best = losses.argmin().item<std::int64_t>();
    // The winner is rendered again on its own: a batch of one is how every other path (the explorer, a walk)
    // renders a latent, and a batched product may round differently (oneDNN picks kernels by batch size).
    const torch::Tensor best_z = final_z.narrow(0, best, 1);
    const torch::Tensor best_image = render(g, best_z, options.batch_statistics);
    LatentProjection out;
    out.loss = objective(best_z, best_image, target, options)[0].item<double>();
    if (!std::isfinite(out.loss)) return makeError("projection: the loss is not finite (the model gives NaN or Inf images)");
    out.latent = best_z[0].to(torch::kCPU, torch::kFloat32).contiguous();
    out.image = best_image[0].to(torch::kCPU, torch::kFloat32).contiguous();
    out.pixel_rmse = std::sqrt((out.image - target_cpu[0]).square().mean().item<double>()) * 127.5;
    auto similarity = MsSsim::pairwise(out.image.unsqueeze(0), target_cpu);
    if (!similarity) return makeError("projection: " + similarity.error());
    out.ms_ssim = (*similarity)[0].item<double>();
    out.restart = static_cast<int>(best);
    out.steps = options.steps;
    return out;
  } catch (const c10::Error& e) {
    return makeError(std::string("projection failed: ") + e.what_without_backtrace());
  }
}

}  // namespace streetgan
