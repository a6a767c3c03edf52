#include "core/eval/ms_ssim.h"

#include "core/eval/gaussian_window.h"
#include "core/util/finite_values.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

namespace streetgan {
namespace {

constexpr double kWeights[MsSsim::kMaxScales] = {0.0448, 0.2856, 0.3001, 0.2363, 0.1333};
static_assert(MsSsim::kWindow == GaussianWindow::kTaps, "MS-SSIM's window is GaussianWindow's");
constexpr double kC1 = 0.01 * 0.01;  // (K1·L)², L = 1
constexpr double kC2 = 0.03 * 0.03;  // (K2·L)²
constexpr std::int64_t kBlock = 64;  // pairs at a time (64 px: about 25 MB of filtered maps)
constexpr std::int64_t kMaxPairs = std::int64_t(1) << 27;

std::string shape(const torch::Tensor& t) {
  std::string out = "(";
  for (std::int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
  return out + ")";
}

Status checkSsimImages(const torch::Tensor& t, const std::string& name) {
  if (!t.defined() || t.dim() != 4)
    return makeError("MS-SSIM: " + name + " must be images (N, C, H, W), got " +
                     (t.defined() ? std::to_string(t.dim()) + " dimensions" : std::string("no tensor")));
  if (t.size(0) == 0) return makeError("MS-SSIM: " + name + " are empty");
  if (t.size(1) == 0) return makeError("MS-SSIM: " + name + " have no channels");
  if (!t.is_floating_point()) return makeError("MS-SSIM: " + name + " must hold floating-point pixels");
  if (t.size(2) < MsSsim::kWindow || t.size(3) < MsSsim::kWindow)
    return makeError("MS-SSIM: " + name + " are " + std::to_string(t.size(3)) + "x" + std::to_string(t.size(2)) +
                     " px, below the 11 px window");
  if (!allFinite(t)) return makeError("MS-SSIM: " + name + " contain NaN or Inf values");
  return {};
}

// The scale count to use for images of this size: `requested`, or the most when it is 0.
Result<int> resolveScales(int requested, std::int64_t height, std::int64_t width) {
  if (requested == 0) return MsSsim::scalesFor(height, width);
  if (requested < 1 || requested > MsSsim::kMaxScales)
    return makeError("MS-SSIM: the number of scales must be between 1 and 5 (or 0: the most), got " +
                     std::to_string(requested));
  if (std::min(height, width) < MsSsim::minimumSize(requested))
    return makeError("MS-SSIM: " + std::to_string(requested) + " scales need images of at least " +
                     std::to_string(MsSsim::minimumSize(requested)) + " px, got " +
                     std::to_string(std::min(height, width)) + " px");
  return requested;
}

// 2×2 average; an odd side first repeats its last row or column.
torch::Tensor downsample(const torch::Tensor& x) {
  const std::int64_t pad_h = x.size(2) % 2, pad_w = x.size(3) % 2;
  const torch::Tensor p = (pad_h || pad_w) ? torch::replication_pad2d(x, {0, pad_w, 0, pad_h}) : x;
  const std::int64_t h = p.size(2), w = p.size(3);
  const torch::Tensor top = p.slice(2, 0, h, 2), bottom = p.slice(2, 1, h, 2);
  return (top.slice(3, 0, w, 2) + top.slice(3, 1, w, 2) + bottom.slice(3, 0, w, 2) + bottom.slice(3, 1, w, 2)) * 0.25;
}

// Per pair and channel, (B, C) each: the mean over the map of cs, and of luminance·cs, from the
// window's means of x, y, xy and x² + y².
std::pair<torch::Tensor, torch::Tensor> termsFromMeans(const torch::Tensor& mu_x, const torch::Tensor& mu_y, const torch::Tensor& xy,
                                                       const torch::Tensor& squares) {
  const torch::Tensor num0 = mu_x * mu_y * 2.0, den0 = mu_x.square() + mu_y.square();
  const torch::Tensor luminance = (num0 + kC1) / (den0 + kC1);
  const torch::Tensor cs = (xy * 2.0 - num0 + kC2) / (squares - den0 + kC2);
  const std::vector<std::int64_t> map{2, 3};
  return {cs.mean(map), (luminance * cs).mean(map)};
}

std::pair<torch::Tensor, torch::Tensor> ssimTerms(const torch::Tensor& x, const torch::Tensor& y) {
  const std::int64_t c = x.size(1);
  const torch::Tensor f = GaussianWindow::filterValid(torch::cat({x, y, x * y, x * x + y * y}, 1));
  return termsFromMeans(f.narrow(1, 0, c), f.narrow(1, c, c), f.narrow(1, 2 * c, c), f.narrow(1, 3 * c, c));
}

// Against a prepared target: the target's means are computed once, so only x, xy and x² are filtered.
std::pair<torch::Tensor, torch::Tensor> ssimTerms(const torch::Tensor& x, const MsSsimTarget& target, int scale) {
  const std::int64_t c = x.size(1);
  const auto s = static_cast<std::size_t>(scale);
  const torch::Tensor f = GaussianWindow::filterValid(torch::cat({x, x * target.image[s], x * x}, 1));
  return termsFromMeans(f.narrow(1, 0, c), target.mean[s], f.narrow(1, c, c), f.narrow(1, 2 * c, c) + target.mean_of_squares[s]);
}

// MS-SSIM of checked pairs (B, C, H, W) in `dtype`: (B). Terms below `floor` count as `floor`
// (0 for the metric, as tf's relu; above 0 for a loss, whose gradient x^w has none at 0).
torch::Tensor msSsimBlock(const torch::Tensor& a, const torch::Tensor& b, int scales, torch::ScalarType dtype = torch::kFloat64,
                          double floor = 0.0) {
  const std::vector<double> w = MsSsim::weights(scales);
  torch::Tensor x = (a.to(dtype) + 1.0) * 0.5, y = (b.to(dtype) + 1.0) * 0.5;
  torch::Tensor product;
  for (int s = 0; s < scales; ++s) {
    if (s > 0) {
      x = downsample(x);
      y = downsample(y);
    }
    const auto [cs, ssim] = ssimTerms(x, y);
    const torch::Tensor term = (s + 1 == scales ? ssim : cs).clamp_min(floor).pow(w[static_cast<std::size_t>(s)]);
    product = s == 0 ? term : product * term;
  }
  return product.mean(1);
}

}  // namespace

MsSsimTarget MsSsim::prepareTarget(const torch::Tensor& b, int scales) {
  TORCH_CHECK(b.dim() == 4 && b.size(0) == 1, "MS-SSIM: the target must be one image (1, C, H, W)");
  if (scales == 0) scales = scalesFor(b.size(2), b.size(3));
  TORCH_CHECK(scales >= 1 && scales <= kMaxScales && std::min(b.size(2), b.size(3)) >= minimumSize(scales),
              "MS-SSIM: the images are too small for ", scales, " scales");
  torch::NoGradGuard no_grad;
  MsSsimTarget target;
  target.scales = scales;
  const std::int64_t c = b.size(1);
  torch::Tensor y = (b.detach() + 1.0) * 0.5;
  for (int s = 0; s < scales; ++s) {
    if (s > 0) y = downsample(y);
    const torch::Tensor f = GaussianWindow::filterValid(torch::cat({y, y * y}, 1));
    target.image.push_back(y);
    target.mean.push_back(f.narrow(1, 0, c));
    target.mean_of_squares.push_back(f.narrow(1, c, c));
  }
  return target;
}

torch::Tensor MsSsim::differentiable(const torch::Tensor& a, const MsSsimTarget& target) {
  TORCH_CHECK(a.dim() == 4 && !target.image.empty() && a.sizes().slice(1) == target.image.front().sizes().slice(1) &&
                  a.scalar_type() == target.image.front().scalar_type(),
              "MS-SSIM: the images and the prepared target differ in shape or type");
  const std::vector<double> w = weights(target.scales);
  torch::Tensor x = (a + 1.0) * 0.5;
  torch::Tensor product;
  for (int s = 0; s < target.scales; ++s) {
    if (s > 0) x = downsample(x);
    const auto [cs, ssim] = ssimTerms(x, target, s);
    const torch::Tensor term = (s + 1 == target.scales ? ssim : cs).clamp_min(kLossFloor).pow(w[static_cast<std::size_t>(s)]);
    product = s == 0 ? term : product * term;
  }
  return product.mean(1);
}

int MsSsim::scalesFor(std::int64_t height, std::int64_t width) {
  std::int64_t size = std::min(height, width);
  if (size < kWindow) return 0;
  int scales = 1;
  while (scales < kMaxScales && (size + 1) / 2 >= kWindow) {
    size = (size + 1) / 2;
    ++scales;
  }
  return scales;
}

std::int64_t MsSsim::minimumSize(int scales) {
  std::int64_t size = kWindow;
  for (int s = 1; s < scales; ++s) size = 2 * size - 1;  // ⌈s/2⌉ ≥ 11 ⇔ s ≥ 21, and so on
  return size;
}

std::vector<double> MsSsim::weights(int scales) {
  scales = std::clamp(scales, 1, kMaxScales);
  if (scales == kMaxScales) return std::vector<double>(std::begin(kWeights), std::end(kWeights));  // as tf
  double sum = 0;
  for (int s = 0; s < scales; ++s) sum += kWeights[s];
  std::vector<double> out;
  for (int s = 0; s < scales; ++s) out.push_back(kWeights[s] / sum);
  return out;
}

Result<torch::Tensor> MsSsim::pairwise(const torch::Tensor& a, const torch::Tensor& b, int scales) {
  if (Status s = checkSsimImages(a, "the first images"); !s) return makeError(s.error());
  if (Status s = checkSsimImages(b, "the second images"); !s) return makeError(s.error());
  if (a.sizes() != b.sizes())
    return makeError("MS-SSIM: the image pairs differ in shape: " + shape(a) + " and " + shape(b));
  const Result<int> resolved = resolveScales(scales, a.size(2), a.size(3));
  if (!resolved) return makeError(resolved.error());
  try {
    torch::NoGradGuard no_grad;
    const std::int64_t n = a.size(0);
    torch::Tensor out = torch::empty({n}, torch::TensorOptions().dtype(torch::kFloat64));
    for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
      const std::int64_t count = std::min(kBlock, n - i0);
      out.narrow(0, i0, count).copy_(msSsimBlock(a.narrow(0, i0, count), b.narrow(0, i0, count), *resolved));
    }
    return out;
  } catch (const c10::Error& e) {  // out of memory
    return makeError(std::string("MS-SSIM: ") + e.what_without_backtrace());
  }
}

torch::Tensor MsSsim::differentiable(const torch::Tensor& a, const torch::Tensor& b, int scales) {
  TORCH_CHECK(a.dim() == 4 && a.sizes() == b.sizes(), "MS-SSIM: the pairs must be images of one shape");
  if (scales == 0) scales = scalesFor(a.size(2), a.size(3));
  TORCH_CHECK(scales >= 1 && scales <= kMaxScales && std::min(a.size(2), a.size(3)) >= minimumSize(scales),
              "MS-SSIM: the images are too small for ", scales, " scales");
  return msSsimBlock(a, b, scales, a.scalar_type(), kLossFloor);
}

torch::Tensor MsSsim::pairIndices(std::int64_t images, std::int64_t pairs, std::uint64_t seed) {
  const auto longs = torch::TensorOptions().dtype(torch::kLong);
  if (images < 2 || pairs < 1) return torch::empty({0, 2}, longs);
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const torch::Tensor first = torch::randint(0, images, {pairs}, generator, longs);
  torch::Tensor second = torch::randint(0, images - 1, {pairs}, generator, longs);
  second.add_((second >= first).to(torch::kLong));  // skips `first`: uniform over the others
  return torch::stack({first, second}, 1);
}

Result<MsSsimDiversity> MsSsim::diversity(const torch::Tensor& images, const MsSsimDiversityOptions& options) {
  if (Status s = checkSsimImages(images, "the images"); !s) return makeError(s.error());
  if (images.size(0) < 2)
    return makeError("MS-SSIM: the diversity needs at least 2 images, got " + std::to_string(images.size(0)));
  if (options.pairs < 1 || options.pairs > kMaxPairs)
    return makeError("MS-SSIM: the number of pairs must be between 1 and " + std::to_string(kMaxPairs) + ", got " +
                     std::to_string(options.pairs));
  try {
    torch::NoGradGuard no_grad;
    MsSsimDiversity result;
    result.scales = scalesFor(images.size(2), images.size(3));
    result.size = std::min(images.size(2), images.size(3));
    result.pairs = options.pairs;
    const torch::Tensor pairs = pairIndices(images.size(0), options.pairs, options.seed);
    torch::Tensor values = torch::empty({options.pairs}, torch::TensorOptions().dtype(torch::kFloat64));
    for (std::int64_t i0 = 0; i0 < options.pairs; i0 += kBlock) {
      if (options.should_stop && options.should_stop()) return makeError("MS-SSIM: cancelled");
      const std::int64_t count = std::min(kBlock, options.pairs - i0);
      const torch::Tensor rows = pairs.narrow(0, i0, count);
      values.narrow(0, i0, count)
          .copy_(msSsimBlock(images.index_select(0, rows.select(1, 0)), images.index_select(0, rows.select(1, 1)),
                             result.scales));
    }
    result.mean = values.mean().item<double>();
    result.stderr_mean = options.pairs > 1 ? values.std(/*unbiased=*/true).item<double>() /
                                                 std::sqrt(static_cast<double>(options.pairs))
                                           : 0.0;
    return result;
  } catch (const c10::Error& e) {
    return makeError(std::string("MS-SSIM: ") + e.what_without_backtrace());
  }
}

}  // namespace streetgan
