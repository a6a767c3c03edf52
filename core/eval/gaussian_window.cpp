#include "core/eval/gaussian_window.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace streetgan {
namespace {

constexpr int kWindowTaps = GaussianWindow::kTaps;

template <typename T>
std::array<T, kWindowTaps> tapsAs() {
  std::array<T, kWindowTaps> out{};
  for (int t = 0; t < kWindowTaps; ++t) out[static_cast<std::size_t>(t)] = static_cast<T>(GaussianWindow::taps()[static_cast<std::size_t>(t)]);
  return out;
}

// One plane (H, W) → (h, w) = (H − 10, W − 10); `across` is scratch of H·w. The loops run along
// rows so that the compiler vectorises them; each element's sum is still taken in tap order.
// Cloned for AVX2 (chosen at run time; no FMA, so the sums round as LibTorch's do) and the baseline.
template <typename T>
__attribute__((target_clones("avx2", "default"))) void forwardPlane(const T* __restrict__ in, T* __restrict__ across, T* __restrict__ out, std::int64_t H, std::int64_t W,
                  const std::array<T, kWindowTaps>& k) {
  const std::int64_t h = H - kWindowTaps + 1, w = W - kWindowTaps + 1;
  for (std::int64_t r = 0; r < H; ++r) {
    const T* __restrict__ row = in + r * W;
    T* __restrict__ a = across + r * w;
    for (std::int64_t j = 0; j < w; ++j) a[j] = row[j] * k[0];
    for (int t = 1; t < kWindowTaps; ++t) {
      const T tap = k[static_cast<std::size_t>(t)];
      for (std::int64_t j = 0; j < w; ++j) a[j] = a[j] + row[j + t] * tap;
    }
  }
  for (std::int64_t i = 0; i < h; ++i) {
    T* __restrict__ o = out + i * w;
    const T* __restrict__ a0 = across + i * w;
    for (std::int64_t j = 0; j < w; ++j) o[j] = a0[j] * k[0];
    for (int t = 1; t < kWindowTaps; ++t) {
      const T tap = k[static_cast<std::size_t>(t)];
      const T* __restrict__ a = across + (i + t) * w;
      for (std::int64_t j = 0; j < w; ++j) o[j] = o[j] + a[j] * tap;
    }
  }
}

// The adjoint: grad (h, w) → grad_in (H, W); `across` is scratch of H·w.
template <typename T>
__attribute__((target_clones("avx2", "default"))) void backwardPlane(const T* __restrict__ grad, T* __restrict__ across, T* __restrict__ grad_in, std::int64_t H, std::int64_t W,
                   const std::array<T, kWindowTaps>& k) {
  const std::int64_t h = H - kWindowTaps + 1, w = W - kWindowTaps + 1;
  std::fill(across, across + H * w, T(0));
  for (std::int64_t i = 0; i < h; ++i) {
    const T* __restrict__ g = grad + i * w;
    for (int t = 0; t < kWindowTaps; ++t) {
      const T tap = k[static_cast<std::size_t>(t)];
      T* __restrict__ a = across + (i + t) * w;
      for (std::int64_t j = 0; j < w; ++j) a[j] += g[j] * tap;
    }
  }
  std::fill(grad_in, grad_in + H * W, T(0));
  for (std::int64_t r = 0; r < H; ++r) {
    const T* __restrict__ a = across + r * w;
    T* __restrict__ row = grad_in + r * W;
    for (int t = 0; t < kWindowTaps; ++t) {
      const T tap = k[static_cast<std::size_t>(t)];
      for (std::int64_t j = 0; j < w; ++j) row[j + t] += a[j] * tap;
    }
  }
}

// Runs `plane(in, scratch, out)` over every plane, in parallel over planes.
template <typename T, typename Plane>
void eachPlane(const torch::Tensor& in, torch::Tensor& out, std::int64_t scratch, Plane plane) {
  const std::int64_t planes = in.size(0) * in.size(1);
  const std::int64_t in_size = in.size(2) * in.size(3), out_size = out.size(2) * out.size(3);
  const T* src = in.data_ptr<T>();
  T* dst = out.data_ptr<T>();
  at::parallel_for(0, planes, 4, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> across(static_cast<std::size_t>(scratch));
    for (std::int64_t p = begin; p < end; ++p) plane(src + p * in_size, across.data(), dst + p * out_size);
  });
}

