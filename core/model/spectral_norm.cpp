#include "core/model/spectral_norm.h"

#include <torch/torch.h>

namespace streetgan {
namespace {

// torch.nn.functional.normalize's eps: a zero vector stays finite.
constexpr double kEps = 1e-12;

torch::Tensor normalised(const torch::Tensor& x) { return x / x.norm().clamp_min(kEps); }

}  // namespace

void attachSpectralNorm(torch::nn::Conv2dImpl& conv) {
  const torch::Tensor matrix = conv.weight.detach().reshape({conv.weight.size(0), -1});
  conv.register_buffer("weight_u", normalised(torch::randn({matrix.size(0)}, matrix.options())));
  conv.register_buffer("weight_v", normalised(torch::randn({matrix.size(1)}, matrix.options())));
}

torch::Tensor spectrallyNormalisedWeight(torch::nn::Conv2dImpl& conv, bool iterate) {
  const auto buffers = conv.named_buffers(/*recurse=*/false);
  torch::Tensor u = buffers["weight_u"], v = buffers["weight_v"];  // handles: copy_ writes the buffers
  const torch::Tensor matrix = conv.weight.reshape({conv.weight.size(0), -1});
  if (iterate) {
    torch::NoGradGuard no_grad;
    const torch::Tensor w = matrix.detach();
    v.copy_(normalised(torch::mv(w.t(), u)));
    u.copy_(normalised(torch::mv(w, v)));
  }
  // Copies: the buffers change in place at the next step, and this step's backward needs these.
  const torch::Tensor sigma = torch::dot(u.clone(), torch::mv(matrix, v.clone()));
  return conv.weight / sigma;
}

}  // namespace streetgan
