#pragma once
// allFinite: whether a tensor holds no NaN or Inf. On a contiguous CPU float or double tensor it
// reads the values once on LibTorch's threads (their exponent bits); torch::isfinite(t).all()
// first writes a bool tensor of the input's size, a third of a second for 10,000 images of 64 px,
// and the quality suite checks its inputs several times. Any other tensor goes to LibTorch, a slice
// of rows at a time (its bool tensor stays at most 16 Mi values).
#include <torch/types.h>

namespace streetgan {

/// Whether every value of `t` is finite (integer and bool tensors always are; an undefined or
/// empty tensor is).
bool allFinite(const torch::Tensor& t);

}  // namespace streetgan
