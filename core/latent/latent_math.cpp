#include "core/latent/latent_math.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace streetgan {

Result<Interpolation> parseInterpolation(const std::string& name) {
  if (name == "slerp") return Interpolation::Slerp;
  if (name == "lerp") return Interpolation::Lerp;
  return makeError("unknown interpolation \"" + name + "\"; allowed: slerp, lerp");
}

Result<Easing> parseEasing(const std::string& name) {
  if (name == "linear") return Easing::Linear;
  if (name == "ease-in-out") return Easing::EaseInOut;
  if (name == "ease-in") return Easing::EaseIn;
  if (name == "ease-out") return Easing::EaseOut;
  return makeError("unknown easing \"" + name + "\"; allowed: linear, ease-in-out, ease-in, ease-out");
}

const char* interpolationName(Interpolation mode) { return mode == Interpolation::Slerp ? "slerp" : "lerp"; }

const char* easingName(Easing easing) {
  switch (easing) {
    case Easing::Linear: return "linear";
    case Easing::EaseInOut: return "ease-in-out";
    case Easing::EaseIn: return "ease-in";
    case Easing::EaseOut: return "ease-out";
  }
  return "linear";
}

double ease(Easing easing, double t) {
  switch (easing) {
    case Easing::Linear: return t;
    case Easing::EaseIn: return t * t;                    // cubic curves would stall longer
    case Easing::EaseOut: return 1.0 - (1.0 - t) * (1.0 - t);
    case Easing::EaseInOut: return t * t * (3.0 - 2.0 * t);  // smoothstep: zero speed at both ends
  }
  return t;
}

torch::Tensor lerp(const torch::Tensor& z0, const torch::Tensor& z1, double t) {
  if (t == 0.0) return z0.clone();
  if (t == 1.0) return z1.clone();
  return z0 + (z1 - z0) * t;
}

torch::Tensor slerp(const torch::Tensor& z0, const torch::Tensor& z1, double t) {
  if (t == 0.0) return z0.clone();
  if (t == 1.0) return z1.clone();
  // In float64: the angle of two 100-d vectors near each other needs the precision.
  const torch::Tensor a = z0.to(torch::kFloat64), b = z1.to(torch::kFloat64);
  const double na = a.norm().item<double>(), nb = b.norm().item<double>();
  if (na == 0.0 || nb == 0.0) return lerp(z0, z1, t);
  const double cosine = std::clamp((a * b).sum().item<double>() / (na * nb), -1.0, 1.0);
  if (std::fabs(cosine) > 0.9995) return lerp(z0, z1, t);
  const double omega = std::acos(cosine), s = std::sin(omega);
  return (a * (std::sin((1.0 - t) * omega) / s) + b * (std::sin(t * omega) / s)).to(z0.scalar_type());
}

Result<torch::Tensor> interpolate(const torch::Tensor& z0, const torch::Tensor& z1, double t, Interpolation mode,
                                  bool allow_extrapolation) {
  if (!z0.defined() || !z1.defined() || z0.dim() != 1 || z0.sizes() != z1.sizes())
    return makeError("interpolation needs two latent vectors of the same size");
  if (!std::isfinite(t)) return makeError("interpolation position t is not a number");
  if (!allow_extrapolation && (t < 0.0 || t > 1.0))
    return makeError("interpolation position t = " + std::to_string(t) + " is outside [0, 1]");
  return mode == Interpolation::Slerp ? slerp(z0, z1, t) : lerp(z0, z1, t);
}

torch::Tensor latentFromSeed(std::uint64_t seed, int nz) {
  auto rng = at::make_generator<at::CPUGeneratorImpl>(seed);
  return torch::randn({nz}, rng, torch::kFloat32);
}

Result<torch::Tensor> latentArithmetic(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                                       const std::vector<torch::Tensor>& c) {
  const char* names[] = {"A", "B", "C"};
  const std::vector<torch::Tensor>* groups[] = {&a, &b, &c};
  torch::Tensor means[3];
  for (int g = 0; g < 3; ++g) {
    if (groups[g]->empty()) return makeError(std::string("latent arithmetic: group ") + names[g] + " is empty");
    for (const auto& z : *groups[g])
      if (!z.defined() || z.dim() != 1 || z.sizes() != a.front().sizes())
        return makeError(std::string("latent arithmetic: group ") + names[g] +
                         " holds a latent of another size than the first of group A");
    means[g] = torch::stack(*groups[g]).to(torch::kFloat64).mean(0);
  }
  return (means[0] - means[1] + means[2]).to(torch::kFloat32);
}

}  // namespace streetgan
