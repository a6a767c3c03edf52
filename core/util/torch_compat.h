#pragma once
// The one place where LibTorch versions differ for us (Debian's 1.13 CPU build, 2.x with CUDA on
// GPU hosts, trixie's 2.6 for the check in packaging/check-libtorch2.sh). Everything here is a
// thin wrapper: the callers see one API, and each wrapper picks the ATen kernel the linked
// LibTorch has for the tensors' device, falling back to plain tensor ops that compute the same
// values. None of them copies anything to the host.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <optional>
#include <vector>

namespace streetgan {

/// Multiplies every gradient in `grads` by `inv_scale` (a one-element float tensor on their
/// device) and sets `found_inf` (one-element float, same device) to 1 if any value is Inf/NaN
/// (it is never cleared here). ATen's fused kernel where the LibTorch has one for the device
/// (CUDA always; the CPU from 2.3), else per-tensor ops.
void ampUnscaleAndCheck(const std::vector<at::Tensor>& grads, at::Tensor& found_inf,
                        const at::Tensor& inv_scale);

/// GradScaler's scale update on the device: halves `scale` (backoff) when `found_inf` is
/// non-zero and resets `growth_tracker`, else counts a clean step and grows the scale after
/// `growth_interval` of them. ATen's `_amp_update_scale_` where available, else tensor ops.
void ampUpdateScale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                    double growth_factor, double backoff_factor, std::int64_t growth_interval);

/// True when this LibTorch has a fused AdamW kernel (`_fused_adamw_`) for `device`: CUDA from
/// 2.0, the CPU from 2.4.
bool hasFusedAdamW(const c10::Device& device);

struct FusedAdamWArgs {
  double lr, beta1, beta2, weight_decay, eps;
};

/// One fused AdamW update over all tensors at once. `steps` are float tensors on the device,
/// already incremented for this step; with `found_inf` non-zero the kernel leaves everything
/// unchanged (the caller takes the increment back). Only when hasFusedAdamW(device).
void fusedAdamW(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                const std::vector<at::Tensor>& exp_avgs, const std::vector<at::Tensor>& exp_avg_sqs,
                const std::vector<at::Tensor>& steps, const FusedAdamWArgs& args,
                const std::optional<at::Tensor>& found_inf);

}  // namespace streetgan
