#include "core/train/gan_loss.h"

#include <torch/torch.h>

namespace streetgan {

Result<GanLoss> ganLossNamed(const std::string& name) {
  if (name == "bce") return GanLoss::Bce;
  if (name == "hinge") return GanLoss::Hinge;
  if (name == "rpgan") return GanLoss::RpGan;
  return makeError("config key \"loss\": \"" + name + "\" is not a loss this build has");
}

DiscriminatorLoss discriminatorLoss(GanLoss loss, const at::Tensor& real_logits, const at::Tensor& fake_logits) {
  DiscriminatorLoss out;
  switch (loss) {
    case GanLoss::Bce:
      out.terms = {torch::binary_cross_entropy_with_logits(real_logits, torch::ones_like(real_logits)),
                   torch::binary_cross_entropy_with_logits(fake_logits, torch::zeros_like(fake_logits))};
      break;
    case GanLoss::Hinge:
      out.terms = {torch::relu(1.0 - real_logits).mean(), torch::relu(1.0 + fake_logits).mean()};
      break;
    case GanLoss::RpGan:
      out.terms = {torch::nn::functional::softplus(fake_logits - real_logits).mean()};
      break;
  }
  out.total = out.terms.size() == 1 ? out.terms[0] : out.terms[0] + out.terms[1];
  return out;
}

at::Tensor generatorLoss(GanLoss loss, const at::Tensor& fake_logits, const at::Tensor& real_logits) {
  switch (loss) {
    case GanLoss::Bce:
      return torch::binary_cross_entropy_with_logits(fake_logits, torch::ones_like(fake_logits));
    case GanLoss::Hinge:
      return -fake_logits.mean();
    case GanLoss::RpGan:
      return torch::nn::functional::softplus(real_logits - fake_logits).mean();
  }
  return {};
}

bool generatorLossNeedsReal(GanLoss loss) { return loss == GanLoss::RpGan; }

at::Tensor zeroCentredGradientPenalty(const at::Tensor& logits, const at::Tensor& inputs, double gamma,
                                      const at::Tensor& scale) {
  const at::Tensor summed = scale.defined() ? logits.sum() * scale : logits.sum();
  at::Tensor gradient = torch::autograd::grad({summed}, {inputs}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                              /*create_graph=*/true)[0];
  if (scale.defined()) gradient = gradient / scale;
  return gradient.square().sum({1, 2, 3}).mean() * (gamma / 2);
}

}  // namespace streetgan
