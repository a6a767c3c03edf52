#pragma once
// The adversarial losses of config key `loss` (docs/model.md), on D's logits:
//   bce    the original DCGAN recipe (Radford et al. 2016): D minimises BCE(D(x), 1) + BCE(D(G(z)), 0),
//          G minimises BCE(D(G(z)), 1) (the non-saturating loss);
//   hinge  SNGAN's (Miyato et al. 2018): D minimises mean(relu(1 − D(x))) + mean(relu(1 + D(G(z)))),
//          G minimises −mean(D(G(z)));
//   rpgan  the relativistic pairing loss as R3GAN uses it (Huang et al. 2024): D minimises
//          mean(softplus(D(G(z)) − D(x))), G minimises mean(softplus(D(x) − D(G(z)))), image by image.
// Each loss is a mean over the batch; D's loss comes as the terms the step backpropagates one after
// the other (the real and the generated batch for bce and hinge, so that bce's gradients are
// summed exactly as the original recipe sums them), and their sum.
#include "core/util/result.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace streetgan {

enum class GanLoss { Bce, Hinge, RpGan };

/// The loss config key `loss` names (its allowed names live in the key table, which refuses any
/// other first).
Result<GanLoss> ganLossNamed(const std::string& name);

/// D's loss on its logits for the real batch and for the generated one (the same batch size).
struct DiscriminatorLoss {
  std::vector<at::Tensor> terms;  ///< backpropagated one after the other
  at::Tensor total;               ///< their sum: the `loss_d` of a step event
};
DiscriminatorLoss discriminatorLoss(GanLoss loss, const at::Tensor& real_logits, const at::Tensor& fake_logits);

/// G's loss on D's logits for the generated batch; `real_logits` (D on the real batch, without a
/// gradient) only for rpgan, which pairs each generated image with a real one.
at::Tensor generatorLoss(GanLoss loss, const at::Tensor& fake_logits, const at::Tensor& real_logits);

/// Whether G's loss needs D's logits on the real batch (one more forward pass of D).
bool generatorLossNeedsReal(GanLoss loss);

/// The zero-centred gradient penalty γ/2 · mean over the batch of ‖∇ D(x)‖² (R1 on real images,
/// R2 on generated ones: Mescheder et al. 2018; R3GAN), where `logits` = D(`inputs`) and `inputs`
/// requires a gradient. Its graph is kept (create_graph), so that its backward reaches D's
/// parameters. `scale`: the loss scale D's logits ran under in fp16 (undefined: none); the input
/// gradient is taken of the scaled logits and unscaled, so that it does not underflow.
at::Tensor zeroCentredGradientPenalty(const at::Tensor& logits, const at::Tensor& inputs, double gamma,
                                      const at::Tensor& scale = {});

}  // namespace streetgan
