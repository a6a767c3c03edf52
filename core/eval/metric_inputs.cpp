#include "core/eval/metric_inputs.h"

#include "core/util/finite_values.h"

#include <torch/torch.h>

#include <algorithm>
#include <sstream>

namespace streetgan {

std::string MetricInputs::shapeText(const torch::Tensor& images) {
  return std::to_string(images.size(1)) + "x" + std::to_string(images.size(2)) + "x" + std::to_string(images.size(3));
}

std::string MetricInputs::number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

Status MetricInputs::checkImages(const torch::Tensor& images, const std::string& name, const std::string& metric) {
  const std::string prefix = metric + ": ";
  if (!images.defined()) return makeError(prefix + "the " + name + " are missing");
  if (images.dim() != 4)
    return makeError(prefix + "the " + name + " must be a batch of images (N, C, H, W), got " +
                     std::to_string(images.dim()) + " dimensions");
  if (!images.is_floating_point()) return makeError(prefix + "the " + name + " must be floating point");
  if (images.size(0) == 0) return makeError(prefix + "there are no " + name);
  if (images.size(1) == 0 || images.size(2) == 0 || images.size(3) == 0)
    return makeError(prefix + "the " + name + " are empty (" + shapeText(images) + ")");
  return {};
}

Status MetricInputs::checkRows(const torch::Tensor& rows, const std::string& name, const std::string& metric,
                               const std::string& row_meaning) {
  const std::string prefix = metric + ": ";
  if (!rows.defined()) return makeError(prefix + "the " + name + " are missing");
  if (rows.dim() != 2)
    return makeError(prefix + "the " + name + " must be a matrix (" + row_meaning + "), got " +
                     std::to_string(rows.dim()) + " dimensions");
  if (!rows.is_floating_point()) return makeError(prefix + "the " + name + " must be floating point");
  if (rows.size(0) == 0) return makeError(prefix + "there are no " + name);
  if (rows.size(1) == 0) return makeError(prefix + "the " + name + " have zero columns");
  if (!allFinite(rows)) return makeError(prefix + "the " + name + " contain NaN or Inf values");
  return {};
}

}  // namespace streetgan