torch::Tensor forwardKernel(const torch::Tensor& x_in) {
  const torch::Tensor x = x_in.contiguous();
  const std::int64_t H = x.size(2), W = x.size(3);
  torch::Tensor out = torch::empty({x.size(0), x.size(1), H - kWindowTaps + 1, W - kWindowTaps + 1}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "GaussianWindow forward", [&] {
    const auto k = tapsAs<scalar_t>();
    eachPlane<scalar_t>(x, out, H * out.size(3),
                        [&](const scalar_t* in, scalar_t* across, scalar_t* o) { forwardPlane(in, across, o, H, W, k); });
  });
  return out;
}

torch::Tensor backwardKernel(const torch::Tensor& grad_in, std::int64_t H, std::int64_t W) {
  const torch::Tensor grad = grad_in.contiguous();
  torch::Tensor out = torch::empty({grad.size(0), grad.size(1), H, W}, grad.options());
  AT_DISPATCH_FLOATING_TYPES(grad.scalar_type(), "GaussianWindow backward", [&] {
    const auto k = tapsAs<scalar_t>();
    eachPlane<scalar_t>(grad, out, H * grad.size(3),
                        [&](const scalar_t* g, scalar_t* across, scalar_t* o) { backwardPlane(g, across, o, H, W, k); });
  });
  return out;
}

struct GaussianWindowFunction : public torch::autograd::Function<GaussianWindowFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    ctx->saved_data["height"] = x.size(2);
    ctx->saved_data["width"] = x.size(3);
    return forwardKernel(x);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    return {backwardKernel(grads[0], ctx->saved_data["height"].toInt(), ctx->saved_data["width"].toInt())};
  }
};

}  // namespace

const std::array<double, GaussianWindow::kTaps>& GaussianWindow::taps() {
  static const std::array<double, kWindowTaps> taps = [] {
    std::array<double, kWindowTaps> out{};
    double sum = 0;
    for (int i = 0; i < kWindowTaps; ++i) {
      const double x = i - (kWindowTaps - 1) / 2.0;
      out[static_cast<std::size_t>(i)] = std::exp(-x * x / (2 * kSigma * kSigma));
      sum += out[static_cast<std::size_t>(i)];
    }
    for (double& t : out) t /= sum;
    return out;
  }();
  return taps;
}

torch::Tensor GaussianWindow::filterValid(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(2) >= kWindowTaps && x.size(3) >= kWindowTaps, "GaussianWindow: the planes must be at least 11 x 11");
  const bool fused = x.is_cpu() && (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kFloat64);
  return fused ? GaussianWindowFunction::apply(x) : filterValidByTensorOps(x);
}

torch::Tensor GaussianWindow::filterValidByTensorOps(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(2) >= kWindowTaps && x.size(3) >= kWindowTaps, "GaussianWindow: the planes must be at least 11 x 11");
  const std::int64_t h = x.size(2) - kWindowTaps + 1, w = x.size(3) - kWindowTaps + 1;
  // No add_ with alpha: ATen fuses that into an FMA in its vector loops only.
  torch::Tensor across = x.narrow(3, 0, w) * taps()[0];
  for (int t = 1; t < kWindowTaps; ++t) across.add_(x.narrow(3, t, w) * taps()[static_cast<std::size_t>(t)]);
  torch::Tensor out = across.narrow(2, 0, h) * taps()[0];
  for (int t = 1; t < kWindowTaps; ++t) out.add_(across.narrow(2, t, h) * taps()[static_cast<std::size_t>(t)]);
  return out;
}

}  // namespace streetgan
