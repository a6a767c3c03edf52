#include "core/train/reflected_bilinear.h"

#include <torch/torch.h>

namespace streetgan {
namespace {

// PyTorch's reflection for align_corners=False: about the pixel edges −0.5 and size − 0.5, then
// clipped onto the pixel centres [0, size − 1].
torch::Tensor reflected(const torch::Tensor& coordinate, std::int64_t size) {
  const double low = -0.5, span = static_cast<double>(size);
  const torch::Tensor from_low = (coordinate - low).abs();
  const torch::Tensor extra = torch::fmod(from_low, span);
  const torch::Tensor flips = torch::floor(from_low / span);
  const torch::Tensor even = torch::fmod(flips, 2) == 0;
  const torch::Tensor back = torch::where(even, extra + low, span - extra + low);
  return back.clamp(0, static_cast<double>(size - 1));
}

}  // namespace

torch::Tensor reflectedBilinear(const torch::Tensor& x, const torch::Tensor& inverse) {
  const std::int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const auto options = torch::TensorOptions().dtype(inverse.scalar_type()).device(x.device());
  // Every output pixel's centred coordinates, (3, H·W) homogeneous.
  const torch::Tensor xs = torch::arange(w, options) - (w - 1) / 2.0;
  const torch::Tensor ys = torch::arange(h, options) - (h - 1) / 2.0;
  const torch::Tensor grid_x = xs.view({1, w}).expand({h, w}).reshape({-1});
  const torch::Tensor grid_y = ys.view({h, 1}).expand({h, w}).reshape({-1});
  const torch::Tensor points = torch::stack({grid_x, grid_y, torch::ones_like(grid_x)});
  const torch::Tensor source = torch::matmul(inverse, points);  // (B, 3, H·W)
  const torch::Tensor sx = reflected(source.select(1, 0) + (w - 1) / 2.0, w);
  const torch::Tensor sy = reflected(source.select(1, 1) + (h - 1) / 2.0, h);
  const torch::Tensor x0 = torch::floor(sx), y0 = torch::floor(sy);
  const torch::Tensor wx1 = sx - x0, wy1 = sy - y0;
  const torch::Tensor wx0 = 1 - wx1, wy0 = 1 - wy1;
  const torch::Tensor ix0 = x0.to(torch::kInt64), iy0 = y0.to(torch::kInt64);
  const torch::Tensor ix1 = (ix0 + 1).clamp_max(w - 1), iy1 = (iy0 + 1).clamp_max(h - 1);
  const torch::Tensor flat = x.reshape({b, c, h * w});
  const auto corner = [&](const torch::Tensor& iy, const torch::Tensor& ix) {
    return flat.gather(2, (iy * w + ix).unsqueeze(1).expand({b, c, h * w}));
  };
  const auto weight = [&](const torch::Tensor& a, const torch::Tensor& bw) {
    return (a * bw).unsqueeze(1).to(x.scalar_type());
  };
  const torch::Tensor out = corner(iy0, ix0) * weight(wy0, wx0) + corner(iy0, ix1) * weight(wy0, wx1) +
                            corner(iy1, ix0) * weight(wy1, wx0) + corner(iy1, ix1) * weight(wy1, wx1);
  return out.view({b, c, h, w});
}

}  // namespace streetgan
