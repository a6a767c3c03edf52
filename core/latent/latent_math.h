#pragma once
// Latent-space arithmetic on 1-D latent vectors (float32, nz values): slerp with a guard for
// (anti)parallel vectors (|cos| > 0.9995 falls back to lerp, where the great circle is undefined
// or numerically unstable), lerp, the easing curves a walk's segments use, latents from seeds
// (the same z `streetgan sample --seeds` draws) and the DCGAN paper's vector arithmetic on group
// means. Bad arguments (t outside [0, 1] unless extrapolation is asked for, vectors of different
// sizes, empty groups) come back as an Error.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace streetgan {

enum class Interpolation { Slerp, Lerp };
enum class Easing { Linear, EaseInOut, EaseIn, EaseOut };

Result<Interpolation> parseInterpolation(const std::string& name);  ///< "slerp" | "lerp"
Result<Easing> parseEasing(const std::string& name);  ///< "linear" | "ease-in-out" | "ease-in" | "ease-out"
const char* interpolationName(Interpolation mode);
const char* easingName(Easing easing);

/// The eased position for t in [0, 1]; ease(e, 0) = 0 and ease(e, 1) = 1 exactly.
double ease(Easing easing, double t);

/// z0 + t·(z1 − z0).
torch::Tensor lerp(const torch::Tensor& z0, const torch::Tensor& z1, double t);
/// Spherical interpolation; lerp when |cos(z0, z1)| > 0.9995 or either vector is zero.
torch::Tensor slerp(const torch::Tensor& z0, const torch::Tensor& z1, double t);
/// Checked interpolation: same sizes, t in [0, 1] unless `allow_extrapolation`.
Result<torch::Tensor> interpolate(const torch::Tensor& z0, const torch::Tensor& z1, double t,
                                  Interpolation mode, bool allow_extrapolation = false);

/// The latent of `seed`: nz standard normal values from a CPU generator seeded with it.
torch::Tensor latentFromSeed(std::uint64_t seed, int nz);

/// mean(a) − mean(b) + mean(c), each group a list of latents of one size.
Result<torch::Tensor> latentArithmetic(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                                       const std::vector<torch::Tensor>& c);

}  // namespace streetgan
