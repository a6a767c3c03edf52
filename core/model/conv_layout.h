#pragma once
// The memory layout each convolution of G and D runs in. On the CPU in float32, oneDNN's kernels
// run convolutions on 16×16 maps and larger faster in channels-last (NHWC) layout, and the small
// 4×4/8×8 ones faster in the default NCHW layout (measured on LibTorch 1.13: bench/README.md). In
// bf16 (autocast), oneDNN's AMX kernels take channels-last only: NCHW maps were reordered on every
// call, and channels-last throughout ran the step 3-9% faster on LibTorch 2.6. On CUDA, cuDNN's
// tensor-core kernels for fp16/bf16 want channels-last throughout, while fp32 stays in NCHW
// (measured in PyTorch's own guidance on memory formats); other devices keep NCHW.
// The math is the same either way; only the order of the floating-point sums changes.
#include <torch/types.h>

namespace streetgan {

/// Whether convolutions in reduced precision (fp16/bf16) on `device` run channels-last throughout:
/// on CUDA and the CPU. Their weights are kept channels-last there too (core/train/dcgan_step.cpp).
inline bool reducedPrecisionRunsChannelsLast(const c10::Device& device) { return device.is_cuda() || device.is_cpu(); }

/// `x` in the layout a convolution from `in_size` to `out_size` pixels (square) runs fastest in.
inline torch::Tensor inConvLayout(const torch::Tensor& x, std::int64_t in_size, std::int64_t out_size) {
  const bool reduced = x.scalar_type() == torch::kBFloat16 || x.scalar_type() == torch::kHalf;
  if (reduced && reducedPrecisionRunsChannelsLast(x.device())) return x.contiguous(torch::MemoryFormat::ChannelsLast);
  if (!x.device().is_cpu()) return x;  // CUDA in float32 keeps NCHW; other devices too
  const bool large = std::max(in_size, out_size) >= 16;
  return x.contiguous(large ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous);
}

}  // namespace streetgan
