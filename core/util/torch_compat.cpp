#include "core/util/torch_compat.h"

#include <ATen/autocast_mode.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <torch/version.h>

#include <sstream>
#include <stdexcept>
#include <string>

#define STREETGAN_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace streetgan::torch_compat {
namespace {

bool hasAmpKernels(const c10::Device& device) {
#if STREETGAN_TORCH_AT_LEAST(2, 3)
  return device.is_cuda() || device.is_cpu();
#else
  return device.is_cuda();
#endif
}

}  // namespace

namespace {

// Where the options have the field (2.2 and later), switch libuv off; else nothing to do.
template <class Options>
auto switchOffLibuv(Options& options, int) -> decltype(options.useLibUV = false, void()) {
  options.useLibUV = false;
}
template <class Options>
void switchOffLibuv(Options&, long) {}

}  // namespace

void usePlainTcpStore(c10d::TCPStoreOptions& options) { switchOffLibuv(options, 0); }

void setAutocast(c10::DeviceType device_type, bool enabled, c10::ScalarType dtype) {
  // LibTorch 2.4 replaced the per-device autocast setters with ones taking a device type.
#if STREETGAN_TORCH_AT_LEAST(2, 4)
  if (enabled) at::autocast::set_autocast_dtype(device_type, dtype);
  at::autocast::set_autocast_enabled(device_type, enabled);
#else
  if (device_type != c10::DeviceType::CPU && device_type != c10::DeviceType::CUDA)
    throw std::invalid_argument("autocast before LibTorch 2.4: only the CPU and CUDA");
  if (device_type == c10::DeviceType::CUDA) {
    if (enabled) at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    if (enabled) at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

void clearAutocastCache() { at::autocast::clear_cache(); }

namespace {

// A template, so that only the branch of the linked LibTorch's key type is instantiated.
template <typename Key>
Key stateKeyOf(c10::TensorImpl* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;  // what c10::guts::to_string of the pointer gives
    key << impl;
    return key.str();
  } else {
    return static_cast<Key>(impl);
  }
}

}  // namespace

OptimizerStateKey optimizerStateKey(const at::Tensor& param) {
  return stateKeyOf<OptimizerStateKey>(param.unsafeGetTensorImpl());
}

void ampUnscaleAndCheck(const std::vector<at::Tensor>& grads, at::Tensor& found_inf,
                        const at::Tensor& inv_scale) {
  if (grads.empty()) return;
  if (hasAmpKernels(grads.front().device())) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
    return;
  }
  // The same arithmetic as the kernel, one tensor at a time, still without a host round trip.
  for (const auto& grad : grads) {
    at::Tensor g = grad;
    g.mul_(inv_scale);
    found_inf.copy_(at::maximum(found_inf, g.isfinite().all().logical_not().to(found_inf.scalar_type()).view_as(found_inf)));
  }
}

void ampUpdateScale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                    double growth_factor, double backoff_factor, std::int64_t growth_interval) {
  if (hasAmpKernels(scale.device())) {
    at::_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                           growth_interval);
    return;
  }
  // What the kernel does: on overflow back off and restart the count; otherwise count, and grow
  // once the count reaches the interval.
  const at::Tensor overflow = found_inf.view_as(scale) > 0;
  const at::Tensor counted = growth_tracker + 1;
  const at::Tensor grow = counted.view_as(scale) >= growth_interval;
  scale.copy_(at::where(overflow, scale * backoff_factor, at::where(grow, scale * growth_factor, scale)));
  growth_tracker.copy_(at::where(overflow.view_as(growth_tracker) | grow.view_as(growth_tracker),
                                 at::zeros_like(growth_tracker), counted));
}

bool cpuThreadsMayGiveNan() {
  // Seen with 2.6 built against the system oneDNN 3.7; 1.13 trains without it.
  return STREETGAN_TORCH_AT_LEAST(2, 0);
}

bool hasFusedAdamW(const c10::Device& device) {
#if STREETGAN_TORCH_AT_LEAST(2, 4)
  return device.is_cuda() || device.is_cpu();
#elif STREETGAN_TORCH_AT_LEAST(2, 0)
  return device.is_cuda();
#else
  (void)device;
  return false;
#endif
}

void fusedAdamW(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                const std::vector<at::Tensor>& exp_avgs, const std::vector<at::Tensor>& exp_avg_sqs,
                const std::vector<at::Tensor>& steps, const FusedAdamWArgs& args,
                const std::optional<at::Tensor>& found_inf) {
#if STREETGAN_TORCH_AT_LEAST(2, 0)
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, args.lr,
                    args.beta1, args.beta2, args.weight_decay, args.eps, /*amsgrad=*/false,
                    /*maximize=*/false, /*grad_scale=*/std::nullopt, found_inf);
#else
  (void)params, (void)grads, (void)exp_avgs, (void)exp_avg_sqs, (void)steps, (void)args, (void)found_inf;
  throw std::logic_error("fusedAdamW: this LibTorch has no fused AdamW kernel (check hasFusedAdamW first)");
#endif
}

}  // namespace streetgan::torch_compat
