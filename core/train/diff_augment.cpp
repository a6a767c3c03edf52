#include "core/train/diff_augment.h"

#include <torch/torch.h>

#include <sstream>

namespace streetgan {
namespace {

namespace F = torch::nn::functional;

// The authors' sizes: a shift of up to ⌊size·1/8 + 0.5⌋, a cutout of ⌊size·1/2 + 0.5⌋.
std::int64_t shiftOf(std::int64_t size) { return static_cast<std::int64_t>(size * 0.125 + 0.5); }
std::int64_t cutoutOf(std::int64_t size) { return static_cast<std::int64_t>(size * 0.5 + 0.5); }

torch::Tensor color(const torch::Tensor& x, const DiffAugmentDraws& d) {
  torch::Tensor y = x + (d.brightness - 0.5);
  const torch::Tensor pixel_mean = y.mean(1, true);
  y = (y - pixel_mean) * (d.saturation * 2) + pixel_mean;
  const torch::Tensor image_mean = y.mean({1, 2, 3}, true);
  return (y - image_mean) * (d.contrast + 0.5) + image_mean;
}

// Output pixel (i, j) is x's (i + tx, j + ty), or 0 beyond the edge: a gather from x padded by
// one zero pixel, the indices clamped onto that border.
torch::Tensor translation(const torch::Tensor& x, const DiffAugmentDraws& d) {
  const std::int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const auto index_options = torch::TensorOptions().dtype(torch::kInt64).device(x.device());
  const torch::Tensor rows = (torch::arange(h, index_options).view({1, h, 1}) + d.translation_x + 1).clamp(0, h + 1);
  const torch::Tensor cols = (torch::arange(w, index_options).view({1, 1, w}) + d.translation_y + 1).clamp(0, w + 1);
  const torch::Tensor index = (rows * (w + 2) + cols).view({b, 1, h * w}).expand({b, c, h * w});
  const torch::Tensor padded = F::pad(x, F::PadFuncOptions({1, 1, 1, 1})).reshape({b, c, (h + 2) * (w + 2)});
  return padded.gather(2, index).view({b, c, h, w});
}

// The square's rows and columns: [centre − size/2, centre − size/2 + size − 1] within the image.
torch::Tensor cutout(const torch::Tensor& x, const DiffAugmentDraws& d) {
  const std::int64_t h = x.size(2), w = x.size(3), ch = cutoutOf(h), cw = cutoutOf(w);
  const auto index_options = torch::TensorOptions().dtype(torch::kInt64).device(x.device());
  const torch::Tensor row = torch::arange(h, index_options).view({1, h, 1});
  const torch::Tensor col = torch::arange(w, index_options).view({1, 1, w});
  const torch::Tensor top = d.cutout_x - ch / 2, left = d.cutout_y - cw / 2;
  const torch::Tensor inside = (row >= top) & (row < top + ch) & (col >= left) & (col < left + cw);
  return x * (~inside).to(x.scalar_type()).unsqueeze(1);
}

torch::Tensor everyNth(const torch::Tensor& t, std::int64_t rank, std::int64_t world, std::int64_t n) {
  if (!t.defined()) return t;
  return t.slice(0, rank, t.size(0), world).narrow(0, 0, n);
}

}  // namespace

std::vector<DiffAugmentPolicy> diffAugmentPoliciesOf(const std::string& text) {
  std::vector<DiffAugmentPolicy> policies;
  std::stringstream parts(text);
  for (std::string name; std::getline(parts, name, ',');) {
    if (name == "color") policies.push_back(DiffAugmentPolicy::Color);
    else if (name == "translation") policies.push_back(DiffAugmentPolicy::Translation);
    else if (name == "cutout") policies.push_back(DiffAugmentPolicy::Cutout);
  }
  return policies;
}

DiffAugmentDraws DiffAugmentDraws::rowsOf(std::int64_t rank, std::int64_t world, std::int64_t n) const {
  DiffAugmentDraws out;
  out.brightness = everyNth(brightness, rank, world, n);
  out.saturation = everyNth(saturation, rank, world, n);
  out.contrast = everyNth(contrast, rank, world, n);
  out.translation_x = everyNth(translation_x, rank, world, n);
  out.translation_y = everyNth(translation_y, rank, world, n);
  out.cutout_x = everyNth(cutout_x, rank, world, n);
  out.cutout_y = everyNth(cutout_y, rank, world, n);
  return out;
}

DiffAugmentDraws drawDiffAugment(const std::vector<DiffAugmentPolicy>& policies, std::int64_t rows, std::int64_t height,
                                 std::int64_t width, at::Generator& generator, const c10::Device& device) {
  DiffAugmentDraws d;
  const auto floats = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  const auto integers = torch::TensorOptions().dtype(torch::kInt64).device(device);
  for (DiffAugmentPolicy policy : policies) {
    if (policy == DiffAugmentPolicy::Color) {
      d.brightness = torch::rand({rows, 1, 1, 1}, generator, floats);
      d.saturation = torch::rand({rows, 1, 1, 1}, generator, floats);
      d.contrast = torch::rand({rows, 1, 1, 1}, generator, floats);
    } else if (policy == DiffAugmentPolicy::Translation) {
      d.translation_x = torch::randint(-shiftOf(height), shiftOf(height) + 1, {rows, 1, 1}, generator, integers);
      d.translation_y = torch::randint(-shiftOf(width), shiftOf(width) + 1, {rows, 1, 1}, generator, integers);
    } else {
      // The centre's range as the authors draw it: [0, size + 1 − size_cut mod 2).
      d.cutout_x = torch::randint(0, height + (1 - cutoutOf(height) % 2), {rows, 1, 1}, generator, integers);
      d.cutout_y = torch::randint(0, width + (1 - cutoutOf(width) % 2), {rows, 1, 1}, generator, integers);
    }
  }
  return d;
}

torch::Tensor applyDiffAugment(const torch::Tensor& x, const std::vector<DiffAugmentPolicy>& policies,
                               const DiffAugmentDraws& draws) {
  torch::Tensor y = x;
  const auto as_x = [&](const torch::Tensor& t) { return t.to(x.scalar_type()); };
  DiffAugmentDraws typed = draws;
  if (typed.brightness.defined()) {
    typed.brightness = as_x(typed.brightness);
    typed.saturation = as_x(typed.saturation);
    typed.contrast = as_x(typed.contrast);
  }
  for (DiffAugmentPolicy policy : policies) {
    if (policy == DiffAugmentPolicy::Color) y = color(y, typed);
    else if (policy == DiffAugmentPolicy::Translation) y = translation(y, typed);
    else y = cutout(y, typed);
  }
  return y.contiguous(x.suggest_memory_format());
}

}  // namespace streetgan
