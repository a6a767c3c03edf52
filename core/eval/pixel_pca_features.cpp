#include "core/eval/pixel_pca_features.h"

#include "core/eval/nearest_neighbour_search.h"
#include "core/util/finite_values.h"
#include "core/util/symmetric_eigen.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <vector>

namespace streetgan {
namespace {

Status checkPcaImages(const torch::Tensor& images, const char* name) {
  if (!images.defined() || images.dim() != 4)
    return makeError(std::string("the ") + name + " must be a batch of images (N, channels, height, width)");
  if (images.size(0) == 0) return makeError(std::string("there are no ") + name);
  if (!allFinite(images))
    return makeError(std::string("the ") + name + " contain NaN or Inf values");
  return {};
}

// a · b with a's rows in blocks on LibTorch's threads, each block's rows written in place.
torch::Tensor rowParallelMm(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor out = torch::empty({a.size(0), b.size(1)}, a.options());
  constexpr std::int64_t kRows = 1024;
  at::parallel_for(0, (a.size(0) + kRows - 1) / kRows, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t t = lo; t < hi; ++t) {
      const std::int64_t begin = t * kRows, count = std::min(kRows, a.size(0) - begin);
      torch::Tensor part = out.narrow(0, begin, count);
      torch::mm_out(part, a.narrow(0, begin, count), b);
    }
  });
  return out;
}

}  // namespace

torch::Tensor PixelPcaFeatures::pixelRows(const torch::Tensor& images, int size) {
  return NearestNeighbourSearch::downsampledRows(images, size).to(torch::kFloat64);
}

Result<PixelPcaFeatures> PixelPcaFeatures::fit(const torch::Tensor& train_images, const PixelPcaOptions& options) {
  if (options.size < 1 || options.size > 256) return makeError("pixel features: the size must be 1 to 256 pixels");
  if (Status s = checkPcaImages(train_images, "training images"); !s) return makeError("pixel features: " + s.error());
  if (train_images.size(2) < options.size || train_images.size(3) < options.size)
    return makeError("pixel features: the training images (" + std::to_string(train_images.size(3)) + "x" +
                     std::to_string(train_images.size(2)) + ") are smaller than " + std::to_string(options.size) +
                     "x" + std::to_string(options.size));
  if (train_images.size(0) < 2)
    return makeError("pixel features: needs at least 2 training images, got " + std::to_string(train_images.size(0)));
  const std::int64_t dimensions = train_images.size(1) * options.size * options.size;
  if (options.components < 1 || options.components > dimensions)
    return makeError("pixel features: components must be 1 to " + std::to_string(dimensions) + ", got " +
                     std::to_string(options.components));
  try {
    PixelPcaFeatures features;
    features.size_ = options.size;
    const torch::Tensor rows = pixelRows(train_images, options.size);
    features.mean_ = rows.mean(0);
    const torch::Tensor centred = rows - features.mean_;
    const std::int64_t n = rows.size(0), d = rows.size(1);
    const double scale = 1.0 / static_cast<double>(n - 1);
    if (n < d) {
      // Fewer images than pixels: the n × n Gram matrix has the same non-zero spectrum as the
      // d × d covariance, and component k is Xᵀu_k / √((n − 1)λ_k) (far less work at n = 1,000).
      const std::int64_t keep = std::min<std::int64_t>(options.components, n);
      auto pairs = SymmetricEigen::largest(SymmetricEigen::gram(centred.t()).mul_(scale), keep);
      if (!pairs) return makeError("pixel features: " + pairs.error());
      const torch::Tensor top_values = pairs->values.clamp_min(0);
      const torch::Tensor& top_vectors = pairs->vectors;
      const torch::Tensor norms = (top_values / scale).sqrt();
      features.components_ = (torch::mm(centred.t(), top_vectors) / torch::where(norms > 0, norms, torch::ones_like(norms)))
                                 .contiguous();
      features.variances_ = top_values.contiguous();
      if (keep < options.components) {  // beyond the data's rank: no variance, any direction is as good
        features.components_ = torch::cat({features.components_, torch::zeros({d, options.components - keep}, torch::kFloat64)}, 1);
        features.variances_ = torch::cat({features.variances_, torch::zeros({options.components - keep}, torch::kFloat64)});
      }
      return features;
    }
    auto pairs = SymmetricEigen::largest(SymmetricEigen::gram(centred).mul_(scale), options.components);
    if (!pairs) return makeError("pixel features: " + pairs.error());
    features.variances_ = pairs->values;
    features.components_ = pairs->vectors;
    return features;
  } catch (const c10::Error& e) {
    return makeError(std::string("pixel features: ") + e.what_without_backtrace());
  }
}

Result<torch::Tensor> PixelPcaFeatures::transform(const torch::Tensor& images) const {
  if (Status s = checkPcaImages(images, "images"); !s) return makeError("pixel features: " + s.error());
  if (images.size(1) * size_ * size_ != mean_.size(0))
    return makeError("pixel features: the images have " + std::to_string(images.size(1)) +
                     " channels; the features were fitted on " + std::to_string(mean_.size(0) / (size_ * size_)));
  if (images.size(2) < size_ || images.size(3) < size_)
    return makeError("pixel features: the images are smaller than " + std::to_string(size_) + "x" + std::to_string(size_));
  try {
    return rowParallelMm(pixelRows(images, size_) - mean_, components_);
  } catch (const c10::Error& e) {
    return makeError(std::string("pixel features: ") + e.what_without_backtrace());
  }
}

Result<torch::Tensor> PixelPcaFeatures::boundRows(const torch::Tensor& rows, const torch::Tensor& features) const {
  const std::int64_t d = mean_.size(0), k = components_.size(1);
  if (!rows.defined() || rows.dim() != 2 || rows.size(1) != d || !features.defined() || features.dim() != 2 ||
      features.size(1) != k || features.size(0) != rows.size(0))
    return makeError("pixel features: bound rows need " + std::to_string(d) + " pixel values and " +
                     std::to_string(k) + " features per row, one features row per pixel row");
  try {
    torch::NoGradGuard no_grad;
    // Unit or zero columns (zeros stand beyond the data's rank), orthogonal to each other.
    const torch::Tensor gram = torch::mm(components_.t(), components_);
    const torch::Tensor unit = (gram.diagonal() > 0.5).to(torch::kFloat64);
    if ((gram - torch::diag(unit)).abs().max().item<double>() > 1e-9)
      return makeError("pixel features: the components are not orthonormal (a near-degenerate fit); no bound rows");
    // ‖x − mean‖² in float64, row by row; less ‖features‖² it is the part the components leave out.
    const torch::Tensor x = rows.to(torch::kFloat64).contiguous();
    const double* m = mean_.data_ptr<double>();
    torch::Tensor centred_sq = torch::empty({x.size(0)}, torch::kFloat64);
    const double* data = x.data_ptr<double>();
    double* out = centred_sq.data_ptr<double>();
    at::parallel_for(0, x.size(0), 256, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t r = lo; r < hi; ++r) {
        double sum = 0;
        for (std::int64_t j = 0; j < d; ++j) sum += (data[r * d + j] - m[j]) * (data[r * d + j] - m[j]);
        out[r] = sum;
      }
    });
    const torch::Tensor rest = (centred_sq - features.to(torch::kFloat64).square().sum(1)).clamp_min(0).sqrt();
    return torch::cat({features.to(torch::kFloat64), rest.unsqueeze(1)}, 1);
  } catch (const c10::Error& e) {
    return makeError(std::string("pixel features: ") + e.what_without_backtrace());
  }
}

}  // namespace streetgan
