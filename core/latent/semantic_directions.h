#pragma once
// SemanticDirections: directions in a DCGAN generator's latent space along which the images change
// in one way (day to night, a wider road, more trees), found three ways:
//  - closed form (SeFa, Shen and Zhou 2021): G's first transposed convolution maps z to its 4×4
//    output linearly, h = Az with A its weight as a (C·4·4) × nz matrix; the directions are the
//    unit eigenvectors of AᵀA, largest eigenvalue first. No sampling: instant.
//  - principal components (GANSpace, Härkönen et al. 2020): the first block's outputs (transposed
//    convolution, BatchNorm with its running statistics, ReLU) of N latents drawn from a seed,
//    their principal axes by variance, each mapped back to a latent direction by least squares
//    (the u minimising ‖Z u − (H − mean) v‖), normalised.
//  - labelled (InterFaceGAN, Shen et al. 2020): latents a user marked as having or lacking a
//    property; an L2-regularised logistic regression on a seeded share of them, the unit normal of
//    its boundary, and its accuracy on the rest. Conditional editing removes other directions'
//    parts (conditional()).
// All math in float64 on the CPU; vectors come back as (nz) float64 tensors of unit length, the
// sign fixed so that the largest component is positive (eigenvectors have none of their own).
// Bad input comes back as an Error; nothing throws (LibTorch's errors are translated here).
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace streetgan {

class GeneratorImpl;

struct FoundDirection {
  torch::Tensor vector;  ///< (nz) float64, unit length
  double strength = 0;   ///< eigenvalue (closed form) or share of the variance (principal)
};

struct PrincipalDirectionsOptions {
  std::int64_t samples = 10000;  ///< latents drawn (N)
  std::uint64_t seed = 0;        ///< their draw
  std::int64_t block = 1000;     ///< latents through the first block at a time
  /// Told the share done (0..1) between blocks; false cancels ("directions: cancelled").
  std::function<bool(double)> progress;
};

struct LabelledDirectionOptions {
  double held_out = 0.2;        ///< share of each label kept out of the fit to measure it
  std::uint64_t seed = 0;       ///< which latents are held out
  double l2 = 1e-2;             ///< the penalty λ‖w‖² (keeps separable labels finite)
  int iterations = 50;          ///< Newton steps at most (it stops when the step is tiny)
  std::int64_t min_each = 10;   ///< latents needed per label
};

struct LabelledDirection {
  torch::Tensor vector;           ///< (nz) float64, unit length, from "lacks" towards "has"
  double accuracy = 0;            ///< on the held-out latents (0–1)
  double train_accuracy = 0;      ///< on the fitted ones
  std::int64_t held_out = 0, fitted = 0;
};

class SemanticDirections {
public:
  /// SeFa on the first layer's weight (nz, C, 4, 4): the top `top` directions (1 ≤ top ≤ nz).
  static Result<std::vector<FoundDirection>> closedForm(const torch::Tensor& first_weight, int top);

  /// GANSpace on generator `g` (its first block, in eval mode; `g` is not changed).
  static Result<std::vector<FoundDirection>> principal(GeneratorImpl& g, int top,
                                                       const PrincipalDirectionsOptions& options = {});
  /// The math of principal() on given latents (N, nz) and first-block outputs (N, D).
  static Result<std::vector<FoundDirection>> principalOf(const torch::Tensor& latents,
                                                         const torch::Tensor& activations, int top);
  /// The first block's outputs of `g` for latents (B, nz), flattened: (B, C·16) float64.
  static torch::Tensor firstBlock(GeneratorImpl& g, const torch::Tensor& latents);
  /// The first transposed convolution's weight of `g` (nz, C, 4, 4).
  static torch::Tensor firstWeight(GeneratorImpl& g);

  /// InterFaceGAN on latents marked "has" (n₁, nz) and "lacks" (n₀, nz).
  static Result<LabelledDirection> labelled(const torch::Tensor& has, const torch::Tensor& lacks,
                                            const LabelledDirectionOptions& options = {});

  /// `direction` less its parts along `others` (each (nz)), unit length: editing along it leaves
  /// the others' projections unchanged. An Error when nothing is left.
  static Result<torch::Tensor> conditional(const torch::Tensor& direction, const std::vector<torch::Tensor>& others);

private:
  /// principalOf() on outputs it may centre in place (float64 up to 4,096 values a row).
  static Result<std::vector<FoundDirection>> principalInPlace(const torch::Tensor& latents,
                                                              const torch::Tensor& activations, int top);
};

}  // namespace streetgan
