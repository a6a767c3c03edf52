#include "core/train/ada_augment.h"

#include "core/train/reflected_bilinear.h"

#include <torch/torch.h>

#include <cmath>

namespace streetgan {
namespace {

using torch::Tensor;

// The paper's strengths (StyleGAN2-ADA's AugmentPipe defaults).
constexpr double kXintMax = 0.125, kScaleStd = 0.2, kRotateMax = 1.0, kAnisoStd = 0.2, kXfracStd = 0.125;
constexpr double kBrightnessStd = 0.2, kContrastStd = 0.5, kHueMax = 1.0, kSaturationStd = 1.0;

// (B, 3, 3) from nine (B) tensors, row by row.
Tensor matrix3(const std::vector<Tensor>& entries) {
  return torch::stack(entries, 1).view({-1, 3, 3});
}

struct Geometry {
  Tensor zero, one;
  Tensor translateInverse(const Tensor& tx, const Tensor& ty) const {
    return matrix3({one, zero, -tx, zero, one, -ty, zero, zero, one});
  }
  Tensor scaleInverse(const Tensor& sx, const Tensor& sy) const {
    return matrix3({1 / sx, zero, zero, zero, 1 / sy, zero, zero, zero, one});
  }
  Tensor rotate(const Tensor& theta) const {
    return matrix3({theta.cos(), -theta.sin(), zero, theta.sin(), theta.cos(), zero, zero, zero, one});
  }
};

// The inverse of the geometric transform each image gets (output pixel → input pixel).
Tensor geometricInverse(const AdaOps& ops, const Tensor& u, const Tensor& n, const Tensor& p, std::int64_t height,
                        std::int64_t width) {
  const std::int64_t b = u.size(0);
  const Geometry m{torch::zeros({b}, u.options()), torch::ones({b}, u.options())};
  const auto gate = [&](int column, const Tensor& probability, const Tensor& value, const Tensor& otherwise) {
    return torch::where(u.select(1, column) < probability, value, otherwise);
  };
  Tensor g = torch::eye(3, u.options()).expand({b, 3, 3});
  if (ops.xflip) {
    const Tensor i = gate(AdaDraws::kXflipGate, p, torch::floor(u.select(1, AdaDraws::kXflip) * 2), m.zero);
    g = g.matmul(m.scaleInverse(1 - 2 * i, m.one));
  }
  if (ops.rotate90) {
    const Tensor i = gate(AdaDraws::kRotate90Gate, p, torch::floor(u.select(1, AdaDraws::kRotate90) * 4), m.zero);
    g = g.matmul(m.rotate(M_PI / 2 * i));
  }
  if (ops.xint) {
    const Tensor tx = gate(AdaDraws::kXintGate, p, (u.select(1, AdaDraws::kXintX) * 2 - 1) * kXintMax, m.zero);
    const Tensor ty = gate(AdaDraws::kXintGate, p, (u.select(1, AdaDraws::kXintY) * 2 - 1) * kXintMax, m.zero);
    g = g.matmul(m.translateInverse(torch::round(tx * width), torch::round(ty * height)));
  }
  if (ops.scale) {
    const Tensor s = gate(AdaDraws::kScaleGate, p, torch::exp2(n.select(1, AdaDraws::kScale) * kScaleStd), m.one);
    g = g.matmul(m.scaleInverse(s, s));
  }
  // Rotation before and after the anisotropic scaling, each with the probability that makes
  // either of them happen with probability p.
  const Tensor p_rotate = 1 - torch::sqrt((1 - kRotateMax * p).clamp(0, 1));
  const auto rotation = [&](int value, int gate_column) {
    const Tensor theta = gate(gate_column, p_rotate, (u.select(1, value) * 2 - 1) * M_PI * kRotateMax, m.zero);
    return m.rotate(theta);
  };
  if (ops.rotate) g = g.matmul(rotation(AdaDraws::kPreRotate, AdaDraws::kPreRotateGate));
  if (ops.aniso) {
    const Tensor s = gate(AdaDraws::kAnisoGate, p, torch::exp2(n.select(1, AdaDraws::kAniso) * kAnisoStd), m.one);
    g = g.matmul(m.scaleInverse(s, 1 / s));
  }
  if (ops.rotate) g = g.matmul(rotation(AdaDraws::kPostRotate, AdaDraws::kPostRotateGate));
  if (ops.xfrac) {
    const Tensor tx = gate(AdaDraws::kXfracGate, p, n.select(1, AdaDraws::kXfracX) * kXfracStd, m.zero);
    const Tensor ty = gate(AdaDraws::kXfracGate, p, n.select(1, AdaDraws::kXfracY) * kXfracStd, m.zero);
    g = g.matmul(m.translateInverse(tx * width, ty * height));
  }
  return g;
}

// The colour transform each image gets, (B, 4, 4) acting on (r, g, b, 1).
Tensor colorMatrix(const AdaOps& ops, const Tensor& u, const Tensor& n, const Tensor& p, std::int64_t channels) {
  const std::int64_t b = u.size(0);
  const auto gate = [&](int column, const Tensor& value, double otherwise) {
    return torch::where(u.select(1, column) < p, value, torch::full_like(value, otherwise));
  };
  const Tensor eye = torch::eye(4, u.options());
  Tensor c = eye.expand({b, 4, 4});
  const auto per_image = [](const Tensor& t) { return t.view({-1, 1, 1}); };
  if (ops.brightness) {
    const Tensor shift = gate(AdaDraws::kBrightnessGate, n.select(1, AdaDraws::kBrightness) * kBrightnessStd, 0);
    Tensor translate = eye.expand({b, 4, 4}).clone();
    translate.narrow(1, 0, 3).select(2, 3).copy_(shift.view({-1, 1}).expand({b, 3}));
    c = translate.matmul(c);
  }
  if (ops.contrast) {
    const Tensor s = gate(AdaDraws::kContrastGate, torch::exp2(n.select(1, AdaDraws::kContrast) * kContrastStd), 1);
    const Tensor diagonal = torch::stack({s, s, s, torch::ones_like(s)}, 1);
    c = torch::diag_embed(diagonal).matmul(c);
  }
  const Tensor v = torch::tensor({1.0, 1.0, 1.0, 0.0}, u.options()) / std::sqrt(3.0);  // the luma axis
  const Tensor vv = torch::outer(v, v);
  if (ops.lumaflip) {
    const Tensor i = gate(AdaDraws::kLumaflipGate, torch::floor(u.select(1, AdaDraws::kLumaflip) * 2), 0);
    c = (eye - 2 * vv * per_image(i)).matmul(c);  // a Householder reflection
  }
  if (ops.hue && channels > 1) {
    const Tensor theta = gate(AdaDraws::kHueGate, (u.select(1, AdaDraws::kHue) * 2 - 1) * M_PI * kHueMax, 0);
    // Rotation about v by θ (Rodrigues): vvᵀ(1 − cos θ) + I cos θ + [v]ₓ sin θ, on the colour part.
    const double a = 1 / std::sqrt(3.0);
    const Tensor cross = torch::tensor({0.0, -a, a, 0.0, a, 0.0, -a, 0.0, -a, a, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
                                       u.options()).view({4, 4});
    const Tensor colour = eye - torch::diag(torch::tensor({0.0, 0.0, 0.0, 1.0}, u.options()));
    const Tensor cos = per_image(theta.cos()), sin = per_image(theta.sin());
    const Tensor rotation = vv * (1 - cos) + colour * cos + cross * sin + (eye - colour);
    c = rotation.matmul(c);
  }
  if (ops.saturation && channels > 1) {
    const Tensor s = gate(AdaDraws::kSaturationGate, torch::exp2(n.select(1, AdaDraws::kSaturation) * kSaturationStd), 1);
    c = (vv + (eye - vv) * per_image(s)).matmul(c);
  }
  return c;
}

Tensor applyColor(const Tensor& x, const Tensor& c) {
  const std::int64_t b = x.size(0), channels = x.size(1), h = x.size(2), w = x.size(3);
  const Tensor flat = x.reshape({b, channels, h * w});
  const Tensor m = c.to(x.scalar_type());
  if (channels == 3)
    return (m.narrow(1, 0, 3).narrow(2, 0, 3).matmul(flat) + m.narrow(1, 0, 3).narrow(2, 3, 1)).view({b, 3, h, w});
  // One channel: the mean of the colour rows, applied to grey (r = g = b).
  const Tensor row = m.narrow(1, 0, 3).mean(1, true);  // (B, 1, 4)
  return (flat * row.narrow(2, 0, 3).sum(2, true) + row.narrow(2, 3, 1)).view({b, channels, h, w});
}

}  // namespace

AdaOps adaOpsNamed(const std::string& name) {
  AdaOps ops;
  const bool blit = name == "blit" || name == "bg" || name == "bgc";
  const bool geom = name == "geom" || name == "bg" || name == "bgc";
  const bool color = name == "color" || name == "bgc";
  ops.xflip = ops.rotate90 = ops.xint = blit;
  ops.scale = ops.rotate = ops.aniso = ops.xfrac = geom;
  ops.brightness = ops.contrast = ops.lumaflip = ops.hue = ops.saturation = color;
  return ops;
}

AdaDraws AdaDraws::rowsOf(std::int64_t rank, std::int64_t world, std::int64_t n) const {
  AdaDraws out;
  out.uniform = uniform.slice(0, rank, uniform.size(0), world).narrow(0, 0, n);
  out.normal = normal.slice(0, rank, normal.size(0), world).narrow(0, 0, n);
  return out;
}

AdaDraws drawAda(std::int64_t rows, at::Generator& generator, const c10::Device& device) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  AdaDraws d;
  d.uniform = torch::rand({rows, AdaDraws::kUniformColumns}, generator, options);
  d.normal = torch::randn({rows, AdaDraws::kNormalColumns}, generator, options);
  return d;
}

Tensor applyAda(const Tensor& x, const AdaOps& ops, const AdaDraws& draws, const Tensor& p) {
  // The transforms in float64 for float64 images (tests), else float32 (fp16 would misplace pixels).
  const auto dtype = x.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  const Tensor u = draws.uniform.to(dtype), n = draws.normal.to(dtype), probability = p.to(dtype);
  Tensor y = x;
  if (ops.anyGeometric()) y = reflectedBilinear(y, geometricInverse(ops, u, n, probability, x.size(2), x.size(3)));
  if (ops.anyColor()) y = applyColor(y, colorMatrix(ops, u, n, probability, x.size(1)));
  return y.contiguous(x.suggest_memory_format());
}

}  // namespace streetgan
