#include "core/util/row_norms.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>

namespace streetgan {
namespace {

constexpr std::int64_t kRowChunk = 8192;  // rows per norm chunk (types other than float and double)

template <class T>
void squaredNormsOf(const T* data, std::int64_t cols, double* out, std::int64_t rows) {
  at::parallel_for(0, rows, 256, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r) {
      const T* x = data + r * cols;
      double s[4] = {0, 0, 0, 0};  // four sums: independent additions the compiler can overlap
      std::int64_t j = 0;
      for (; j + 4 <= cols; j += 4)
        for (int u = 0; u < 4; ++u) s[u] += static_cast<double>(x[j + u]) * static_cast<double>(x[j + u]);
      for (; j < cols; ++j) s[0] += static_cast<double>(x[j]) * static_cast<double>(x[j]);
      out[r] = (s[0] + s[1]) + (s[2] + s[3]);
    }
  });
}

template <class T>
void squaredDistancesOf(const T* data, std::int64_t cols, const double* point, std::int64_t rows, double* out,
                        bool keep_smaller) {
  at::parallel_for(0, rows, 256, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r) {
      const double distance = squaredDistanceOf(data + r * cols, point, cols);
      out[r] = keep_smaller ? std::min(out[r], distance) : distance;
    }
  });
}

}  // namespace

torch::Tensor squaredRowDistances(const torch::Tensor& rows, const torch::Tensor& point, torch::Tensor nearest_so_far) {
  TORCH_CHECK(rows.is_cpu() && point.is_cpu() && rows.layout() == torch::kStrided && point.layout() == torch::kStrided,
              "squaredRowDistances: CPU tensors");
  TORCH_CHECK(rows.dim() == 2 && rows.is_contiguous() && point.is_contiguous() && point.numel() == rows.size(1) &&
                  point.scalar_type() == torch::kFloat64,
              "squaredRowDistances: a contiguous matrix and a float64 point of its width");
  const bool keep_smaller = nearest_so_far.defined();
  torch::Tensor out = keep_smaller ? nearest_so_far : torch::empty({rows.size(0)}, torch::kFloat64);
  TORCH_CHECK(out.is_cpu() && out.is_contiguous() && out.scalar_type() == torch::kFloat64 &&
                  out.numel() == rows.size(0),
              "squaredRowDistances: the nearest distances so far must be float64, one per row");
  if (rows.scalar_type() == torch::kFloat32)
    squaredDistancesOf(rows.data_ptr<float>(), rows.size(1), point.data_ptr<double>(), rows.size(0),
                       out.data_ptr<double>(), keep_smaller);
  else if (rows.scalar_type() == torch::kFloat64)
    squaredDistancesOf(rows.data_ptr<double>(), rows.size(1), point.data_ptr<double>(), rows.size(0),
                       out.data_ptr<double>(), keep_smaller);
  else
    TORCH_CHECK(false, "squaredRowDistances: float or double rows");
  return out;
}

torch::Tensor squaredRowNorms(const torch::Tensor& rows) {
  torch::Tensor out = torch::empty({rows.size(0)}, torch::kFloat64);
  const torch::Tensor x = rows.is_contiguous() ? rows : rows.contiguous();
  if (x.scalar_type() == torch::kFloat32) {
    squaredNormsOf(x.data_ptr<float>(), x.size(1), out.data_ptr<double>(), x.size(0));
  } else if (x.scalar_type() == torch::kFloat64) {
    squaredNormsOf(x.data_ptr<double>(), x.size(1), out.data_ptr<double>(), x.size(0));
  } else {
    for (std::int64_t i = 0; i < x.size(0); i += kRowChunk) {
      const std::int64_t b = std::min(kRowChunk, x.size(0) - i);
      out.narrow(0, i, b).copy_(x.narrow(0, i, b).to(torch::kFloat64).pow(2).sum(1));
    }
  }
  return out;
}

}  // namespace streetgan
