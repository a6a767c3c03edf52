#pragma once
// PixelPcaFeatures: the feature space the quality metrics use when no network is given. Images
// are averaged down to size × size pixels (32 by default) and projected on the first principal
// components (256 by default) of the training images at that size: a space of our own, fitted
// on each data set, in which FID, KID and precision/recall are comparable between our runs on
// the same data, never with figures of papers (which use Inception's features).
// The fit is float64 (the covariance and its symmetric eigendecomposition); the object holds
// the mean row and the components and is cheap to copy. Bad input comes back as an Error.
#include "core/util/result.h"

#include <torch/types.h>

#include <cstdint>

namespace streetgan {

struct PixelPcaOptions {
  int size = 32;         ///< images are averaged down to size × size
  int components = 256;  ///< principal components kept (at most the rows' dimension)
};

class PixelPcaFeatures {
public:
  /// Fits on `train_images` (N, C, H, W) in [-1, 1]: at least 2 images, at least size × size
  /// pixels, and components ≤ C·size².
  static Result<PixelPcaFeatures> fit(const torch::Tensor& train_images, const PixelPcaOptions& options = {});

  /// The features of `images` (n, C, H, W): (n, components) float64.
  Result<torch::Tensor> transform(const torch::Tensor& images) const;

  /// Lower-bound rows for NearestNeighbourSearch::searchBounded: each row's features with the
  /// norm of what the components leave out appended, (n, components + 1) float64, so that
  /// ‖E(x) − E(y)‖ ≤ ‖x − y‖ for pixel rows x, y. `rows` are the images' rows at size() (float32
  /// or float64, as downsampledRows gives them), `features` transform()'s rows for the same
  /// images. An Error when the components are not orthonormal to 1e-9 (a near-degenerate fit:
  /// the bound would not hold) or the shapes do not match.
  Result<torch::Tensor> boundRows(const torch::Tensor& rows, const torch::Tensor& features) const;

  /// Rows at `size` × size (NearestNeighbourSearch::downsampledRows), as float64.
  static torch::Tensor pixelRows(const torch::Tensor& images, int size);

  const torch::Tensor& mean() const { return mean_; }              ///< (d,) float64
  const torch::Tensor& components() const { return components_; }  ///< (d, components) float64, by variance
  const torch::Tensor& variances() const { return variances_; }    ///< (components,) eigenvalues, descending
  int size() const { return size_; }

private:
  torch::Tensor mean_, components_, variances_;
  int size_ = 32;
};

}  // namespace streetgan
