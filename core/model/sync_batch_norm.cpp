#include "core/model/sync_batch_norm.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace streetgan {
namespace {

// The sum over the processes as an autograd node: every process's loss depends on the sum of
// all of them, so the gradient reaching one process's share is the sum of every process's
// gradient of it (an all-reduce in backward too).
class SumOverProcesses : public torch::autograd::Function<SumOverProcesses> {
public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor local, const BatchStatsSum* sum) {
    ctx->saved_data["sum"] = reinterpret_cast<std::int64_t>(sum);
    torch::Tensor total = local.clone();
    (*sum)(total);
    return total;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto* sum = reinterpret_cast<const BatchStatsSum*>(ctx->saved_data["sum"].toInt());
    torch::Tensor total = grads[0].contiguous().clone();
    (*sum)(total);
    return {total, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor syncBatchNorm(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& layer, const BatchStatsSum& sum) {
  const auto channels = x.size(1);
  // Statistics in float32 even under autocast, two passes (mean, then squared deviations) so
  // the variance keeps its precision when the mean is large.
  const torch::Tensor xf = x.to(torch::kFloat32);
  const std::vector<std::int64_t> dims{0, 2, 3};
  // One sum over the processes for the channel sums and the image count (a rank may have
  // fewer images when files were skipped); the count gets no gradient.
  const double local_count = static_cast<double>(x.numel() / std::max<std::int64_t>(channels, 1));
  const torch::Tensor first = SumOverProcesses::apply(
      torch::cat({xf.sum(dims), torch::full({1}, local_count, xf.options())}), &sum);
  const torch::Tensor n = first.narrow(0, channels, 1).detach();
  const torch::Tensor mean = first.narrow(0, 0, channels) / n;
  const torch::Tensor centered = xf - mean.view({1, channels, 1, 1});
  const torch::Tensor var = SumOverProcesses::apply(centered.pow(2).sum(dims), &sum) / n;
  const double eps = layer.options.eps();
  torch::Tensor y = centered * torch::rsqrt(var + eps).view({1, channels, 1, 1});
  if (layer.options.affine())
    y = y * layer.weight.view({1, channels, 1, 1}) + layer.bias.view({1, channels, 1, 1});
  if (layer.options.track_running_stats()) {
    torch::NoGradGuard no_grad;
    const double momentum = layer.options.momentum().value_or(0.1);
    layer.running_mean.mul_(1 - momentum).add_(mean.detach(), momentum);
    layer.running_var.mul_(1 - momentum).add_(var.detach() * n / (n - 1).clamp_min(1), momentum);
    layer.num_batches_tracked.add_(1);
  }
  return y.to(x.scalar_type());
}

}  // namespace streetgan
