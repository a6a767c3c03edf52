#pragma once
// MetricInputs: the checks the quality metrics make of their inputs before any work, every error
// beginning with the metric's name ("memorisation: the samples contain NaN or Inf values").
// Images are (N, C, H, W) floating-point tensors, rows (N, D); NaN and Inf are looked for in
// bounded pieces, so a large input is never copied whole for the check.
#include "core/util/result.h"

#include <torch/types.h>

#include <string>

namespace streetgan {

class MetricInputs {
public:
  /// A non-empty floating-point batch of images.
  static Status checkImages(const torch::Tensor& images, const std::string& name, const std::string& metric);
  /// A non-empty floating-point matrix of finite values; `row_meaning` says what a row is
  /// ("one row each").
  static Status checkRows(const torch::Tensor& rows, const std::string& name, const std::string& metric,
                          const std::string& row_meaning);
  /// "3x64x64": an image batch's channels, height and width.
  static std::string shapeText(const torch::Tensor& images);
  /// A number as a person reads it (shortest form).
  static std::string number(double value);
};

}  // namespace streetgan
