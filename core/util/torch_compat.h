#pragma once
// The one place where LibTorch versions differ for us. Core code compiles against Debian
// bookworm's LibTorch 1.13 and against 2.x (trixie's 2.6 for the check in
// packaging/check-libtorch2.sh, CUDA builds of PyTorch 2.x on GPU hosts); every API or kernel that
// differs between them is wrapped here, and the `#if TORCH_VERSION_*` tests live only in
// torch_compat.cpp. The callers see one API; each wrapper picks what the linked LibTorch has for
// the tensors' device, falling back to plain tensor ops that compute the same values. None of
// them copies anything to the host. The one type that differs (CollectiveBackend) is the only
// version test outside torch_compat.cpp.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace c10d {
class ProcessGroup;
class Backend;
struct TCPStoreOptions;
}  // namespace c10d

namespace streetgan::torch_compat {

/// The class c10d's collectives (allreduce, broadcast, ...) are called on, and the base of
/// ProcessGroupGloo and ProcessGroupNCCL: c10d::ProcessGroup in 1.13; from 2.0 ProcessGroup
/// dispatches to per-device c10d::Backend objects and the concrete groups derive from Backend.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

/// Switches LibTorch's autocast (mixed precision) on or off for one device type, on the calling
/// thread. `dtype` (kHalf or kBFloat16) is what autocast computes in; it is set only when
/// enabling. LibTorch 2.4 replaced the per-device setters (set_cpu_enabled,
/// set_autocast_gpu_dtype, ...) with ones taking a device type; before 2.4 only the CPU and CUDA
/// exist, and another type throws std::invalid_argument.
void setAutocast(c10::DeviceType device_type, bool enabled,
                 c10::ScalarType dtype = c10::ScalarType::Float);

/// Makes a c10d TCPStore use its plain socket server. From 2.4 LibTorch asks for the libuv one
/// by default, and builds without libuv (Debian trixie's 2.6) then refuse to create a store
/// ("use_libuv was requested but PyTorch was build without libuv support"); 1.13 has only the
/// plain one. The libuv server only matters for thousands of ranks.
void usePlainTcpStore(c10d::TCPStoreOptions& options);

/// Frees the casted weights autocast keeps while it is on; call after switching it off.
void clearAutocastCache();

/// The key torch::optim keeps a parameter's state under: the address of its TensorImpl, as a
/// string in 1.13 and as the pointer itself in 2.x.
using OptimizerStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
OptimizerStateKey optimizerStateKey(const at::Tensor& param);

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

/// Whether this LibTorch may be one whose CPU convolutions (oneDNN) return NaN gradients with
/// more than one thread, as Debian trixie's 2.6 did on one machine and not on another
/// (packaging/libtorch2-nan-repro.py, PyTorch alone): 2.x. Only used to add advice to the message
/// of a run whose losses stopped being finite.
bool cpuThreadsMayGiveNan();

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

}  // namespace streetgan::torch_compat
