#pragma once
// squaredRowNorms: ‖row‖² of each row of a CPU matrix, in float64, in one parallel pass (never a
// float64 copy of the whole matrix). A float or double row is summed on one thread in a fixed
// order, so its norm is the same bits on any number of threads; other types go through LibTorch, a
// chunk of rows at a time. A row holding NaN or Inf gets a NaN or Inf norm, so the norms also
// check the values.
#include <torch/types.h>

namespace streetgan {

/// (rows,) float64 norms² of a (rows, cols) CPU matrix of any floating type.
torch::Tensor squaredRowNorms(const torch::Tensor& rows);

}  // namespace streetgan
