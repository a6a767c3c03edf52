#include "core/train/generator_average.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace streetgan {
namespace {

// The average's tensors beside the generator's, in the same order (the two nets share a shape).
template <typename Visit>
void forEachPair(Generator& average, Generator& generator, Visit visit) {
  auto ours = average->parameters();
  auto theirs = generator->parameters();
  auto our_buffers = average->buffers();
  auto their_buffers = generator->buffers();
  if (ours.size() != theirs.size() || our_buffers.size() != their_buffers.size())
    throw std::logic_error("GeneratorAverage: the generator's shape changed");
  for (std::size_t i = 0; i < ours.size(); ++i) visit(ours[i], theirs[i]);
  for (std::size_t i = 0; i < our_buffers.size(); ++i) visit(our_buffers[i], their_buffers[i]);
}

}  // namespace

GeneratorAverage::GeneratorAverage(const EmaConfig& config, Generator& generator)
    : config_(config), average_(generator->options()) {
  torch::NoGradGuard no_grad;
  // The copy's tensors take the generator's device and memory layout (channels-last on CUDA).
  forEachPair(average_, generator, [](torch::Tensor& ours, const torch::Tensor& theirs) {
    ours.set_data(theirs.detach().clone());
  });
  for (auto& p : average_->parameters()) p.set_requires_grad(false);
  average_->eval();
}

double GeneratorAverage::decay(const EmaConfig& config, std::int64_t images_before, std::int64_t step_images) {
  double half_life = config.half_life_images;
  if (config.rampup > 0) half_life = std::min(half_life, static_cast<double>(images_before) * config.rampup);
  return std::pow(0.5, static_cast<double>(step_images) / std::max(half_life, 1e-8));
}

void GeneratorAverage::update(Generator& generator, std::int64_t images_before, std::int64_t step_images) {
  const double beta = decay(config_, images_before, step_images);
  torch::NoGradGuard no_grad;
  forEachPair(average_, generator, [beta](torch::Tensor& ours, const torch::Tensor& theirs) {
    if (ours.is_floating_point())
      ours.lerp_(theirs, 1.0 - beta);
    else
      ours.copy_(theirs);
  });
}

void GeneratorAverage::copyFrom(Generator& generator) {
  torch::NoGradGuard no_grad;
  forEachPair(average_, generator, [](torch::Tensor& ours, const torch::Tensor& theirs) { ours.copy_(theirs); });
}

}  // namespace streetgan
